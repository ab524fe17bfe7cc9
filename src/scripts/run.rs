//! Running the staged `customize.sh precustomization|postcustomization`.
//!
//! The script runs in its own process group with a cleared environment, its output read
//! line by line into the log while it runs. Output is bounded everywhere: a line is cut at
//! [`MAX_LINE_BYTES`], memory keeps the last [`KEPT_BYTES`] of each stream (and at most
//! [`KEPT_LINES`] lines), and the log gets the first [`LOGGED_BYTES`] of each stream and,
//! at the end, the kept tail: a script printing gigabytes costs neither memory nor disk. On timeout or cancellation (SIGTERM to vmcust)
//! the whole group gets SIGTERM, a grace period, then SIGKILL, and the script is reaped: a
//! script's background children can neither outlive the step nor hold the boot hostage.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use crate::process::Stream;
use crate::process::{self, Cmd, Ended, Output};

/// `PATH` given to scripts (and to every program vmcust runs): the usual system directories.
pub(crate) const SCRIPT_PATH: &str = process::PATH;
/// `LANG` given to scripts: the C locale exists on every guest.
pub(crate) const SCRIPT_LANG: &str = "C";
/// `HOME` given to scripts: they run as root.
pub(crate) const SCRIPT_HOME: &str = "/root";
/// Default time a script may run.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Default time between SIGTERM and SIGKILL.
pub(crate) const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// Output lines of each stream kept in [`ScriptRun::output`] (the newest).
pub const KEPT_LINES: usize = 200;
/// Bytes of each stream's newest lines kept in [`ScriptRun::output`].
pub const KEPT_BYTES: usize = 64 * 1024;
/// A longer output line is cut to this many bytes (the rest is counted, not kept).
pub const MAX_LINE_BYTES: usize = process::MAX_LINE_BYTES;
/// Bytes of each stream logged while the script runs; after that only the kept tail is
/// logged, once the script has ended, with the count of what was left out.
pub(crate) const LOGGED_BYTES: usize = 64 * 1024;

/// Which half of the custom script contract to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before network and identity are applied.
    Pre,
    /// After customization, in the late stage.
    Post,
    /// A `#!` user-data script (run without arguments).
    UserData,
}

impl Phase {
    /// The script's argument, if the contract passes one.
    pub fn arg(self) -> Option<&'static str> {
        match self {
            Phase::Pre => Some("precustomization"),
            Phase::Post => Some("postcustomization"),
            Phase::UserData => None,
        }
    }

    /// The phase's name in logs.
    pub fn name(self) -> &'static str {
        self.arg().unwrap_or("user-data")
    }
}

/// Limits for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time the script may run before the group is stopped.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL to the group.
    pub grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: DEFAULT_TIMEOUT,
            grace: DEFAULT_GRACE,
        }
    }
}

/// How the script ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It exited by itself with this status (0 = success).
    Exited(i32),
    /// It was killed by this signal, not by us.
    Signalled(i32),
    /// It ran past the timeout; its group was stopped.
    TimedOut,
    /// The run was cancelled (vmcust is stopping); its group was stopped.
    Cancelled,
}

impl std::fmt::Display for Outcome {
    /// In words, for logs: `exit status 0`, `killed by signal 9`, `timed out`, `cancelled`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Exited(n) => write!(f, "exit status {n}"),
            Outcome::Signalled(n) => write!(f, "killed by signal {n}"),
            Outcome::TimedOut => f.write_str("timed out (its process group was stopped)"),
            Outcome::Cancelled => f.write_str("cancelled (vmcust is stopping)"),
        }
    }
}

impl Outcome {
    /// Whether the script succeeded.
    pub fn success(self) -> bool {
        self == Outcome::Exited(0)
    }
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptRun {
    /// How it ended.
    pub outcome: Outcome,
    /// The last lines of output (per stream [`KEPT_LINES`] and [`KEPT_BYTES`] at most),
    /// in the order they were read; lines are cut at [`MAX_LINE_BYTES`].
    pub output: Vec<(Stream, String)>,
    /// The process id (and process group id) the script had.
    pub pid: u32,
}

/// Why the script could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The script could not be started.
    #[error("starting custom script {path} ({arg}): {source}; check that it exists, is executable and has a valid #! line")]
    Spawn {
        /// The script.
        path: PathBuf,
        /// Its argument.
        arg: &'static str,
        /// What went wrong.
        source: io::Error,
    },
    /// The script cannot be run inside its root.
    #[error("not running custom script {path} inside the root {root}: {reason}")]
    Chroot {
        /// The script, on this machine.
        path: PathBuf,
        /// The root it belongs to.
        root: PathBuf,
        /// Why not.
        reason: String,
    },
}

