//! Each stage's start and end recorded for every status surface: vmcust's run status
//! (`vmcust status`, the stand-in's `cloud-init status`) and, where no real cloud-init is
//! installed, cloud-init's `status.json`, `result.json` and `boot-finished`
//! ([`crate::cloud_init::boot_files`]), with one rule: an error of any stage stays an
//! error until the next boot (fail closed), and "done" is said only at the very end.
//!
//! The earliest stage of a boot (the early unit's) removes the previous boot's records
//! first. A late hand-over's re-run (`vmcust-imc.service`) keeps the boot's errors and
//! takes back only the end records, which its late stage writes again.

use std::path::Path;

use anyhow::Result;

use super::Stage;
use crate::cloud_init::boot_files::{self, Half, ResultV1, StatusV1, DATA_STATUS, RUN_STATUS};
use crate::root::Root;
use crate::state::{read_status, write_status, RunState, RunStatus};

/// Whether cloud-init's files are vmcust's to write: not where a real cloud-init is
/// installed (they are its own).
fn ours(root: &Root) -> bool {
    crate::cloud_init::coexist::real_cloud_init(root).is_none()
}

fn half(stage: Stage) -> Half {
    match stage {
        Stage::Early => Half::Local,
        Stage::Late => Half::Final,
    }
}

fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::Early => "early",
        Stage::Late => "late",
    }
}

/// Records that `stage` starts. `new_boot`: this is the boot's earliest stage, which
/// starts from nothing (the previous boot's records and errors go). A re-run within the
/// boot keeps the errors recorded so far.
pub(crate) fn stage_started(root: &Root, stage: Stage, new_boot: bool) {
    let carried = if new_boot {
        None
    } else {
        read_status(root).ok().flatten().and_then(|p| p.last_error)
    };
    // The run status carries this boot's earlier errors while the stage runs, in the
    // `running` state all the same: open-vm-tools keeps waiting until the end (§2.9).
    let status = RunStatus::now(RunState::Running, Some(stage_name(stage)), carried);
    if let Err(e) = write_status(root, &status) {
        tracing::warn!("{e:#}");
    }
    if ours(root) {
        if let Err(e) = cloud_init_started(root, stage, new_boot) {
            tracing::warn!("cloud-init's status files: {e:#}");
        }
    }
}

fn cloud_init_started(root: &Root, stage: Stage, new_boot: bool) -> Result<()> {
    if new_boot {
        for p in [RUN_STATUS, DATA_STATUS] {
            root.remove_file(Path::new(p))?;
        }
    }
    // The end records first: from here on a reader sees "running", never the last "done".
    boot_files::remove_end_records(root)?;
    let mut v1 = if new_boot {
        StatusV1::default()
    } else {
        boot_files::read_status_v1(root).unwrap_or_default()
    };
    let at = boot_files::now();
    let (first, second, name) = v1.pair(half(stage));
    for record in [first, second] {
        record.start = Some(at);
        record.finished = None;
    }
    v1.stage = Some(name.to_string());
    boot_files::write_status_v1(root, &v1)
}

/// How a stage ended, for the records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StageEnd {
    /// The state the stage alone would report: `running` after a successful early stage
    /// (the late one is still to come) or an interrupted one.
    pub state: RunState,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// Settings problems: recoverable errors (with what a customization of this stage
    /// asked for and did not get, which comes from its record).
    pub recoverable: Vec<String>,
}

/// Records that `stage` ended. An error of an earlier stage of this boot stays: the state
/// is `error` unless the boot is still going (`running`), whatever this stage did. At the
/// end of the late stage, `result.json` follows `status.json`, and `boot-finished` comes
/// last.
pub(crate) fn stage_ended(root: &Root, stage: Stage, end: &StageEnd) {
    let before = read_status(root).ok().flatten().and_then(|p| p.last_error);
    let error = joined(before, end.error.clone());
    let state = match (end.state, &error) {
        (RunState::Running, _) | (_, None) => end.state,
        // Fail closed: done, disabled or stepped aside after an error is an error.
        (_, Some(_)) => RunState::Error,
    };
    let status = RunStatus::now(state, Some(stage_name(stage)), error);
    if let Err(e) = write_status(root, &status) {
        tracing::warn!("{e:#}");
    }
    if ours(root) {
        if let Err(e) = cloud_init_ended(root, stage, end) {
            tracing::warn!("cloud-init's status files: {e:#}");
        }
    }
}

