//! `vmcust plan`: everything `vmcust run` would do to a root — the files, the live host
//! name, and the boot steps around them (marker, scripts, user-data, redaction) — with
//! nothing written.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

use super::input::{load, InputArgs};
use super::Format;
use crate::apply::{dry_run, Change};
use crate::engine::customize::{prepare, BootSteps, Options, Prepared, UserDataDisposition};
use crate::failure::Failure;
use crate::plan::network::Renderer;
use crate::plan::{Action, FileOwner};
use crate::root::Root;

/// Print what applying a customization to a root would change.
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The customization spec (cust.cfg); the same as --imc.
    #[arg(value_name = "FILE", conflicts_with = "imc")]
    pub file: Option<PathBuf>,
    /// Root directory of the system to customize (`/` on the VM itself).
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Where the customization comes from.
    #[command(flatten)]
    pub input: InputArgs,
    /// Network stack to write configuration for (default: `[network] renderer`, else the
    /// stack detected in the root; a root with none is an error).
    #[arg(long, value_enum)]
    pub renderer: Option<Renderer>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// One planned action with what it would change, for printing.
#[derive(Serialize)]
pub(super) struct Step<'a> {
    /// What applying it does (or did) to the root.
    pub change: Change,
    /// The action.
    #[serde(flatten)]
    pub action: &'a Action,
}

/// The whole output of `plan` and `apply` in structured form.
#[derive(Serialize)]
struct Report<'a> {
    instance_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    renderer: Option<Renderer>,
    /// Why that renderer (detected, or named and by whom).
    #[serde(skip_serializing_if = "Option::is_none")]
    renderer_reason: Option<&'a str>,
    warnings: &'a [String],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    network_matches: &'a [crate::plan::network::resolve::Resolution],
    actions: Vec<Step<'a>>,
    boot: &'a BootSteps,
}

/// Opens the root, gathers the input and prepares the job: shared by `plan` and `apply`.
pub(super) fn load_and_prepare(
    root: &std::path::Path,
    file: Option<PathBuf>,
    mut input: InputArgs,
    renderer: Option<Renderer>,
) -> Result<(Root, Prepared, Vec<String>)> {
    if let Some(f) = file {
        input.imc = Some(f);
    }
    let root = Root::new(root).with_context(|| format!("opening root {}", root.display()))?;
    // The root's own settings file, as at boot (renderer, SSH user).
    let (settings, settings_warnings) = crate::settings::load(&root);
    for w in &settings_warnings {
        tracing::warn!("{w}");
    }
    let loaded = load(&input, Some(&root))?;
    let opts = Options::from_settings(&settings, renderer);
    // The failure keeps its kind (an unreadable root file is I/O here as at boot).
    let prepared = prepare(&root, &loaded.gathered, opts).map_err(|e| {
        let f = Failure::from(e);
        Failure::new(
            f.kind,
            format!(
                "planning the customization for {}: {}\nnothing was changed",
                root.path().display(),
                f.reason
            ),
        )
    })?;
    Ok((root, prepared, loaded.gathered.warnings))
}

/// Runs `vmcust plan`.
pub(super) fn run(args: PlanArgs) -> Result<()> {
    let (root, prepared, warnings) =
        load_and_prepare(&args.root, args.file, args.input, args.renderer)?;
    let changes = dry_run(&root, &prepared.plan)?;
    print_report(&prepared, &warnings, changes, args.format, true)
}

/// Prints each action with what it changes (`planned`: would change), then the boot
/// steps, in `format`.
pub(super) fn print_report(
    prepared: &Prepared,
    warnings: &[String],
    changes: Vec<Change>,
    format: Format,
    planned: bool,
) -> Result<()> {
    let steps: Vec<Step> = changes
        .into_iter()
        .zip(&prepared.plan.actions)
        .map(|(change, action)| Step { change, action })
        .collect();
    let report = Report {
        instance_id: prepared
            .steps
            .instance_id
            .as_ref()
            .map(|i| i.to_string())
            .unwrap_or_default(),
        renderer: prepared.renderer.as_ref().map(|c| c.renderer),
        renderer_reason: prepared.renderer.as_ref().map(|c| c.reason.as_str()),
        warnings,
        network_matches: &prepared.network_matches,
        actions: steps,
        boot: &prepared.steps,
    };
    match format {
        Format::Text => {
            if let Some(c) = &prepared.renderer {
                println!("network   renderer {} ({})", c.renderer.name(), c.reason);
            }
            for m in &prepared.network_matches {
                println!("network   {}", m.line());
            }
            for v in prepared.customization.network.iter().flat_map(|n| &n.vlans) {
                println!(
                    "network   vlan {}: id {} on ethernets.{}",
                    v.name, v.vlan_id, v.link_entry
                );
            }
            print!("{}", render_text(&report.actions, &prepared.steps, planned))
        }
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Yaml => print!("{}", crate::yaml::to_string(&report)?),
    }
    Ok(())
}