/// Runs `script phase` in the script's directory, under `limits`, until it ends, its
/// timeout passes or `stop` (set by vmcust's SIGTERM handler) turns true; the whole process
/// group is stopped in the last two cases. The script runs on this machine: for a script
/// of another root use [`run_script_in`].
pub fn run_script_blocking(
    script: &Path,
    phase: Phase,
    limits: Limits,
    stop: &AtomicBool,
) -> Result<ScriptRun, RunError> {
    run(None, script, script, phase, limits, stop)
}

/// Runs `script` (a path on this machine, inside `root`) as [`run_script_blocking`] does,
/// but for a root other than `/` sealed inside it ([`process::Sandbox`]): a script of
/// the system being customized runs in that system, with its files, its shell and its
/// absolute paths, never on the machine running vmcust, and sees nothing of that machine. Refused, without running
/// anything, when that cannot be done: vmcust is not root, the root lacks `/proc`,
/// `/sys` or `/dev`, or the script's `#!` interpreter is not in the root.
pub fn run_script_in(
    root: &crate::root::Root,
    script: &Path,
    phase: Phase,
    limits: Limits,
    stop: &AtomicBool,
) -> Result<ScriptRun, RunError> {
    if root.path() == Path::new("/") {
        return run_script_blocking(script, phase, limits, stop);
    }
    let refuse = |reason: String| RunError::Chroot {
        path: script.to_path_buf(),
        root: root.path().to_path_buf(),
        reason,
    };
    let inside = script
        .strip_prefix(root.path())
        .map(|rel| Path::new("/").join(rel))
        .map_err(|_| refuse("the script is not inside the root".into()))?;
    let sandbox = process::Sandbox::new(root.path()).map_err(|e| refuse(e.to_string()))?;
    if let Some(interpreter) = interpreter(script) {
        let found = root
            .resolve(Path::new(&interpreter), true)
            .is_ok_and(|p| p.is_file());
        if !interpreter.starts_with('/') || !found {
            return Err(refuse(format!(
                "its interpreter {interpreter} (the #! line) is not in the root; scripts run \
                 inside the root they customize, which needs its own shell"
            )));
        }
    }
    run(Some(&sandbox), script, &inside, phase, limits, stop)
}

/// The program named on a `#!` line, if the file starts with one.
fn interpreter(script: &Path) -> Option<String> {
    use std::io::Read as _;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let text = String::from_utf8_lossy(line);
    text.split_whitespace().next().map(str::to_string)
}

/// Runs the script: `host` is its path on this machine (for the log), `program` the path
/// it is started by (the same, or the path inside `sandbox`).
fn run(
    sandbox: Option<&process::Sandbox>,
    host: &Path,
    program: &Path,
    phase: Phase,
    limits: Limits,
    stop: &AtomicBool,
) -> Result<ScriptRun, RunError> {
    let script = host;
    let cmd = Cmd {
        program: program.to_path_buf(),
        args: phase.arg().map(str::to_string).into_iter().collect(),
        cwd: Some(program.parent().unwrap_or(Path::new("/")).to_path_buf()),
        env: vec![
            ("LANG".into(), SCRIPT_LANG.into()),
            ("HOME".into(), SCRIPT_HOME.into()),
        ],
        timeout: limits.timeout,
        grace: limits.grace,
        stdin: Vec::new(),
    };
    let mut tail = Tail::default();
    tracing::info!(script = %script.display(), phase = phase.name(), "custom script starting");
    let output = Output::Lines(&mut |stream, line| tail.push(stream, line, phase));
    let finished = match sandbox {
        None => process::run(&cmd, output, stop),
        Some(sandbox) => process::run_sandboxed(&cmd, sandbox, output, stop),
    }
    .map_err(|source| RunError::Spawn {
        path: script.to_path_buf(),
        arg: phase.name(),
        source,
    })?;
    let outcome = match finished.ended {
        Ended::Exited(code) => Outcome::Exited(code),
        Ended::Signalled(sig) => Outcome::Signalled(sig),
        Ended::TimedOut => Outcome::TimedOut,
        Ended::Stopped => Outcome::Cancelled,
    };
    let output = tail.finish(phase);
    tracing::info!(
        pid = finished.pid,
        phase = phase.name(),
        %outcome,
        "custom script finished"
    );
    Ok(ScriptRun {
        outcome,
        output,
        pid: finished.pid,
    })
}

