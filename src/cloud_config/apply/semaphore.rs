//! Once-only records for the cloud-config modules, as cloud-init's `sem/config_<module>`
//! files: per-instance records in `/var/lib/vmcust/instances/<ID>/sem/`, per-once records
//! in `/var/lib/vmcust/sem/`, per-boot records keyed by the kernel's boot id.
//!
//! A module that must not run twice (runcmd, packages, power_state, bootcmd within a
//! boot) gets a `started` record, written durably before it starts, and a `done` record
//! after it: found `started` without `done`, the module was cut off (power cut, kill) and
//! is reported failed, not run a second time — as the engine does for custom scripts
//! (`src/boot/late.rs`, docs/boot.md "Exactly once"). A module that is harmless to repeat
//! gets only the `done` record: cut off, it runs again.
//!
//! Each record holds its key (`instance`, `once` or the boot id) on its first line and a
//! note on the second; a record whose key is not the current one (a per-boot record of an
//! earlier boot) does not count.

use std::io;
use std::path::{Path, PathBuf};

use crate::cloud_config::modules::Frequency;
use crate::model::InstanceId;
use crate::root::Root;
pub(crate) use crate::state::ONCE_DIR;

/// Where the kernel tells the boot id.
pub(crate) const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// What the records say about a module now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Not run for this key: run it.
    Run,
    /// Run already for this key; the note its `done` record holds.
    Done(String),
    /// Started for this key and never finished: cut off, not to be run again.
    CutOff,
}

/// The records of one instance on one boot.
#[derive(Debug, Clone)]
pub(crate) struct Semaphores {
    root: Root,
    instance_dir: PathBuf,
    boot_id: String,
}

impl Semaphores {
    /// The records of `instance` on the boot `boot_id` (see [`boot_id`]).
    pub(crate) fn new(root: &Root, instance: &InstanceId, boot_id: &str) -> Semaphores {
        Semaphores {
            root: root.clone(),
            instance_dir: Path::new(crate::state::INSTANCES_DIR)
                .join(instance.file_name())
                .join("sem"),
            boot_id: boot_id.trim().to_string(),
        }
    }

    /// The record's path (inside the root) and its key; `None` for [`Frequency::Always`].
    fn record(&self, module: &str, freq: Frequency, what: &str) -> Option<(PathBuf, String)> {
        let name = format!("config_{module}.{what}");
        match freq {
            Frequency::Always => None,
            Frequency::PerOnce => Some((Path::new(ONCE_DIR).join(name), "once".into())),
            Frequency::PerInstance => Some((self.instance_dir.join(name), "instance".into())),
            Frequency::PerBoot => Some((
                self.instance_dir.join(name),
                format!("boot {}", self.boot_id),
            )),
        }
    }

    /// The note of a record with the current key, if there is one.
    fn read(&self, module: &str, freq: Frequency, what: &str) -> io::Result<Option<String>> {
        let Some((path, key)) = self.record(module, freq, what) else {
            return Ok(None);
        };
        Ok(self.root.read_text(&path)?.and_then(|t| {
            let mut lines = t.lines();
            (lines.next() == Some(key.as_str())).then(|| lines.next().unwrap_or("").to_string())
        }))
    }

    /// Whether `module` is to run now.
    pub(crate) fn check(&self, module: &str, freq: Frequency) -> io::Result<Gate> {
        if let Some(note) = self.read(module, freq, "done")? {
            return Ok(Gate::Done(note));
        }
        if self.read(module, freq, "started")?.is_some() {
            return Ok(Gate::CutOff);
        }
        Ok(Gate::Run)
    }

    /// Records, durably, that `module` starts (before a module that must not run twice).
    pub(crate) fn start(&self, module: &str, freq: Frequency) -> io::Result<()> {
        match self.record(module, freq, "started") {
            Some((path, key)) => {
                self.root
                    .write_record(&path, format!("{key}\n").as_bytes(), 0o600)
            }
            None => Ok(()),
        }
    }

