//! Native cloud-config: user-data (and vendor-data) read into a validated
//! [`CloudConfig`], the changes vmcust applies planned as ordinary plan actions (so they are
//! atomic, rolled back on a failure and shown by `plan`), and everything else it was asked
//! for and does not do named, so the customization ends *degraded* rather than dropping
//! it silently (`docs/cloud-config.md`). Script parts are run by the boot stages
//! (`cloud_config::apply::scripts`); here they are previewed.

use serde::Serialize;

use crate::cloud_config::jinja::Vars;
use crate::cloud_config::read::Severity;
use crate::cloud_config::userdata::{self, ParsedUserData};
use crate::cloud_config::CloudConfig;
use crate::facts::{Current, Facts};
use crate::failure::{Failure, FailureKind};
use crate::model::HostName;
use crate::plan::accounts;
use crate::plan::Action;
use crate::root::Root;
use crate::settings::CloudConfigUnknown;

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
    /// The accounts as the instance's record keeps them (`plan` shows `users`/`groups`).
    #[serde(skip)]
    pub accounts: Vec<AccountDone>,
    /// The SSH keys installed, as (whose `authorized_keys`, the key line).
    #[serde(skip)]
    pub keys: Vec<(String, String)>,
}

/// A user or group the cloud-config creates or changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountDone {
    /// `user` or `group`.
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// It was not in the root's account files before.
    pub created: bool,
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
    /// `preserve_hostname: true`: the host keeps its name, the metadata's included (as
    /// cloud-init's `set_hostname` and `update_hostname` leave it).
    pub preserve_hostname: bool,
}

