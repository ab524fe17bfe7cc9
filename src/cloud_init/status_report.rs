//! What the stand-in's `cloud-init status` prints: cloud-init 24.x's `--long` lines and
//! its JSON/YAML document (`status`, `extended_status`, `boot_status_code`, `datasource`,
//! `detail`, `errors`, `last_update`, `recoverable_errors`, the four stages and `stage`),
//! made from vmcust's run status and the boot's `status.json` ([`super::boot_files`]).

use std::collections::BTreeMap;

use super::boot_files::{short_datasource, StatusV1};
use crate::state::rfc2822;
use crate::state::{RunState, RunStatus};

/// One `cloud-init status` answer, before it is printed.
pub(crate) struct Report {
    /// The `status:` word.
    pub status: &'static str,
    /// `extended_status`: the word, or `error - running`, `degraded done`, ….
    pub extended: String,
    /// The data source's short name (`vmware`), empty when none gave a customization.
    pub datasource: String,
    /// Where the answer comes from, and why, when systemd decided it.
    pub detail: String,
    /// Every error of this boot.
    pub errors: Vec<String>,
    /// Recoverable errors by level.
    pub recoverable: BTreeMap<String, Vec<String>>,
    /// The last recorded change, in cloud-init's format; empty when none.
    pub last_update: String,
    /// The boot's `status.json`, or an empty one.
    pub v1: StatusV1,
}

impl Report {
    /// The answer for `status` (vmcust's run status, systemd's verdict applied), the boot's
    /// `status.json` if any, the settings problems (recoverable errors) and systemd's note.
    pub(crate) fn new(
        status: &RunStatus,
        v1: Option<StatusV1>,
        settings_problems: &[String],
        note: Option<&str>,
    ) -> Report {
        let v1 = v1.unwrap_or_default();
        let mut errors = v1.errors();
        let current = matches!(
            status.state,
            RunState::Error | RunState::Running | RunState::NotStarted
        );
        if let Some(e) = status.last_error.as_ref().filter(|_| current) {
            // A reason next to `done` or `disabled` is no error of this state. The run
            // status joins the boot's errors with "; "; one not in the records
            // (a unit that failed, an unreadable record) is added.
            if errors.join("; ") != *e && !errors.iter().any(|x| x == e) {
                errors.push(e.clone());
            }
        }
        let mut recoverable = v1.recoverable_errors();
        for p in settings_problems {
            let list = recoverable.entry("WARNING".to_string()).or_default();
            if !list.contains(p) {
                list.push(p.clone());
            }
        }
        let busy = matches!(status.state, RunState::Running | RunState::NotStarted);
        let extended = match status.state {
            RunState::Error => "error - done".to_string(),
            _ if busy && !errors.is_empty() => "error - running".to_string(),
            RunState::Done | RunState::Running if !recoverable.is_empty() => {
                format!("degraded {}", status.state.word())
            }
            other => other.word().to_string(),
        };
        let ds = v1.datasource.clone().unwrap_or_default();
        let vmcust = format!(
            "vmcust {} standing in for cloud-init",
            env!("CARGO_PKG_VERSION")
        );
        let mut detail = if ds.is_empty() {
            vmcust
        } else {
            format!("{ds} ({vmcust})")
        };
        if let Some(n) = note {
            detail = format!("{detail}; {n}");
        }
        let last = v1
            .last_update()
            .map(|t| t as u64)
            .or((status.updated > 0).then_some(status.updated));
        Report {
            status: status.state.word(),
            extended,
            datasource: short_datasource(&ds),
            detail,
            errors,
            recoverable,
            last_update: last.map(rfc2822).unwrap_or_default(),
            v1,
        }
    }

    /// `status: WORD`, and with `long` cloud-init's further lines (`errors` and
    /// `recoverable_errors` only when there are some).
    pub(crate) fn tabular(&self, long: bool) -> String {
        let mut s = format!("status: {}\n", self.status);
        if !long {
            return s;
        }
        s += &format!("extended_status: {}\n", self.extended);
        s += "boot_status_code: unknown\n";
        if !self.last_update.is_empty() {
            s += &format!("last_update: {}\n", self.last_update);
        }
        s += &format!("detail: {}\n", self.detail);
        // Empty lists are left out (cloud-init prints `errors: []`): open-vm-tools reads
        // the answer by substring, and the word "error" must appear only when there is one.
        if !self.errors.is_empty() {
            s += "errors:\n";
            for e in &self.errors {
                s += &format!("\t- {e}\n");
            }
        }
        if !self.recoverable.is_empty() {
            s += "recoverable_errors:\n";
            for (level, msgs) in &self.recoverable {
                s += &format!("{level}:\n");
                for m in msgs {
                    s += &format!("\t- {m}\n");
                }
            }
        }
        s
    }

    /// The JSON/YAML document, with cloud-init's keys.
    pub(crate) fn document(&self) -> serde_json::Value {
        let mut doc = serde_json::json!({
            "boot_status_code": "unknown",
            "datasource": self.datasource,
            "detail": self.detail,
            "errors": self.errors,
            "extended_status": self.extended,
            "last_update": self.last_update,
            "recoverable_errors": self.recoverable,
            "status": self.status,
            "stage": self.v1.stage,
        });
        for (name, record) in self.v1.stages() {
            doc[name] = serde_json::to_value(record).unwrap_or_default();
        }
        doc
    }
}