    /// Records that `module` ended (`note`: how), then drops its `started` record: durably
    /// for a module that has one (a kill or power cut between the two leaves both: `done`
    /// wins), with the stage's other writes for one harmless to repeat.
    pub(crate) fn finish(&self, module: &str, freq: Frequency, note: &str) -> io::Result<()> {
        let Some((path, key)) = self.record(module, freq, "done") else {
            return Ok(());
        };
        let note = note.replace(['\n', '\r'], " ");
        let record = format!("{key}\n{note}\n");
        let started = self
            .record(module, freq, "started")
            .filter(|(p, _)| self.root.is_file(p));
        let Some((started, _)) = started else {
            // A module harmless to repeat: a `done` lost to a power cut only runs it
            // again, so it goes to disk with the stage's other writes.
            return self.root.write_file(&path, record.as_bytes(), 0o600);
        };
        // `done` on disk before `started` goes: a power cut in between leaves both, and
        // `done` wins, so the removal itself can wait for the next sync.
        self.root.write_record(&path, record.as_bytes(), 0o600)?;
        self.root.remove_file(&started)
    }
}

/// This machine's boot id (a root other than `/` is customized during this machine's
/// boot, so its per-boot records follow it too).
pub(crate) fn boot_id() -> io::Result<String> {
    Ok(std::fs::read_to_string(BOOT_ID)?.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sems(root: &Root, boot: &str) -> Semaphores {
        Semaphores::new(root, &InstanceId::parse("i-1").unwrap(), boot)
    }

    #[test]
    fn records_follow_their_frequency() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        let s = sems(&root, "b1");
        let modules = [
            ("runcmd", Frequency::PerInstance),
            ("bootcmd", Frequency::PerBoot),
            ("once", Frequency::PerOnce),
        ];
        for (m, f) in modules {
            assert_eq!(s.check(m, f).unwrap(), Gate::Run, "{f:?}");
            s.start(m, f).unwrap();
            assert_eq!(s.check(m, f).unwrap(), Gate::CutOff, "{f:?}");
            s.finish(m, f, "ran").unwrap();
            assert_eq!(s.check(m, f).unwrap(), Gate::Done("ran".into()), "{f:?}");
        }
        assert!(d
            .path()
            .join("var/lib/vmcust/instances/i-1/sem/config_runcmd.done")
            .is_file());
        assert!(!d
            .path()
            .join("var/lib/vmcust/instances/i-1/sem/config_runcmd.started")
            .exists());
        assert!(d
            .path()
            .join("var/lib/vmcust/sem/config_once.done")
            .is_file());
        // A new boot: only the per-boot record is stale.
        let next = sems(&root, "b2");
        assert_eq!(
            next.check("bootcmd", Frequency::PerBoot).unwrap(),
            Gate::Run
        );
        assert!(matches!(
            next.check("runcmd", Frequency::PerInstance).unwrap(),
            Gate::Done(_)
        ));
        // A new instance: per-instance runs again, per-once does not.
        let other = Semaphores::new(&root, &InstanceId::parse("i-2").unwrap(), "b2");
        assert_eq!(
            other.check("runcmd", Frequency::PerInstance).unwrap(),
            Gate::Run
        );
        assert!(matches!(
            other.check("once", Frequency::PerOnce).unwrap(),
            Gate::Done(_)
        ));
        // Always has no records.
        s.start("final_message", Frequency::Always).unwrap();
        assert_eq!(
            s.check("final_message", Frequency::Always).unwrap(),
            Gate::Run
        );
    }

    #[test]
    fn a_started_record_of_an_earlier_boot_is_not_a_cut_off() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        sems(&root, "b1")
            .start("bootcmd", Frequency::PerBoot)
            .unwrap();
        assert_eq!(
            sems(&root, "b1")
                .check("bootcmd", Frequency::PerBoot)
                .unwrap(),
            Gate::CutOff
        );
        assert_eq!(
            sems(&root, "b2")
                .check("bootcmd", Frequency::PerBoot)
                .unwrap(),
            Gate::Run
        );
    }
}
