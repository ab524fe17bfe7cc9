//! `vmcust plan`: what applying a customization to a root would change.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;

use super::input::{load, InputArgs};
use super::Format;
use crate::apply::{dry_run, Change};
use crate::facts::RootFacts;
use crate::plan::network::Renderer;
use crate::plan::{plan, Action, Plan, PlanOptions};
use crate::root::Root;

/// Arguments of `vmcust plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Root directory of the system to customize (`/` on the VM itself).
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Where the customization comes from.
    #[command(flatten)]
    pub input: InputArgs,
    /// Network stack to write configuration for (default: detected from the root).
    #[arg(long, value_enum)]
    pub renderer: Option<Renderer>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// One planned action with what it would change, for printing.
#[derive(Serialize)]
pub struct Step<'a> {
    /// What applying it does (or did) to the root.
    pub change: Change,
    /// The action.
    #[serde(flatten)]
    pub action: &'a Action,
}

/// Loads the input, opens the root and plans; shared by `plan` and `apply`.
pub fn load_and_plan(
    root: &std::path::Path,
    input: &InputArgs,
    renderer: Option<Renderer>,
) -> Result<(Root, Plan)> {
    let loaded = load(input)?;
    let c = &loaded.merged.customization;
    let root = Root::new(root).with_context(|| format!("opening root {}", root.display()))?;
    let facts = RootFacts::gather(&root, c)?;
    let opts = PlanOptions { renderer };
    let plan = plan(c, &facts, &opts)
        .with_context(|| format!("planning the customization for {}", root.path().display()))?;
    Ok((root, plan))
}

/// Runs `vmcust plan`.
pub fn run(args: PlanArgs) -> Result<()> {
    let (root, plan) = load_and_plan(&args.root, &args.input, args.renderer)?;
    let changes = dry_run(&root, &plan)?;
    print_steps(&plan, changes, args.format, true)
}

/// Prints each action with what it changes (`planned`: would change) in `format`.
pub fn print_steps(plan: &Plan, changes: Vec<Change>, format: Format, planned: bool) -> Result<()> {
    let steps: Vec<Step> = changes
        .into_iter()
        .zip(&plan.actions)
        .map(|(change, action)| Step { change, action })
        .collect();
    match format {
        Format::Text => print!("{}", render_text(&steps, planned)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&steps)?),
        Format::Yaml => print!("{}", crate::yaml::to_string(&steps)?),
    }
    Ok(())
}

/// The steps for people: one line per action, contents indented below changed files.
pub fn render_text(steps: &[Step], planned: bool) -> String {
    let mut out = String::new();
    for step in steps {
        let verb = match (step.change, planned) {
            (Change::Created, true) => "create",
            (Change::Updated, true) => "update",
            (Change::Created, false) => "created",
            (Change::Updated, false) => "updated",
            (Change::Unchanged, _) => "unchanged",
        };
        let a = step.action;
        let _ = match a {
            Action::WriteFile { path, mode, .. } | Action::WriteUserFile { path, mode, .. } => {
                writeln!(
                    out,
                    "{verb:<9} {} ({mode:04o}, {})",
                    path.display(),
                    a.purpose()
                )
            }
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
        };
        if let (true, Action::WriteFile { contents, .. }) =
            (planned && step.change != Change::Unchanged, a)
        {
            for line in contents.display().lines() {
                let _ = writeln!(out, "    | {line}");
            }
        }
    }
    let changed = steps
        .iter()
        .filter(|s| s.change != Change::Unchanged)
        .count();
    let same = steps.len() - changed;
    let _ = match (changed, planned) {
        (0, _) => writeln!(
            out,
            "nothing to change: the root already matches the customization"
        ),
        (_, true) => writeln!(out, "{changed} to change, {same} already as planned"),
        (_, false) => writeln!(out, "{changed} changed, {same} unchanged"),
    };
    out
}
