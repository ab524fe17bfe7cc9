//! Native cloud-config: user-data (and vendor-data) read into a validated
//! [`CloudConfig`], the changes vmcust applies planned as ordinary plan actions (so they are
//! atomic, rolled back on a failure and shown by `plan`), and everything else it was asked
//! for and does not do named, so the customization ends *degraded* rather than dropping
//! it silently (`docs/cloud-config.md`). Script parts are run by the boot stages
//! (`cloud_config::apply::scripts`); here they are previewed.

use serde::Serialize;

use crate::cloud_config::jinja::Vars;
use crate::cloud_config::read::Severity;
use crate::cloud_config::userdata::{self, UserData};
use crate::cloud_config::CloudConfig;
use crate::failure::{Failure, FailureKind};
use crate::model::HostName;
use crate::plan::accounts;
use crate::plan::Action;
use crate::root::Root;

/// What native cloud-config does for one instance.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NativeSummary {
    /// The user-data's parts, in order, and what each is.
    pub parts: Vec<String>,
    /// Whether vendor-data was merged under the user-data.
    pub vendor_data: bool,
    /// Users created or changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<String>,
    /// Groups created or changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// What the accounts planner left out and why (cloud-init's warnings), and script
    /// parts replaced by a later one of the same file name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What each module will do, and in which stage (nothing runs to show it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<String>,
    /// What was asked for and is not applied, each with its place and why: the
    /// customization ends degraded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<String>,
}

/// The plan actions and the summary.
#[derive(Debug, Clone, Default)]
pub struct Native {
    /// The changes, in order (accounts first: files may name their owners).
    pub actions: Vec<Action>,
    /// For `plan`, `show`, the log and the instance's record.
    pub summary: NativeSummary,
    /// What the document asks of the host keys (`ssh_deletekeys`, `ssh_genkeytypes`),
    /// which clone hygiene carries out.
    pub host_keys: Option<crate::cloud_config::modules::ssh_host_keys::HostKeyWish>,
}

/// The instance data of `g` on `root` (cloud-init's tree: `v1`, `ds.meta_data` with the
/// host facts): the Jinja variables of its user-data, and what the boot writes to
/// `/run/cloud-init/`.
pub fn instance_data(root: &Root, g: &crate::source::Gathered) -> serde_json::Value {
    let host = g
        .customization
        .identity
        .host_name
        .as_ref()
        .map(|h| h.as_str().to_string())
        .or_else(|| system_host_name(root));
    let meta = g.cloud_init_meta_data();
    crate::cloud_init::instance_data::build(
        root,
        &crate::cloud_init::instance_data::Inputs {
            meta_data: &meta,
            instance_id: g.instance_id().as_str(),
            host_name: host.as_deref(),
            source: g.origins.get("user-data").copied().unwrap_or("guestinfo"),
        },
    )
}

/// The root's `/etc/hostname`, if it names one.
pub fn system_host_name(root: &Root) -> Option<String> {
    root.read_text_capped(
        std::path::Path::new("/etc/hostname"),
        4096,
        "host name file",
    )
    .ok()
    .flatten()
    .map(|t| t.trim().to_string())
    .filter(|t| !t.is_empty())
}