/// The bounded output of one run: the newest lines of both streams, and what each stream
/// has logged so far.
#[derive(Default)]
struct Tail {
    /// Newest lines, oldest first, with whether each was logged when read.
    lines: VecDeque<(Stream, String, bool)>,
    /// Per stream (stdout, stderr): lines and bytes in `lines`, bytes logged, lines and
    /// bytes not logged.
    count: [usize; 2],
    kept: [usize; 2],
    logged: [usize; 2],
    unlogged: [(u64, u64); 2],
}

impl Tail {
    /// Records one (already cut) line; logs it while the stream's log budget lasts.
    fn push(&mut self, stream: Stream, line: String, phase: Phase) {
        let s = stream as usize;
        let logged = self.logged[s] + line.len() <= LOGGED_BYTES;
        if logged {
            self.logged[s] += line.len();
            log_line(stream, phase, &line);
        } else {
            if self.unlogged[s].0 == 0 {
                tracing::warn!(
                    phase = phase.name(),
                    "custom script {} is over {LOGGED_BYTES} bytes; the rest is not logged, its last {KEPT_BYTES} bytes are logged when the script ends",
                    stream.name()
                );
            }
            self.unlogged[s].0 += 1;
            self.unlogged[s].1 += line.len() as u64;
        }
        self.kept[s] += line.len();
        self.count[s] += 1;
        self.lines.push_back((stream, line, logged));
        // Drop the oldest lines of this stream until its bounds hold again; the other
        // stream's tail is left alone, so a chatty stderr cannot push stdout out.
        while self.kept[s] > KEPT_BYTES || self.count[s] > KEPT_LINES {
            let Some(at) = self.lines.iter().position(|(st, _, _)| *st == stream) else {
                break;
            };
            if let Some((_, old, _)) = self.lines.remove(at) {
                self.kept[s] -= old.len();
                self.count[s] -= 1;
            }
        }
    }

    /// Logs what was left out and the kept lines not logged yet; returns the kept lines.
    fn finish(&mut self, phase: Phase) -> Vec<(Stream, String)> {
        for stream in [Stream::Stdout, Stream::Stderr] {
            let (lines, bytes) = self.unlogged[stream as usize];
            if lines > 0 {
                tracing::warn!(
                    phase = phase.name(),
                    "custom script {}: {lines} lines ({bytes} bytes) were not logged; the last of them follow",
                    stream.name()
                );
            }
        }
        for (stream, line, logged) in &self.lines {
            if !logged {
                log_line(*stream, phase, line);
            }
        }
        self.lines
            .drain(..)
            .map(|(stream, line, _)| (stream, line))
            .collect()
    }
}

fn log_line(stream: Stream, phase: Phase, line: &str) {
    match stream {
        Stream::Stdout => tracing::info!(target: "vmcust::script", phase = phase.name(), "{line}"),
        Stream::Stderr => tracing::warn!(target: "vmcust::script", phase = phase.name(), "{line}"),
    }
}

/// How a script run ended, as the boot stages and the records need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ScriptEnd {
    /// Exit status 0.
    Succeeded,
    /// Anything else; the reason is for people and for the host's `@message`.
    Failed(String),
    /// SIGTERM: the script's group was stopped; the step is to be done again.
    Interrupted,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// The log gets the first [`LOGGED_BYTES`] of a stream, a note, and the kept tail: a
    /// bounded amount however much the script prints.
    #[test]
    fn the_log_is_bounded() {
        #[derive(Clone, Default)]
        struct Capture(Arc<Mutex<Vec<u8>>>);
        impl io::Write for Capture {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let capture = Capture::default();
        let writer = capture.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let kept = tracing::subscriber::with_default(subscriber, || {
            let mut tail = Tail::default();
            for i in 0..200_000 {
                tail.push(Stream::Stdout, format!("line {i:0>40}"), Phase::Post);
            }
            tail.finish(Phase::Post)
        });
        let log = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
        // Each logged line carries about 100 bytes of timestamp, level and fields.
        let lines = log.lines().count();
        assert!(
            lines < 2 * (LOGGED_BYTES / 45) + KEPT_LINES,
            "{lines} lines logged"
        );
        assert!(
            log.contains("lines (") && log.contains("were not logged"),
            "{log:.300}"
        );
        let last = log.lines().last().unwrap_or_default();
        assert!(last.contains(&format!("line {:0>40} ", 199_999)), "{last}");
        assert_eq!(kept.len(), KEPT_LINES);
    }
}
