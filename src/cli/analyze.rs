//! `vmcust analyze show|blame`: where boot time went, stage by stage and step by step,
//! for the last boots vmcust recorded (`/var/lib/vmcust/boot-times.json`), like
//! `cloud-init analyze show` and `blame`.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};
use serde::Serialize;

use super::Format;
use crate::root::Root;
use crate::state::rfc3339;
use crate::timings::{read, Boot, BootTimes};

/// Show each boot stage's and step's time for the last boots.
#[derive(Debug, Args)]
pub(crate) struct AnalyzeArgs {
    /// What to show.
    #[command(subcommand)]
    pub what: AnalyzeCommand,
}

/// The views of the recorded times.
#[derive(Debug, Subcommand)]
pub(crate) enum AnalyzeCommand {
    /// Every recorded boot: its stages and their steps in order, with times.
    Show(ViewArgs),
    /// The steps of the last boot (or all boots), slowest first.
    Blame(BlameArgs),
}

/// Options of `analyze show`.
#[derive(Debug, Args)]
pub(crate) struct ViewArgs {
    /// Root directory of the system.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Options of `analyze blame`.
#[derive(Debug, Args)]
pub(crate) struct BlameArgs {
    /// Root directory of the system.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Every recorded boot, not only the last.
    #[arg(long)]
    pub all: bool,
}

/// Runs `vmcust analyze`.
pub(super) fn run(args: AnalyzeArgs) -> Result<()> {
    let out = match args.what {
        AnalyzeCommand::Show(a) => show(&read(&open(&a.root)?)?, a.format)?,
        AnalyzeCommand::Blame(a) => blame(&read(&open(&a.root)?)?, a.all, a.format)?,
    };
    print!("{out}");
    Ok(())
}

fn open(dir: &std::path::Path) -> Result<Root> {
    Root::new(dir).with_context(|| format!("opening root {}", dir.display()))
}

const NOTHING: &str = "no boot times recorded: no boot stage has run on this root since \
                       vmcust began recording them\n";

/// `analyze show`: each boot, oldest first, each stage with its steps in order.
pub(super) fn show(times: &BootTimes, format: Format) -> Result<String> {
    match format {
        Format::Json => return Ok(serde_json::to_string_pretty(times)? + "\n"),
        Format::Yaml => return Ok(crate::yaml::to_string(times)?),
        Format::Text => {}
    }
    if times.boots.is_empty() {
        return Ok(NOTHING.to_string());
    }
    let mut s = String::new();
    let n = times.boots.len();
    for (i, boot) in times.boots.iter().enumerate() {
        let _ = writeln!(s, "-- boot {} of {n}{} --", i + 1, boot_label(boot));
        for st in &boot.stages {
            let _ = writeln!(
                s,
                "stage {} started {}: {} in {:.3} s",
                st.stage,
                rfc3339(st.started),
                st.ending,
                st.ms / 1000.0
            );
            for step in &st.steps {
                let _ = writeln!(
                    s,
                    "  |`-> {} @{:09.3}s +{:.5}s",
                    step.step,
                    step.at_ms / 1000.0,
                    step.ms / 1000.0
                );
            }
            if st.steps_dropped > 0 {
                let _ = writeln!(s, "  ({} more steps not kept)", st.steps_dropped);
            }
        }
    }
    let _ = writeln!(
        s,
        "{n} boot(s) recorded (at most {})",
        crate::timings::MAX_BOOTS
    );
    Ok(s)
}

fn boot_label(boot: &Boot) -> String {
    boot.boot_id
        .as_ref()
        .map_or_else(String::new, |id| format!(" (boot id {id})"))
}

/// One line of `blame`.
#[derive(Serialize)]
struct Blamed<'a> {
    ms: f64,
    stage: &'a str,
    step: &'a str,
}

/// `analyze blame`: the steps of the last boot (every boot with `all`), slowest first.
pub(super) fn blame(times: &BootTimes, all: bool, format: Format) -> Result<String> {
    let boots: &[Boot] = if all {
        &times.boots
    } else {
        times.boots.last().map_or(&[], std::slice::from_ref)
    };
    let mut lines: Vec<Blamed> = boots
        .iter()
        .flat_map(|b| &b.stages)
        .flat_map(|st| {
            st.steps.iter().map(|step| Blamed {
                ms: step.ms,
                stage: &st.stage,
                step: &step.step,
            })
        })
        .collect();
    lines.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    match format {
        Format::Json => return Ok(serde_json::to_string_pretty(&lines)? + "\n"),
        Format::Yaml => return Ok(crate::yaml::to_string(&lines)?),
        Format::Text => {}
    }
    if times.boots.is_empty() {
        return Ok(NOTHING.to_string());
    }
    let mut s = String::new();
    for l in &lines {
        let _ = writeln!(s, "{:>12.5}s ({}) {}", l.ms / 1000.0, l.stage, l.step);
    }
    let _ = writeln!(
        s,
        "{} step(s) of {}",
        lines.len(),
        if all {
            "every recorded boot"
        } else {
            "the last boot"
        }
    );
    Ok(s)
}
