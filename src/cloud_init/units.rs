//! What systemd says about vmcust's units this boot, so that `status --wait` waits only for
//! work that is still coming: a unit that is starting or has a start job queued will still
//! write its progress; a boot where none does (units disabled, their condition false, one
//! killed or timed out) has settled, whatever the status file last said.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::process::{self, Cmd, Ended, Output};

/// The units whose work `cloud-init status` reports, in the order they run.
pub(crate) const UNITS: [&str; 3] = [
    "vmcust-early.service",
    "vmcust-late.service",
    "vmcust-imc.service",
];

/// The properties asked of systemd, one `KEY=value` line each in `systemctl show`.
const PROPERTIES: &str = "Id,LoadState,ActiveState,SubState,Result,UnitFileState,Job";

/// How long `systemctl show` may take (it answers in milliseconds; a hung D-Bus must not
/// hang the caller).
const SYSTEMCTL_TIMEOUT: Duration = Duration::from_secs(10);

/// The most of `systemctl show`'s output read (a few hundred bytes are expected).
const MAX_SHOW_BYTES: usize = 64 * 1024;

/// One unit as `systemctl show` describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UnitView {
    /// The unit's name, `vmcust-early.service`.
    pub id: String,
    /// `loaded`, `not-found`, `masked`, …
    pub load: String,
    /// `active`, `activating`, `inactive`, `failed`, …
    pub active: String,
    /// `running`, `start`, `exited`, `dead`, …
    pub sub: String,
    /// How its last run ended: `success`, `timeout`, `exit-code`, …
    pub result: String,
    /// `enabled`, `disabled`, …
    pub unit_file: String,
    /// Whether a job (a queued start) is pending for it.
    pub job: bool,
}

impl UnitView {
    /// A short description for messages: `vmcust-early.service (inactive, disabled)`.
    fn describe(&self) -> String {
        let mut words = vec![self.active.as_str()];
        if self.load != "loaded" && !self.load.is_empty() {
            words.push(&self.load);
        } else if !self.unit_file.is_empty() {
            words.push(&self.unit_file);
        }
        if self.result != "success" && !self.result.is_empty() {
            words.push(&self.result);
        }
        format!("{} ({})", self.id, words.join(", "))
    }
}

/// Reads `systemctl show -p …` output: one block of `KEY=value` lines per unit, blocks
/// separated by an empty line. Unknown keys are ignored; a block without `Id` is dropped.
pub(crate) fn parse_show(text: &str) -> Vec<UnitView> {
    let mut units = Vec::new();
    let mut unit = UnitView::default();
    for line in text.lines().chain(std::iter::once("")) {
        let line = line.trim_end();
        if line.is_empty() {
            if !unit.id.is_empty() {
                units.push(std::mem::take(&mut unit));
            }
            unit = UnitView::default();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.to_string();
        match key {
            "Id" => unit.id = value,
            "LoadState" => unit.load = value,
            "ActiveState" => unit.active = value,
            "SubState" => unit.sub = value,
            "Result" => unit.result = value,
            "UnitFileState" => unit.unit_file = value,
            // systemctl prints the job's number, or nothing (or 0) without one.
            "Job" => unit.job = !value.is_empty() && value != "0",
            _ => {}
        }
    }
    units
}

/// Whether vmcust's units will still do something this boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outlook {
    /// A unit is starting or queued: its progress is coming. Says which.
    Coming(String),
    /// No unit is starting or queued. `failed` names a unit whose run failed (its reason);
    /// `why` says what systemd reports, for the message.
    Settled {
        /// The first failed unit, described.
        failed: Option<String>,
        /// Every unit, described.
        why: String,
    },
}

/// Decides from the units' states whether their work is still coming.
pub(crate) fn outlook(units: &[UnitView]) -> Outlook {
    let coming: Vec<String> = units
        .iter()
        .filter(|u| u.job || matches!(u.active.as_str(), "activating" | "reloading"))
        .map(|u| {
            if u.job && u.active != "activating" {
                format!("{} (start queued)", u.id)
            } else {
                format!("{} ({})", u.id, u.active)
            }
        })
        .collect();
    if !coming.is_empty() {
        return Outlook::Coming(coming.join(", "));
    }
    let failed = units
        .iter()
        .find(|u| u.active == "failed")
        .map(UnitView::describe);
    let why = units
        .iter()
        .map(UnitView::describe)
        .collect::<Vec<_>>()
        .join(", ");
    Outlook::Settled { failed, why }
}

