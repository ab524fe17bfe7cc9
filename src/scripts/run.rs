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
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;
use tokio::time::Instant;

/// `PATH` given to scripts (and to `vmware-toolbox-cmd`): the usual system directories.
pub const SCRIPT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// `LANG` given to scripts: the C locale exists on every guest.
pub const SCRIPT_LANG: &str = "C";
/// `HOME` given to scripts: they run as root.
pub const SCRIPT_HOME: &str = "/root";
/// Default time a script may run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Default time between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// Output lines of each stream kept in [`ScriptRun::output`] (the newest).
pub const KEPT_LINES: usize = 200;
/// Bytes of each stream's newest lines kept in [`ScriptRun::output`].
pub const KEPT_BYTES: usize = 64 * 1024;
/// A longer output line is cut to this many bytes (the rest is counted, not kept).
pub const MAX_LINE_BYTES: usize = 4096;
/// Bytes of each stream logged while the script runs; after that only the kept tail is
/// logged, once the script has ended, with the count of what was left out.
pub const LOGGED_BYTES: usize = 64 * 1024;
/// How long output is still read after the script exits, for background children that
/// keep the pipes open.
const DRAIN: Duration = Duration::from_millis(500);
/// How often the group is checked for survivors during the grace period.
const POLL: Duration = Duration::from_millis(20);
/// How often [`run_script_blocking`] looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

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

impl Outcome {
    /// Whether the script succeeded.
    pub fn success(self) -> bool {
        self == Outcome::Exited(0)
    }
}

/// Which stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
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
    /// Waiting for the script failed.
    #[error("waiting for custom script {path}: {source}")]
    Wait {
        /// The script.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
}

/// Runs `script phase` in the script's directory, under `limits`; `cancel` resolving stops
/// it (pass e.g. a SIGTERM stream's `recv()`, a `Notify::notified()` or
/// `std::future::pending()`).
pub async fn run_script(
    script: &Path,
    phase: Phase,
    limits: Limits,
    cancel: impl Future<Output = ()>,
) -> Result<ScriptRun, RunError> {
    let dir = script.parent().unwrap_or(Path::new("/"));
    let mut command = Command::new(script);
    command
        .args(phase.arg())
        .env_clear()
        .env("PATH", SCRIPT_PATH)
        .env("LANG", SCRIPT_LANG)
        .env("HOME", SCRIPT_HOME)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so that one signal reaches every process the script started.
        .process_group(0)
        .kill_on_drop(true);
    let mut attempt = 0;
    let mut child = loop {
        match command.spawn() {
            // Another thread that forked while the script was still open for writing holds
            // it until that child execs; that passes within milliseconds.
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && attempt < 10 => {
                attempt += 1;
                tokio::time::sleep(POLL).await;
            }
            result => {
                break result.map_err(|source| RunError::Spawn {
                    path: script.to_path_buf(),
                    arg: phase.name(),
                    source,
                })?
            }
        }
    };
    let pid = child.id().expect("a just-spawned child has a pid");
    let pgid = Pid::from_raw(pid as i32);
    // If this future is dropped (the caller gave up), the group still dies.
    let mut guard = GroupGuard { pgid, armed: true };
    tracing::info!(script = %script.display(), phase = phase.name(), pid, "custom script started");

    let tail = Arc::new(Mutex::new(Tail::default()));
    let readers = [
        child
            .stdout
            .take()
            .map(|o| spawn_reader(o, Stream::Stdout, phase, tail.clone())),
        child
            .stderr
            .take()
            .map(|e| spawn_reader(e, Stream::Stderr, phase, tail.clone())),
    ];

    let wait_err = |source| RunError::Wait {
        path: script.to_path_buf(),
        source,
    };
    tokio::pin!(cancel);
    let stopped = tokio::select! {
        status = child.wait() => Err(status.map_err(wait_err)?),
        () = tokio::time::sleep(limits.timeout) => Ok(Outcome::TimedOut),
        () = &mut cancel => Ok(Outcome::Cancelled),
    };
    let outcome = match stopped {
        Err(status) => outcome_of(status),
        Ok(why) => {
            tracing::warn!(
                pid,
                phase = phase.name(),
                ?why,
                "stopping the custom script's process group"
            );
            stop_group(&mut child, pgid, limits.grace)
                .await
                .map_err(wait_err)?;
            why
        }
    };
    guard.armed = false;

    // Background children may hold the pipes open; read what is there, then stop reading.
    let drain = Instant::now() + DRAIN;
    for mut reader in readers.into_iter().flatten() {
        if tokio::time::timeout_at(drain, &mut reader).await.is_err() {
            reader.abort();
            tracing::debug!(
                pid,
                "custom script output still open after exit; no longer read"
            );
        }
    }
    let output = match tail.lock() {
        Ok(mut tail) => tail.finish(phase),
        Err(poisoned) => poisoned.into_inner().finish(phase),
    };
    tracing::info!(
        pid,
        phase = phase.name(),
        ?outcome,
        "custom script finished"
    );
    Ok(ScriptRun {
        outcome,
        output,
        pid,
    })
}