/// The steps for people: one line per action, contents indented below changed files,
/// then what the boot stages do around them.
pub(super) fn render_text(steps: &[Step], boot: &BootSteps, planned: bool) -> String {
    let mut out = String::new();
    for step in steps {
        let verb = step.change.word(planned);
        let a = step.action;
        let _ = match a {
            Action::WriteFile { path, mode, .. } => {
                writeln!(
                    out,
                    "{verb:<9} {} ({mode:04o}, {})",
                    path.display(),
                    a.purpose()
                )
            }
            Action::MakeDir {
                path,
                mode,
                uid,
                gid,
                ..
            } => writeln!(
                out,
                "{verb:<9} {}/ ({mode:04o} {uid}:{gid}, {})",
                path.display(),
                a.purpose()
            ),
            Action::Symlink { path, target, .. } => writeln!(
                out,
                "{verb:<9} {} -> {} ({})",
                path.display(),
                target.display(),
                a.purpose()
            ),
            Action::Rename { from, to, .. } => writeln!(
                out,
                "{verb:<9} {} moved to {} ({})",
                from.display(),
                to.display(),
                a.purpose()
            ),
            Action::SetHostname { name } => {
                writeln!(out, "{verb:<9} running host name {name} ({})", a.purpose())
            }
        };
        // Contents are shown for root's files; a file written for a user (its keys, a
        // skeleton file, write_files with an owner) is listed by name only.
        if let (
            true,
            Action::WriteFile {
                contents,
                owner: FileOwner::Kept,
                ..
            },
        ) = (
            planned && !matches!(step.change, Change::Unchanged | Change::Skipped),
            a,
        ) {
            for line in contents.display().lines() {
                let _ = writeln!(out, "    | {line}");
            }
        }
    }
    let changed = steps
        .iter()
        .filter(|s| !matches!(s.change, Change::Unchanged | Change::Skipped))
        .count();
    let same = steps
        .iter()
        .filter(|s| s.change == Change::Unchanged)
        .count();
    let _ = match (changed, planned) {
        (0, _) => writeln!(
            out,
            "nothing to change: the root already matches the customization"
        ),
        (_, true) => writeln!(out, "{changed} to change, {same} already as planned"),
        (_, false) => writeln!(out, "{changed} changed, {same} unchanged"),
    };
    out.push_str(&boot_text(boot));
    out
}

/// The boot steps for people, one line each.
fn boot_text(b: &BootSteps) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str("at boot:  ");
        out.push_str(&s);
        out.push('\n');
    };
    if let Some(m) = &b.marker {
        line(if m.new {
            format!(
                "marker {} is new: password and custom script apply; the marker is written last",
                m.id
            )
        } else {
            format!(
                "marker {} was used before: password and custom script are left out",
                m.id
            )
        });
    }
    if let Some(s) = &b.pre_script {
        line(format!("run custom script {s} with precustomization before the files are written (if tools.conf allows scripts)"));
    }
    if let Some(s) = &b.post_script {
        line(format!(
            "run custom script {s} with postcustomization in the late stage"
        ));
    }
    if let Some(u) = &b.user_data {
        line(match &u.disposition {
            UserDataDisposition::CloudInitSeed => format!(
                "user-data ({} bytes from {}) handed to cloud-init as a NoCloud seed",
                u.bytes, u.from
            ),
            UserDataDisposition::RunScript => format!(
                "user-data ({} bytes from {}) run once as a #! script in the late stage",
                u.bytes, u.from
            ),
            UserDataDisposition::Rejected(why) => format!("user-data not run: {why}"),
            UserDataDisposition::Native => format!(
                "user-data ({} bytes from {}) applied by vmcust: its accounts in the files above, its modules below",
                u.bytes, u.from
            ),
        });
        if let Some(n) = &u.native {
            for part in &n.parts {
                line(format!("user-data {part}"));
            }
            if !n.users.is_empty() {
                line(format!("cloud-config users: {}", n.users.join(", ")));
            }
            if !n.groups.is_empty() {
                line(format!("cloud-config groups: {}", n.groups.join(", ")));
            }
            for note in &n.notes {
                line(format!("cloud-config note: {note}"));
            }
            for m in &n.modules {
                line(format!("cloud-config {m}"));
            }
        }
    }

    if let Some(h) = &b.hygiene {
        line(h.describe());
    }
    if let Some(r) = &b.network_reload {
        line(r.describe());
    }
    if !b.redact.is_empty() {
        line(format!(
            "clear guestinfo keys {} on the host once applied",
            b.redact.join(", ")
        ));
    }
    for s in &b.skipped {
        out.push_str(&format!("skipped:  {}: {}\n", s.action, s.reason));
    }
    for d in &b.degraded {
        out.push_str(&format!("not applied: {d}\n"));
    }
    out
}