/// Asks the running systemd about [`UNITS`]; `None` when `root` is not the running system,
/// systemd is not its init, or `systemctl` does not answer (the caller then goes by the
/// status file alone).
pub(crate) fn query(root: &Path) -> Option<Vec<UnitView>> {
    if root != Path::new("/") || !Path::new("/run/systemd/system").is_dir() {
        return None;
    }
    let mut args = vec!["show", "--property", PROPERTIES];
    args.extend(UNITS);
    let cmd = Cmd::new("systemctl", &args, SYSTEMCTL_TIMEOUT);
    let done = process::run(&cmd, Output::Bytes(MAX_SHOW_BYTES), &AtomicBool::new(false)).ok()?;
    if done.ended != Ended::Exited(0) {
        return None;
    }
    let units = parse_show(&String::from_utf8_lossy(&done.stdout));
    (!units.is_empty()).then_some(units)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(blocks: &[&str]) -> Vec<UnitView> {
        parse_show(&blocks.join("\n\n"))
    }

    const EARLY_DONE: &str = "Id=vmcust-early.service\nLoadState=loaded\nActiveState=active\n\
        SubState=exited\nResult=success\nUnitFileState=enabled";
    const EARLY_RUNNING: &str = "Id=vmcust-early.service\nLoadState=loaded\n\
        ActiveState=activating\nSubState=start\nResult=success\nUnitFileState=enabled\nJob=41";
    const EARLY_TIMED_OUT: &str = "Id=vmcust-early.service\nLoadState=loaded\n\
        ActiveState=failed\nSubState=failed\nResult=timeout\nUnitFileState=enabled";
    const EARLY_DISABLED: &str = "Id=vmcust-early.service\nLoadState=loaded\n\
        ActiveState=inactive\nSubState=dead\nResult=success\nUnitFileState=disabled";
    const LATE_QUEUED: &str = "Id=vmcust-late.service\nLoadState=loaded\nActiveState=inactive\n\
        SubState=dead\nResult=success\nUnitFileState=enabled\nJob=57";
    const LATE_DONE: &str = "Id=vmcust-late.service\nLoadState=loaded\nActiveState=active\n\
        SubState=exited\nResult=success\nUnitFileState=enabled";
    const LATE_DISABLED: &str = "Id=vmcust-late.service\nLoadState=loaded\n\
        ActiveState=inactive\nSubState=dead\nResult=success\nUnitFileState=disabled\nJob=";
    const IMC_IDLE: &str = "Id=vmcust-imc.service\nLoadState=loaded\nActiveState=inactive\n\
        SubState=dead\nResult=success\nUnitFileState=static";
    const IMC_MASKED: &str = "Id=vmcust-imc.service\nLoadState=masked\nActiveState=inactive\n\
        SubState=dead\nResult=success\nUnitFileState=masked";

    #[test]
    fn show_output_is_read_per_unit() {
        let units = show(&[EARLY_RUNNING, LATE_QUEUED, IMC_IDLE]);
        assert_eq!(units.len(), 3);
        assert_eq!(units[0].id, "vmcust-early.service");
        assert_eq!(units[0].active, "activating");
        assert!(units[0].job && units[1].job && !units[2].job);
        assert_eq!(units[2].unit_file, "static");
        // `Job=` empty or absent is no job; a block without Id is not a unit.
        assert!(!show(&[LATE_DISABLED])[0].job);
        assert!(parse_show("LoadState=loaded\n\n\n").is_empty());
    }

    /// Each row: the units systemd reports, and whether their work is still coming (and
    /// then which), or has settled (and then which unit failed).
    #[test]
    fn the_outlook_follows_systemd() {
        enum Want {
            Coming(&'static str),
            Settled(Option<&'static str>),
        }
        let cases: &[(&str, &[&str], Want)] = &[
            (
                "early stage running",
                &[EARLY_RUNNING, LATE_QUEUED, IMC_IDLE],
                Want::Coming(
                    "vmcust-early.service (activating), vmcust-late.service (start queued)",
                ),
            ),
            (
                "late stage waiting for the network",
                &[EARLY_DONE, LATE_QUEUED, IMC_IDLE],
                Want::Coming("vmcust-late.service (start queued)"),
            ),
            (
                "both done",
                &[EARLY_DONE, LATE_DONE, IMC_IDLE],
                Want::Settled(None),
            ),
            (
                "units not enabled: nothing will run this boot",
                &[EARLY_DISABLED, LATE_DISABLED, IMC_MASKED],
                Want::Settled(None),
            ),
            (
                "early stage killed at its timeout",
                &[EARLY_TIMED_OUT, LATE_DISABLED, IMC_IDLE],
                Want::Settled(Some("vmcust-early.service (failed, enabled, timeout)")),
            ),
        ];
        for (name, blocks, want) in cases {
            match (outlook(&show(blocks)), want) {
                (Outlook::Coming(which), Want::Coming(w)) => assert_eq!(which, *w, "{name}"),
                (Outlook::Settled { failed, why }, Want::Settled(f)) => {
                    assert_eq!(failed.as_deref(), *f, "{name}");
                    assert!(why.contains("vmcust-early.service ("), "{name}: {why}");
                }
                (got, _) => panic!("{name}: {got:?}"),
            }
        }
    }

    #[test]
    fn no_systemd_answer_for_another_root() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(query(dir.path()), None);
    }
}