/// The instance data of `g` on `root` (cloud-init's tree: `v1`, `ds.meta_data` with the
/// host facts): the Jinja variables of its user-data, and what the boot writes to
/// `/run/cloud-init/`.
pub(crate) fn instance_data(root: &Root, g: &crate::source::SourceData) -> serde_json::Value {
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
pub(crate) fn system_host_name(root: &Root) -> Option<String> {
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
/// vmcust applies of it on `root` ([`read_native`], the facts its modules ask for, then
/// [`plan_read`]).
pub fn plan_native(
    root: &Root,
    user: &[u8],
    vendor: Option<&[u8]>,
    host_name: Option<&HostName>,
    vars: &Vars,
    unknown: CloudConfigUnknown,
) -> Result<Native, Failure> {
    let read = read_native(user, vendor, vars, unknown)?;
    let facts = Facts::gather(root, &crate::cloud_config::wanted::wanted(&read.config))
        .map_err(|e| Failure::of(&e))?;
    plan_read(root, &read, host_name, &facts)
}

/// Reads `user` (and `vendor`), Jinja templates rendered with `vars`. A document with an
/// error is refused whole, naming every problem's part, line and key; so is one with
/// something vmcust does not apply when `unknown` is [`CloudConfigUnknown::Refuse`] (else
/// that is left out and named in `not_applied` by [`plan_read`], and the customization
/// ends degraded).
pub(crate) fn read_native(
    user: &[u8],
    vendor: Option<&[u8]>,
    vars: &Vars,
    unknown: CloudConfigUnknown,
) -> Result<ParsedUserData, Failure> {
    let read =
        userdata::read_rendered(user, vendor, vars).map_err(|e| Failure::invalid(e.to_string()))?;
    refuse_errors(&read, unknown)?;
    Ok(read)
}

/// Plans what vmcust applies of `read` on `root`, whose facts are `facts` (gathered for at
/// least what `cloud_config::wanted::wanted` asks for the document). `host_name` is the
/// customization's (the metadata's `local-hostname`), which the host name modules use
/// when the cloud-config names none, as they do at boot.
pub(crate) fn plan_read(
    root: &Root,
    read: &ParsedUserData,
    host_name: Option<&HostName>,
    facts: &Facts,
) -> Result<Native, Failure> {
    let mut native = Native {
        summary: summary_of(read),
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
    native.preserve_hostname = cfg.preserve_hostname;
    // Always: without a `users` key the distro's default user is created, as cloud-init's
    // stock cloud.cfg (`users: [default]`) does.
    plan_accounts(root, cfg, facts, &mut native)?;
    // The modules run after the accounts are applied: they see the account files as the
    // accounts' actions leave them (a write_files owner this document creates exists).
    let facts = with_planned_accounts(facts.clone(), &native.actions);
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
    native.summary.not_applied.extend(not_applied(read));
    native.summary.not_applied.extend(scripts.not_run);
    Ok(native)
}

/// `facts` with `/etc/passwd` and `/etc/group` as `actions` write them.
fn with_planned_accounts(mut facts: Facts, actions: &[Action]) -> Facts {
    for a in actions {
        if let Action::WriteFile {
            path,
            contents,
            owner: crate::plan::FileOwner::Kept,
            ..
        } = a
        {
            let text = || String::from_utf8(contents.bytes().to_vec()).ok();
            if path.as_path() == std::path::Path::new("/etc/passwd") {
                facts.passwd = text().or(facts.passwd.take());
            } else if path.as_path() == std::path::Path::new("/etc/group") {
                facts.group = text().or(facts.group.take());
            } else if let Some(now) = path.to_str().and_then(|p| facts.files.get_mut(p)) {
                // A file a module reads that the accounts write first (sshd's
                // configuration, which ssh_pwauth changes).
                *now = Current::File(contents.bytes().to_vec());
            }
        }
    }
    facts
}

fn refuse_errors(read: &ParsedUserData, unknown: CloudConfigUnknown) -> Result<(), Failure> {
    let worst = match unknown {
        CloudConfigUnknown::Degrade => Severity::Error,
        CloudConfigUnknown::Refuse => Severity::Unknown,
    };
    let errors: Vec<String> = read
        .problems
        .iter()
        .filter(|p| p.severity >= worst)
        .map(|p| format!("{}: {}", place(p.part, p.line, &p.path), p.message))
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    let only_unknown = read.problems.iter().all(|p| p.severity != Severity::Error);
    let why = if only_unknown {
        "the user-data's cloud-config asks for what vmcust does not apply, and [user-data] cloud_config_unknown = refuse (check it with `vmcust schema FILE`)"
    } else {
        "the user-data's cloud-config is invalid (check it with `vmcust schema FILE`)"
    };
    Err(Failure::invalid(format!("{why}:\n{}", errors.join("\n"))))
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

fn summary_of(read: &ParsedUserData) -> NativeSummary {
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

/// Plans the accounts of `cfg` on the databases `facts` holds (gathered for the request
/// `cloud_config::wanted::wanted` makes of the same document).
fn plan_accounts(
    root: &Root,
    cfg: &CloudConfig,
    facts: &Facts,
    native: &mut Native,
) -> Result<(), Failure> {
    let req = crate::cloud_config::modules::accounts::request(cfg)
        .map_err(|e| Failure::invalid(format!("user-data: {e}")))?;
    let facts = facts.accounts_db.as_ref().ok_or_else(|| {
        Failure::new(
            FailureKind::Other,
            "the facts were gathered without the accounts' databases the user-data needs \
             (a bug in vmcust)"
                .to_string(),
        )
    })?;
    let plan = accounts::plan_accounts(&req, facts)
        .map_err(|e| Failure::new(FailureKind::CannotApply, format!("user-data: {e}")))?;
    let checked = accounts::check::check(root, &plan.actions)
        .map_err(|e| Failure::new(FailureKind::CannotApply, format!("user-data: {e}")))?;
    let resolved = accounts::resolved_users(&req, facts);
    native.summary.users = resolved.iter().map(|u| u.name.to_string()).collect();
    record_accounts(&req, facts, &resolved, &mut native.summary);
    native.summary.groups = req.groups.iter().map(|g| g.name.to_string()).collect();
    native.summary.notes.extend(plan.notes);
    native.summary.not_applied.extend(plan.not_applied);
    native.summary.notes.extend(checked);
    native.actions.extend(plan.actions);
    Ok(())
}

/// The users and groups `req` creates or changes, and whose keys it installs, for the
/// instance's record.
fn record_accounts(
    req: &accounts::request::AccountsRequest,
    facts: &crate::facts::accounts::AccountDbFacts,
    users: &[accounts::request::UserRequest],
    summary: &mut NativeSummary,
) {
    use crate::facts::accounts::DbFile;
    use accounts::dbfile::DbEdit;
    let had = |db: &Option<DbFile>, file: &'static str, name: &str| {
        db.as_ref()
            .is_some_and(|d| DbEdit::new(file, &d.contents).has(name))
    };
    let mut groups: Vec<String> = req.groups.iter().map(|g| g.name.to_string()).collect();
    for u in users {
        summary.accounts.push(AccountDone {
            kind: "user",
            name: u.name.to_string(),
            created: !had(&facts.passwd, "/etc/passwd", u.name.as_str()),
        });
        let own = (!u.no_user_group && u.primary_group.is_none()).then(|| u.name.to_string());
        for g in u.groups.iter().map(ToString::to_string).chain(own) {
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        for k in &u.ssh_authorized_keys {
            summary
                .keys
                .push((u.name.to_string(), k.as_str().to_string()));
        }
    }
    for g in groups {
        let created = !had(&facts.group, "/etc/group", &g);
        // A user's group that was there already is not this document's change.
        if created || req.groups.iter().any(|r| r.name.as_str() == g) {
            summary.accounts.push(AccountDone {
                kind: "group",
                name: g,
                created,
            });
        }
    }
    // The top-level keys: the default user's (last of the resolved users) and root's.
    let default = req
        .users
        .iter()
        .any(|u| matches!(u, accounts::request::UserEntry::Default))
        .then(|| users.last().map(|u| u.name.to_string()))
        .flatten();
    for k in &req.ssh_authorized_keys {
        if let Some(d) = &default {
            summary.keys.push((d.clone(), k.as_str().to_string()));
        }
        let root = if req.disable_root {
            "root (login refused: disable_root)"
        } else {
            "root"
        };
        summary
            .keys
            .push((root.to_string(), k.as_str().to_string()));
    }
}

/// The unknown keys of the document, each with cloud-init's module or a did-you-mean.
fn not_applied(read: &ParsedUserData) -> Vec<String> {
    read.problems
        .iter()
        .filter(|p| p.severity == Severity::Unknown)
        .map(|p| format!("{}: {}", place(p.part, p.line, &p.path), p.message))
        .collect()
}
