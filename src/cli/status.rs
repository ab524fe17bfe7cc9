//! `vmcust status`: the run's state and every customized instance's outcome, with
//! cloud-init's exit codes (0 ok, 1 error, 2 recoverable errors such as settings problems).

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args;
use serde::Serialize;

use super::Format;
use crate::state::{read_results, InstanceResult};

use super::stand_in::{exit_code, wait_for_status};
use crate::root::Root;
use crate::state::{rfc3339, RunState, RunStatus};

/// Show the run's state and each customized instance's outcome.
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Root directory of the customized system.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Wait until no stage is starting or running (at most the stages' worst case by the
    /// settings), then report. Off VMware, with no run recorded, it does not wait.
    #[arg(long, short = 'w')]
    pub wait: bool,
}

#[derive(Serialize)]
struct Status {
    /// `ok`, `error` or `degraded`: what the exit code says.
    health: &'static str,
    /// No stage has ever run on this root and no instance was customized.
    never_ran: bool,
    /// The run's state (`disabled` off VMware, where no stage runs).
    state: RunState,
    /// The status the last stage wrote; absent when no stage wrote one.
    run: Option<RunStatus>,
    /// `run.updated` as RFC 3339.
    #[serde(skip_serializing_if = "Option::is_none")]
    updated: Option<String>,
    /// Settings problems: each one's setting kept its default.
    settings_warnings: Vec<String>,
    instances: Vec<InstanceResult>,
    /// What each instance's customization left out, and why (its `applied.json`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    skipped: Vec<Skipped>,
    /// A new instance the boot refused on this VM (`docs/security.md`): degraded.
    #[serde(skip_serializing_if = "Option::is_none")]
    refused: Option<crate::boot::vm_identity::Refusal>,
}

/// Something an instance's customization left out.
#[derive(Serialize)]
struct Skipped {
    /// The instance.
    instance_id: String,
    /// What was not done.
    what: String,
    /// Why, and what to change to have it done.
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<String>,
}

/// Runs `vmcust status` and returns its exit code: 1 when the run or the newest
/// customization failed, 2 when the settings file has problems or the boot refused a new
/// instance on this VM, else 0.
pub(super) fn run(args: StatusArgs) -> Result<u8> {
    let root =
        Root::new(&args.root).with_context(|| format!("opening root {}", args.root.display()))?;
    let (out, code) = report(&root, args.format, args.wait)?;
    print!("{out}");
    Ok(code)
}

/// The status of `root` in `format`, and the exit code it means (also for
/// `collect-logs`).
pub(super) fn report(root: &Root, format: Format, wait: bool) -> Result<(String, u8)> {
    // Off VMware the units never start (ConditionVirtualization), so no status will come:
    // waiting would only run into the bound.
    let wait = wait
        && (crate::state::read_status(root)?.is_some()
            || crate::host::platform::Platform::detect(root.path()).is_vmware());
    let (settings, warnings) = crate::settings::load(root);
    let run = wait_for_status(root, &settings, wait)?;
    let instances = read_results(root)?;
    let settings_warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    let newest_failed = instances
        .iter()
        .max_by_key(|i| i.finished)
        .is_some_and(|i| i.outcome != "done");
    let state = match &run {
        _ if newest_failed => RunState::Error,
        Some(r) => r.state,
        // No stage ran this boot, but earlier boots did their work.
        None if !instances.is_empty() => RunState::Done,
        None => RunState::NotStarted,
    };
    let refused = crate::boot::vm_identity::read_refusal(root);
    let degraded = instances
        .iter()
        .max_by_key(|i| i.finished)
        .is_some_and(|i| !i.degraded.is_empty());
    let code = exit_code(
        state,
        !settings_warnings.is_empty() || refused.is_some() || degraded,
    );
    // A status vmcust made up (off VMware, no stage ever wrote one) has no time: no
    // stage ever ran on this root, and saying 1970-01-01 would suggest one did.
    let (run, made_up_state) = match run {
        Some(r) if r.updated == 0 => (None, Some(r.state)),
        other => (other, None),
    };
    let never_ran = run.is_none() && instances.is_empty();
    let skipped = instances
        .iter()
        .flat_map(|i| {
            let record = crate::applied::read(root, &i.instance_id.file_name())
                .ok()
                .flatten();
            record
                .map(|a| a.left_out())
                .unwrap_or_default()
                .into_iter()
                .map(|(what, why)| Skipped {
                    instance_id: i.instance_id.to_string(),
                    what,
                    why,
                })
        })
        .collect();
    let status = Status {
        health: match code {
            0 => "ok",
            1 => "error",
            _ => "degraded",
        },
        never_ran,
        state: run
            .as_ref()
            .map_or(made_up_state.unwrap_or(state), |r| r.state),
        updated: run.as_ref().map(|r| rfc3339(r.updated)),
        run,
        settings_warnings,
        instances,
        skipped,
        refused,
    };
    let out = match format {
        Format::Json => serde_json::to_string_pretty(&status)? + "\n",
        Format::Yaml => crate::yaml::to_string(&status)?,
        Format::Text => text(&status),
    };
    Ok((out, code))
}