/// Reads `user` (and `vendor`), Jinja templates rendered with `vars`, and plans what
/// vmcust applies of it on `root`. A document with an error is refused whole, naming
/// every problem's part, line and key. `host_name` is the customization's (the metadata's
/// `local-hostname`), which the host name modules use when the cloud-config names none,
/// as they do at boot.
pub fn plan_native(
    root: &Root,
    user: &[u8],
    vendor: Option<&[u8]>,
    host_name: Option<&HostName>,
    vars: &Vars,
) -> Result<Native, Failure> {
    let read =
        userdata::read_rendered(user, vendor, vars).map_err(|e| Failure::invalid(e.to_string()))?;
    refuse_errors(&read)?;
    let mut native = Native {
        summary: summary_of(&read),
        ..Native::default()
    };
    for w in read
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Warning)
    {
        let sep = if w.path.is_empty() { "" } else { ": " };
        let text = format!("{}{sep}{}", place(w.part, w.line, &w.path), w.message);
        tracing::warn!("{text}");
        native.summary.notes.push(text);
    }
    let cfg = &read.config;
    native.host_keys = Some(cfg.ssh_host_keys.clone()).filter(|w| !w.is_empty());
    // Always: without a `users` key the distro's default user is created, as cloud-init's
    // stock cloud.cfg (`users: [default]`) does.
    plan_accounts(root, cfg, &mut native)?;
    let facts =
        crate::cloud_config::apply::CcFacts::gather(root, cfg).map_err(|e| Failure::of(&e))?;
    for p in crate::cloud_config::apply::preview::preview(cfg, &facts, host_name, &read.scripts) {
        for line in &p.lines {
            native
                .summary
                .modules
                .push(format!("{} ({}): {line}", p.module, p.stage));
        }
    }
    let scripts = crate::cloud_config::apply::scripts::plan(&read.scripts, &cfg.runcmd);
    native.summary.notes.extend(scripts.notes);
    native.summary.not_applied.extend(not_applied(&read));
    native.summary.not_applied.extend(scripts.not_run);
    Ok(native)
}

fn refuse_errors(read: &UserData) -> Result<(), Failure> {
    let errors: Vec<String> = read
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .map(|p| format!("{}: {}", place(p.part, p.line, &p.path), p.message))
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    Err(Failure::invalid(format!(
        "the user-data's cloud-config is invalid (check it with `vmcust schema FILE`):\n{}",
        errors.join("\n")
    )))
}

/// `user-data part 1, line 4: users[0].shell`, or `vendor-data …`.
fn place(part: u16, line: u32, path: &str) -> String {
    let (which, part) = match part.checked_sub(userdata::VENDOR_PART) {
        Some(p) => ("vendor-data", p),
        None => ("user-data", part),
    };
    let path = if path.is_empty() { "" } else { path };
    format!("{which} part {part}, line {line}: {path}")
}

fn summary_of(read: &UserData) -> NativeSummary {
    NativeSummary {
        parts: read
            .parts
            .iter()
            .map(|p| {
                let name = p
                    .filename
                    .as_deref()
                    .map_or(String::new(), |f| format!(" {f}"));
                let jinja = if p.template {
                    " (rendered from a Jinja template)"
                } else {
                    ""
                };
                format!("part {}{name}: {}{jinja}", p.part, p.kind.content_type())
            })
            .collect(),
        vendor_data: read.vendor_applied,
        ..NativeSummary::default()
    }
}

fn plan_accounts(root: &Root, cfg: &CloudConfig, native: &mut Native) -> Result<(), Failure> {
    let req = crate::cloud_config::modules::accounts::request(cfg).map_err(|errors| {
        Failure::invalid(format!(
            "user-data: {}",
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ))
    })?;
    let facts = accounts::gather(root, &req).map_err(|e| Failure::of(&e))?;
    let plan = accounts::plan_accounts(&req, &facts)
        .map_err(|e| Failure::new(FailureKind::CannotApply, format!("user-data: {e}")))?;
    let checked = accounts::check::check(root, &plan.actions)
        .map_err(|e| Failure::new(FailureKind::CannotApply, format!("user-data: {e}")))?;
    native.summary.users = accounts::resolved_users(&req, &facts)
        .iter()
        .map(|u| u.name.to_string())
        .collect();
    native.summary.groups = req.groups.iter().map(|g| g.name.to_string()).collect();
    native.summary.notes.extend(plan.notes);
    native.summary.not_applied.extend(plan.not_applied);
    native.summary.notes.extend(checked);
    native.actions.extend(plan.actions);
    Ok(())
}

/// The unknown keys of the document, each with cloud-init's module or a did-you-mean.
fn not_applied(read: &UserData) -> Vec<String> {
    read.problems
        .iter()
        .filter(|p| p.severity == Severity::Unknown)
        .map(|p| format!("{}: {}", place(p.part, p.line, &p.path), p.message))
        .collect()
}
