//! The run status: where vmcust is in its work this boot, as `cloud-init status` reports
//! it. The stages write it ([`write_status`]); the `cloud-init` stand-in, `vmcust status`
//! and `detect` read it. Under `/run`, so a reboot starts from "not run".

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::root::Root;

/// The status file the run engine keeps, inside the root. Under `/run` so a reboot
/// starts from "not run".
pub(crate) const STATUS_PATH: &str = "/run/vmcust/status.json";

/// Where vmcust is in its work, as `cloud-init status` would put it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// No stage has started this boot.
    NotStarted,
    /// A stage is working (including the wait for cust.cfg), or the late stage is
    /// still to come after the early one.
    Running,
    /// Every stage finished.
    Done,
    /// A stage failed; `last_error` says why.
    Error,
    /// vmcust is switched off for this boot (`[imc] enabled = false`, stepped aside, or
    /// not on VMware).
    Disabled,
}

impl RunState {
    /// The word after `status: `, chosen from those open-vm-tools parses (§2.9).
    /// `not run` rather than cloud-init 24.1's `not started`: every tools release since
    /// 12.1.5 recognises it, while older ones would read `not started` as "unknown" and
    /// stop waiting.
    pub fn word(self) -> &'static str {
        match self {
            RunState::NotStarted => "not run",
            RunState::Running => "running",
            RunState::Done => "done",
            RunState::Error => "error",
            RunState::Disabled => "disabled",
        }
    }
}

/// vmcust's progress as recorded in [`STATUS_PATH`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStatus {
    /// The overall state.
    pub state: RunState,
    /// The stage or step in hand, a short name such as `early` or `late` (shown by
    /// `status --long`; avoid the words `running`, `done`, `error` in it, which tools
    /// would read).
    #[serde(default)]
    pub stage: Option<String>,
    /// Why the run failed, for `status --long` and the log. Never a secret.
    #[serde(default)]
    pub last_error: Option<String>,
    /// When this was written, seconds since the Unix epoch (RFC 3339 in the file).
    #[serde(with = "super::time::as_rfc3339")]
    pub updated: u64,
}

impl RunStatus {
    /// A status stamped with the current time.
    pub fn now(state: RunState, stage: Option<&str>, last_error: Option<String>) -> RunStatus {
        RunStatus {
            state,
            stage: stage.map(str::to_string),
            last_error,
            updated: super::time::now(),
        }
    }
}

/// Records `status` in the root's [`STATUS_PATH`] atomically, so `cloud-init status`
/// never reads half a file.
pub fn write_status(root: &Root, status: &RunStatus) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut json = serde_json::to_vec_pretty(status).context("encoding the run status")?;
    json.push(b'\n');
    root.write_file(Path::new(STATUS_PATH), &json, 0o644)
        .with_context(|| format!("writing {STATUS_PATH}"))
}

/// Reads the root's [`STATUS_PATH`]; `Ok(None)` when no stage has written it yet.
pub fn read_status(root: &Root) -> anyhow::Result<Option<RunStatus>> {
    use anyhow::Context;
    let Some(bytes) = root
        .read(Path::new(STATUS_PATH))
        .with_context(|| format!("reading {STATUS_PATH}"))?
    else {
        return Ok(None);
    };
    let status = serde_json::from_slice(&bytes).with_context(|| {
        format!("{STATUS_PATH} is not a vmcust run status; remove it and rerun `vmcust run`")
    })?;
    Ok(Some(status))
}