/// An instance's outcome in words: `done (code 0)`, or `failed: <the reason>` with the code
/// sent to vCenter only when one was (a failure that sent none has code 0, which would read
/// as success).
pub(crate) fn outcome_words(r: &crate::state::InstanceResult) -> String {
    if r.outcome != "failed" {
        return format!("{} (code {})", r.outcome, r.code);
    }
    let why = r
        .error
        .as_deref()
        .and_then(|e| e.lines().next())
        .filter(|e| !e.trim().is_empty())
        .unwrap_or("no reason was recorded");
    match r.code {
        0 => format!("failed: {why}"),
        code => format!("failed: {why} (code {code} sent to vCenter)"),
    }
}

fn text(status: &Status) -> String {
    let mut s = String::new();
    match &status.run {
        Some(r) => {
            s += &format!(
                "run: {} (stage {}, updated {})\n",
                r.state.word(),
                r.stage.as_deref().unwrap_or("-"),
                rfc3339(r.updated)
            );
            if let Some(e) = &r.last_error {
                s += &format!("last error: {e}\n");
            }
        }
        None if status.never_ran => {
            s += &format!("run: never ran on this root ({})\n", status.state.word());
        }
        None => s += "run: not run this boot\n",
    }
    for w in &status.settings_warnings {
        s += &format!("settings: {w}\n");
    }
    if status.instances.is_empty() {
        s += "no instance has been customized\n";
    }
    for i in &status.instances {
        s += &format!(
            "instance {}: {} at {}, steps: {}\n",
            i.instance_id,
            outcome_words(i),
            rfc3339(i.finished),
            if i.steps.is_empty() {
                "-".to_string()
            } else {
                i.steps.join(", ")
            }
        );
        // The reason's first line is in the outcome; the rest of it below.
        if let Some(e) = i.error.as_deref().filter(|_| i.outcome == "failed") {
            for line in e.lines().skip(1) {
                s += &format!("  {line}\n");
            }
        } else if let Some(e) = &i.error {
            s += &format!("  error: {e}\n");
        }
        for d in &i.degraded {
            s += &format!("  degraded: {d}\n");
        }
        let id = i.instance_id.as_str();
        for k in status.skipped.iter().filter(|k| k.instance_id == id) {
            match &k.why {
                Some(why) => s += &format!("  skipped: {}: {why}\n", k.what),
                None => s += &format!("  skipped: {}\n", k.what),
            }
        }
    }
    if let Some(r) = &status.refused {
        s += &format!("trust: {r}\n");
    }
    s += &format!("health: {}\n", status.health);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::InstanceResult;

    /// A failure says why, and a code only when one went to vCenter.
    #[test]
    fn outcomes_in_words() {
        let result = |outcome: &str, code, error: Option<&str>| InstanceResult {
            instance_id: crate::model::InstanceId::parse("i-1").unwrap(),
            outcome: outcome.into(),
            code,
            error: error.map(String::from),
            finished: 0,
            steps: Vec::new(),
            origins: Default::default(),
            degraded: Vec::new(),
            user_data: None,
            nothing_changed: false,
        };
        for (r, words) in [
            (result("done", 0, None), "done (code 0)"),
            (
                result("failed", 0, Some("user-data: bad key\nmore")),
                "failed: user-data: bad key",
            ),
            (
                result("failed", 100, Some("cust.cfg: line 2: bad")),
                "failed: cust.cfg: line 2: bad (code 100 sent to vCenter)",
            ),
            (result("failed", 0, None), "failed: no reason was recorded"),
        ] {
            assert_eq!(outcome_words(&r), words);
        }
    }
}
