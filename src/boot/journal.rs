//! The journal of a customization in progress: which steps are complete, on disk, so that
//! a run killed at any point resumes where it stopped and ends where an uninterrupted run
//! would have ended.

use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::root::Root;

/// The steps of one customization, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Step {
    /// The pre-customization script was started. Recorded before it runs: a script found
    /// started but not finished on resume was cut off and is not run a second time.
    PreScriptStarted,
    /// The pre-customization script ran successfully.
    PreScript,
    /// The plan (identity, network, password) was applied.
    Applied,
    /// The post-customization script was handed to the late stage.
    PostScheduled,
    /// The marker file for MARKER-ID was written.
    Marker,
    /// The NIC-connect handshake ran.
    Nics,
    /// The final state is about to be sent. Recorded (fsynced) before the RPC: a run that
    /// finds it on resume does not send the final state again, whether or not the host
    /// got it (at most once; see docs/boot.md, "Exactly once").
    Reporting,
    /// The final state was sent to the host.
    Reported,
}

impl Step {
    /// The step's name in the journal file.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Step::PreScriptStarted => "pre-script-started",
            Step::PreScript => "pre-script",
            Step::Applied => "applied",
            Step::PostScheduled => "post-scheduled",
            Step::Marker => "marker",
            Step::Nics => "nics",
            Step::Reporting => "reporting",
            Step::Reported => "reported",
        }
    }

    /// All steps in order.
    pub(crate) const ALL: [Step; 8] = [
        Step::PreScriptStarted,
        Step::PreScript,
        Step::Applied,
        Step::PostScheduled,
        Step::Marker,
        Step::Nics,
        Step::Reporting,
        Step::Reported,
    ];

    /// The step with this journal name.
    pub(crate) fn from_name(name: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Completed steps, appended one line each and fsynced before the next step starts.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    done: BTreeSet<Step>,
    /// The root the steps write to: made durable before each record that says a step is
    /// done ([`Root::sync`]).
    root: Option<Root>,
}

impl Journal {
    /// Opens (or starts) the journal at `path`. Unknown lines are ignored. A last line
    /// without its newline (a write torn by a power cut) is not written, even when it
    /// reads as a step name: it is cut off the file, so that the next record is a line
    /// of its own, and the step it stood for is simply done again.
    pub(crate) fn open(path: &Path) -> io::Result<Journal> {
        let bytes = match fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        if complete < bytes.len() {
            // Best effort: on a read-only root nothing can be appended either, and the
            // customization must still end with its final state.
            let cut = OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(complete as u64).and_then(|()| f.sync_all()));
            if let Err(e) = cut {
                tracing::warn!(
                    "could not cut the torn last line off {}: {e}",
                    path.display()
                );
            }
        }
        Ok(Journal {
            path: path.to_path_buf(),
            done: String::from_utf8_lossy(&bytes[..complete])
                .lines()
                .filter_map(Step::from_name)
                .collect(),
            root: None,
        })
    }

    /// The journal of steps that write to `root`: each record first makes what they wrote
    /// durable, so that a step recorded as done is done on disk too.
    pub(crate) fn for_writes_to(mut self, root: &Root) -> Journal {
        self.root = Some(root.clone());
        self
    }

    /// Whether `step` completed in this or an earlier run.
    pub(crate) fn is_done(&self, step: Step) -> bool {
        self.done.contains(&step)
    }

    /// Records `step` as complete, durably. The step counts as done for the rest of this
    /// run even when writing fails (a full disk): the caller decides whether a step that
    /// cannot be made durable may go ahead.
    pub(crate) fn record(&mut self, step: Step) -> io::Result<()> {
        self.sync_root()?;
        self.append(step)?.sync_all()
    }

    fn sync_root(&self) -> io::Result<()> {
        self.root.as_ref().map_or(Ok(()), Root::sync)
    }

    /// Records `step` without waiting for the disk: it survives a kill (the kernel has it)
    /// at once, and a power cut once [`Journal::sync`] has returned. For the record that
    /// guards the final state, where waiting for the disk before the RPC would widen the
    /// window in which a kill loses the final state (docs/boot.md, "Exactly once").
    pub(crate) fn record_unsynced(&mut self, step: Step) -> io::Result<()> {
        self.append(step).map(drop)
    }

    /// Waits until every record is on the disk.
    pub(crate) fn sync(&self) -> io::Result<()> {
        self.sync_root()?;
        OpenOptions::new().append(true).open(&self.path)?.sync_all()
    }

    fn append(&mut self, step: Step) -> io::Result<fs::File> {
        self.done.insert(step);
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)?;
        // One write: a kill cannot leave half a record that the next one would run into.
        f.write_all(format!("{}\n", step.name()).as_bytes())?;
        Ok(f)
    }
}

/// Kills the process with SIGKILL when [`super::CRASH_AFTER_ENV`] names `point`: the tests'
/// way to cut a run off at a named point that is not a journal step (inside the
/// hand-over's ingestion and retirement, between a record and the RPC it guards). Test
/// only: nothing sets the variable on a real system.
pub(crate) fn crash_point_at(point: &str) {
    if std::env::var(super::CRASH_AFTER_ENV).is_ok_and(|v| v == point) {
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_survive_reopening_and_torn_lines_are_ignored() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("journal");
        let mut j = Journal::open(&p).unwrap();
        assert!(!j.is_done(Step::Applied));
        j.record(Step::PreScript).unwrap();
        j.record(Step::Applied).unwrap();
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        write!(f, "mark").unwrap();
        let j = Journal::open(&p).unwrap();
        assert!(j.is_done(Step::PreScript) && j.is_done(Step::Applied));
        assert!(!j.is_done(Step::Marker));
    }

    // threat T13 (docs/security.md): a record torn by a power cut is not a step done,
    // even when what was written reads as a step name, and the records after it stay
    // lines of their own instead of merging into it.
    #[test]
    fn a_torn_last_line_is_not_written_and_does_not_swallow_the_next_record() {
        for torn in ["mark", "reported", "appl"] {
            let d = tempfile::tempdir().unwrap();
            let p = d.path().join("journal");
            let mut j = Journal::open(&p).unwrap();
            j.record(Step::Applied).unwrap();
            let mut f = OpenOptions::new().append(true).open(&p).unwrap();
            write!(f, "{torn}").unwrap();
            let mut j = Journal::open(&p).unwrap();
            assert!(j.is_done(Step::Applied), "{torn}");
            assert!(
                !j.is_done(Step::Reported) && !j.is_done(Step::Marker),
                "{torn}"
            );
            j.record(Step::Marker).unwrap();
            j.record(Step::Nics).unwrap();
            let j = Journal::open(&p).unwrap();
            assert!(j.is_done(Step::Marker) && j.is_done(Step::Nics), "{torn}");
            assert!(!j.is_done(Step::Reported), "{torn}");
            assert_eq!(
                fs::read_to_string(&p).unwrap(),
                "applied\nmarker\nnics\n",
                "{torn}"
            );
        }
    }

    #[test]
    fn names_round_trip() {
        for s in Step::ALL {
            assert_eq!(Step::from_name(s.name()), Some(s));
        }
    }
}