/// Blocking form of [`run_script`] for synchronous callers (not from inside a tokio
/// runtime): `stop` turning true (set by a SIGTERM handler) cancels the run; it is checked
/// every 50 ms.
pub fn run_script_blocking(
    script: &Path,
    phase: Phase,
    limits: Limits,
    stop: &AtomicBool,
) -> Result<ScriptRun, RunError> {
    let rt = runtime().map_err(|source| RunError::Wait {
        path: script.to_path_buf(),
        source,
    })?;
    rt.block_on(run_script(script, phase, limits, async {
        while !stop.load(Ordering::SeqCst) {
            tokio::time::sleep(STOP_POLL).await;
        }
    }))
}

/// A single-threaded runtime with timers and child processes, for the blocking forms.
pub(crate) fn runtime() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

fn outcome_of(status: ExitStatus) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Outcome::Exited(code),
        (None, Some(sig)) => Outcome::Signalled(sig),
        (None, None) => Outcome::Exited(-1),
    }
}

/// SIGTERM to the group; after `grace` (or earlier once the group is empty) SIGKILL to
/// whatever is left; then reap the script.
async fn stop_group(
    child: &mut tokio::process::Child,
    pgid: Pid,
    grace: Duration,
) -> io::Result<()> {
    let _ = killpg(pgid, Signal::SIGTERM);
    let deadline = Instant::now() + grace;
    let mut reaped = tokio::time::timeout_at(deadline, child.wait())
        .await
        .is_ok();
    // The script may be gone while children it started are still shutting down.
    while Instant::now() < deadline && group_alive(pgid) {
        tokio::time::sleep(POLL).await;
    }
    if group_alive(pgid) {
        let _ = killpg(pgid, Signal::SIGKILL);
    }
    if !reaped {
        child.wait().await?;
        reaped = true;
    }
    debug_assert!(reaped);
    Ok(())
}

/// Whether any process of the group still runs. Signal 0 probes without sending, but it
/// also reaches zombies: children the script left behind are reparented to init, which may
/// reap them late (or never, in a container whose pid 1 does not reap). So when the probe
/// says yes, `/proc` decides: only members that are not zombies count.
fn group_alive(pgid: Pid) -> bool {
    if killpg(pgid, None).is_err() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .any(|stat| running_member(&stat, pgid.as_raw()))
}

/// Whether a `/proc/<pid>/stat` line is of a live (not zombie) process in group `pgid`.
/// Fields after the `)` that closes the command name: state, ppid, pgrp.
fn running_member(stat: &str, pgid: i32) -> bool {
    let Some((_, rest)) = stat.rsplit_once(") ") else {
        return false;
    };
    let mut fields = rest.split_whitespace();
    let state = fields.next().unwrap_or("Z");
    let pgrp = fields.nth(1).and_then(|p| p.parse::<i32>().ok());
    pgrp == Some(pgid) && state != "Z" && state != "X"
}

/// Kills the group if the run is abandoned half way.
struct GroupGuard {
    pgid: Pid,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
    }
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

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

fn log_line(stream: Stream, phase: Phase, line: &str) {
    match stream {
        Stream::Stdout => tracing::info!(target: "vmcust::script", phase = phase.name(), "{line}"),
        Stream::Stderr => tracing::warn!(target: "vmcust::script", phase = phase.name(), "{line}"),
    }
}

/// Reads one stream into `tail` line by line, never holding more than [`MAX_LINE_BYTES`] of
/// one line: the rest of a longer line is skipped and counted.
fn spawn_reader(
    pipe: impl AsyncRead + Unpin + Send + 'static,
    stream: Stream,
    phase: Phase,
    tail: Arc<Mutex<Tail>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        let mut cut = 0u64;
        loop {
            let chunk = match reader.fill_buf().await {
                Ok([]) | Err(_) => break,
                Ok(chunk) => chunk,
            };
            let (piece, ends_line) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], true),
                None => (chunk, false),
            };
            let room = MAX_LINE_BYTES.saturating_sub(line.len());
            line.extend_from_slice(&piece[..piece.len().min(room)]);
            cut += piece.len().saturating_sub(room) as u64;
            let used = piece.len() + usize::from(ends_line);
            reader.consume(used);
            if ends_line {
                emit(&tail, stream, phase, &mut line, &mut cut);
            }
        }
        if !line.is_empty() || cut > 0 {
            emit(&tail, stream, phase, &mut line, &mut cut);
        }
    })
}

/// Hands one finished line to the tail, noting how much of it was cut.
fn emit(tail: &Mutex<Tail>, stream: Stream, phase: Phase, line: &mut Vec<u8>, cut: &mut u64) {
    let mut text = String::from_utf8_lossy(line)
        .trim_end_matches('\r')
        .to_string();
    if *cut > 0 {
        text.push_str(&format!("… ({cut} more bytes of this line not kept)"));
    }
    line.clear();
    *cut = 0;
    let mut tail = match tail.lock() {
        Ok(tail) => tail,
        Err(poisoned) => poisoned.into_inner(),
    };
    tail.push(stream, text, phase);
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn proc_stat_lines_are_read_past_odd_command_names() {
        let cases = [
            ("42 (sh) S 1 42 42 0 -1", 42, true),
            ("43 (sleep) Z 1 42 42 0 -1", 42, false),
            ("44 (a) b) R 1 42 42 0 -1", 42, true),
            ("45 (sh) S 1 7 7 0 -1", 42, false),
            ("garbage", 42, false),
        ];
        for (stat, pgid, want) in cases {
            assert_eq!(running_member(stat, pgid), want, "{stat}");
        }
    }
}