/// This boot's errors so far and the new one, without repeating one.
fn joined(before: Option<String>, new: Option<String>) -> Option<String> {
    match (before, new) {
        (Some(b), Some(n)) if b == n || b.ends_with(&format!("; {n}")) => Some(b),
        (Some(b), Some(n)) => Some(format!("{b}; {n}")),
        (b, n) => b.or(n),
    }
}

fn cloud_init_ended(root: &Root, stage: Stage, end: &StageEnd) -> Result<()> {
    let mut v1 = boot_files::read_status_v1(root).unwrap_or_default();
    let newest = crate::state::read_results(root)
        .ok()
        .and_then(|r| r.into_iter().next());
    if let Some(ds) = newest.as_ref().map(datasource) {
        v1.datasource = Some(ds);
    }
    let at = boot_files::now();
    // What a customization of this boot asked for and did not get (the early stage
    // records it, late modules add to it), each once.
    let boot_started = v1.init_local.start.unwrap_or(at);
    let known: Vec<String> = v1.recoverable_errors().into_values().flatten().collect();
    let degraded: Vec<String> = newest
        .as_ref()
        .filter(|r| r.finished as f64 >= boot_started.floor())
        .map(|r| r.degraded.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|d| !known.contains(d))
        .collect();
    let (first, second, _) = v1.pair(half(stage));
    if let Some(e) = &end.error {
        first.errors.push(e.clone());
    }
    let recoverable: Vec<String> = end.recoverable.iter().cloned().chain(degraded).collect();
    if !recoverable.is_empty() {
        let list = first
            .recoverable_errors
            .entry("WARNING".to_string())
            .or_default();
        for r in recoverable {
            if !list.contains(&r) {
                list.push(r);
            }
        }
    }
    for record in [first, second] {
        record.start.get_or_insert(at);
        record.finished = Some(at);
    }
    v1.stage = None;
    boot_files::write_status_v1(root, &v1)?;
    if stage != Stage::Late || end.state == RunState::Running {
        return Ok(());
    }
    // The end of the boot: the result after the status, `boot-finished` last, each
    // durable with everything written before it.
    let result = ResultV1 {
        datasource: v1.datasource.clone(),
        errors: v1.errors(),
    };
    boot_files::write_result_v1(root, &result)?;
    let id = newest.map(|r| r.instance_id.file_name().to_string());
    boot_files::write_boot_finished(root, id.as_deref(), at)
}

/// The data source as cloud-init names it, from where the customization came from.
fn datasource(result: &crate::state::InstanceResult) -> String {
    // A vSphere spec records no origins; the other sources name each field's.
    let source = result
        .origins
        .get("instance-id")
        .or_else(|| result.origins.values().next())
        .map_or("imc", String::as_str);
    match source {
        "guestinfo" => "DataSourceVMware [seed=guestinfo]".to_string(),
        "imc" => "DataSourceVMware [seed=imc]".to_string(),
        s if s.starts_with("ovf") => "DataSourceOVF".to_string(),
        "nocloud" => "DataSourceNoCloud".to_string(),
        s if s.starts_with("config") => "DataSourceConfigDrive".to_string(),
        other => format!("DataSource{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_joined_once() {
        let s = |t: &str| Some(t.to_string());
        assert_eq!(joined(None, None), None);
        assert_eq!(joined(s("a"), None), s("a"));
        assert_eq!(joined(None, s("b")), s("b"));
        assert_eq!(joined(s("a"), s("b")), s("a; b"));
        assert_eq!(joined(s("a; b"), s("b")), s("a; b"));
        assert_eq!(joined(s("a"), s("a")), s("a"));
    }
}
