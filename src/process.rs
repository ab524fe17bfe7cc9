//! The one way vmcust runs another program — the custom scripts, user-data scripts,
//! `vmware-rpctool`/`vmtoolsd`, `vmware-toolbox-cmd`, the network stack's reload
//! commands: its own process group (so nothing it starts outlives it), a cleared
//! environment, a timeout after which the whole group gets SIGTERM, a grace period and
//! SIGKILL, SIGTERM to vmcust stopping it the same way, a retry while the program file is
//! still open for writing elsewhere (ETXTBSY), and bounded output. A program of another
//! root (a custom script, `#!` user-data, `runcmd`, a check's tool) runs sealed inside
//! that root ([`Sandbox`]), never on the machine running vmcust.
//!
//! Synchronous, with a thread per output stream and one waiting for the child: the boot
//! engine has nothing else to do while a program runs, so an async runtime would only add
//! weight (see `docs/architecture.md`). The stop flag set by the SIGTERM handler is looked
//! at every [`STOP_CHECK`]; everything else wakes on the event itself.

use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// `PATH` given to every program: the usual system directories.
pub(crate) const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// The first executable file called `name` in the directories of a `PATH`-style value:
/// the one PATH lookup. Empty and relative entries are skipped: a program is never looked
/// up relative to whatever directory vmcust happens to run in.
pub(crate) fn find_on_path(name: &str, path_var: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// A longer output line is cut to this many bytes (the rest is counted, not kept).
pub(crate) const MAX_LINE_BYTES: usize = 4096;
/// How often the stop flag is looked at while a program runs.
pub(crate) const STOP_CHECK: Duration = Duration::from_millis(50);
/// How long output is still read after the program exits, for background children that
/// keep the pipes open.
const DRAIN: Duration = Duration::from_millis(500);
/// How often the group is checked for survivors during the grace period.
const GROUP_CHECK: Duration = Duration::from_millis(20);

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory (default: `/`).
    pub cwd: Option<PathBuf>,
    /// Environment variables besides `PATH` and `LANG=C`.
    pub env: Vec<(String, String)>,
    /// How long it may run before its group is stopped.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL to the group.
    pub grace: Duration,
    /// What it reads on its standard input (written from a thread, then closed); empty:
    /// `/dev/null`.
    pub stdin: Vec<u8>,
}

impl Cmd {
    /// `program args…` with the given timeout and a one-second grace period.
    pub(crate) fn new(program: impl Into<PathBuf>, args: &[&str], timeout: Duration) -> Cmd {
        Cmd {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: None,
            env: Vec::new(),
            timeout,
            grace: Duration::from_secs(1),
            stdin: Vec::new(),
        }
    }
}

/// Which stream output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    /// `stdout` or `stderr`.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// How output is taken.
pub(crate) enum Output<'a> {
    /// Line by line, each line (cut at [`MAX_LINE_BYTES`]) handed to the callback as it is
    /// read; the callback decides what to keep and log.
    Lines(&'a mut dyn FnMut(Stream, String)),
    /// The first `n` bytes of each stream, whole (a tool's reply).
    Bytes(usize),
}

/// How a program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It exited by itself with this status.
    Exited(i32),
    /// A signal we did not send killed it.
    Signalled(i32),
    /// It ran past the timeout; its group was stopped.
    TimedOut,
    /// vmcust was asked to stop (SIGTERM); the group was stopped.
    Stopped,
}

impl std::fmt::Display for Ended {
    /// In words, for logs and messages: `exit status 1`, `killed by signal 9`, ….
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Exited(n) => write!(f, "exit status {n}"),
            Ended::Signalled(n) => write!(f, "killed by signal {n}"),
            Ended::TimedOut => f.write_str("timed out (its process group was stopped)"),
            Ended::Stopped => f.write_str("stopped (vmcust was asked to stop)"),
        }
    }
}

/// The end of a run.
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    /// How it ended.
    pub ended: Ended,
    /// Its process id, which is also its process group id.
    pub pid: u32,
    /// The first bytes of standard output ([`Output::Bytes`] only).
    pub stdout: Vec<u8>,
    /// The first bytes of standard error ([`Output::Bytes`] only).
    pub stderr: Vec<u8>,
}

impl Finished {
    /// Whether it exited with status 0.
    pub(crate) fn success(&self) -> bool {
        self.ended == Ended::Exited(0)
    }
}

mod sandbox;

pub(crate) use sandbox::Sandbox;

/// Runs `cmd` as [`run`] does, inside `sandbox`: `cmd.program` and `cmd.cwd` are paths
/// inside the root.
pub(crate) fn run_sandboxed(
    cmd: &Cmd,
    sandbox: &Sandbox,
    output: Output,
    stop: &AtomicBool,
) -> io::Result<Finished> {
    run_with(cmd, Some(sandbox), output, stop)
}

enum Event {
    Line(Stream, String),
    ReaderDone,
    Exited(io::Result<ExitStatus>),
}

/// Runs `cmd`, taking its output as `output` says, until it ends, its timeout passes or
/// `stop` is set. An error means it could not be started (or waited for).
pub(crate) fn run(cmd: &Cmd, output: Output, stop: &AtomicBool) -> io::Result<Finished> {
    run_with(cmd, None, output, stop)
}

fn run_with(
    cmd: &Cmd,
    sandbox: Option<&Sandbox>,
    output: Output,
    stop: &AtomicBool,
) -> io::Result<Finished> {
    let (tx, rx) = mpsc::channel();
    let started = start(cmd, sandbox, &tx)?;
    let pid = started.pid;
    let pgid = Pid::from_raw(pid as i32);
    let limit = match &output {
        Output::Bytes(n) => Some(*n),
        Output::Lines(_) => None,
    };
    let readers = [
        started
            .stdout
            .map(|p| read(p, Stream::Stdout, limit, tx.clone())),
        started
            .stderr
            .map(|p| read(p, Stream::Stderr, limit, tx.clone())),
    ];
    drop(tx);
    if let Some(mut pipe) = started.stdin {
        let input = cmd.stdin.clone();
        // A program that does not read it all gets EPIPE here, not a hang.
        thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut pipe, &input);
        });
    }

    let mut on_line = match output {
        Output::Lines(f) => Some(f),
        Output::Bytes(_) => None,
    };
    let mut deliver = |stream: Stream, line: String| {
        if let Some(f) = on_line.as_mut() {
            f(stream, line);
        }
    };
    let deadline = Instant::now() + cmd.timeout;
    let mut readers_left = readers.iter().flatten().count();
    let mut stopped = None;
    let status = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(STOP_CHECK)) {
            Ok(Event::Line(stream, line)) => deliver(stream, line),
            Ok(Event::ReaderDone) => readers_left -= 1,
            Ok(Event::Exited(status)) => break status?,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::SeqCst) {
                    stopped = Some(Ended::Stopped);
                } else if left.is_zero() {
                    stopped = Some(Ended::TimedOut);
                }
                if let Some(why) = stopped {
                    tracing::warn!(
                        pid,
                        why = %why,
                        "stopping the process group of {}",
                        cmd.program.display()
                    );
                    break stop_group(pgid, cmd.grace, &rx, &mut deliver, &mut readers_left)?;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(io::Error::other("lost track of the child process"))
            }
        }
    };
    // Background children may hold the pipes open: read what is there, then stop reading.
    let drain = Instant::now() + DRAIN;
    while readers_left > 0 {
        match rx.recv_timeout(drain.saturating_duration_since(Instant::now())) {
            Ok(Event::Line(stream, line)) => deliver(stream, line),
            Ok(Event::ReaderDone) => readers_left -= 1,
            Ok(Event::Exited(_)) => {}
            Err(_) => break,
        }
    }
    let [out, err] = readers;
    let bytes = |h: Option<thread::JoinHandle<Vec<u8>>>| match (h, readers_left) {
        (Some(h), 0) => h.join().unwrap_or_default(),
        _ => Vec::new(),
    };
    Ok(Finished {
        ended: stopped.unwrap_or_else(|| from_status(status)),
        pid,
        stdout: bytes(out),
        stderr: bytes(err),
    })
}

fn from_status(status: ExitStatus) -> Ended {
    match (status.code(), status.signal()) {
        (Some(code), _) => Ended::Exited(code),
        (None, Some(sig)) => Ended::Signalled(sig),
        (None, None) => Ended::Exited(-1),
    }
}

/// A started program: its process id (also its group's) and its output pipes. A thread
/// waits for it and sends [`Event::Exited`].
struct Started {
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
}

/// Starts the program in its own process group with a cleared environment, directly or
/// in `sandbox`. A program file that another thread's fork still holds open for writing
/// (ETXTBSY, seen with freshly written scripts) is retried for a moment.
fn start(cmd: &Cmd, sandbox: Option<&Sandbox>, tx: &mpsc::Sender<Event>) -> io::Result<Started> {
    let mut attempt = 0;
    loop {
        let started = match sandbox {
            None => start_here(cmd, tx),
            Some(sandbox) => start_sealed(cmd, sandbox, tx),
        };
        match started {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && attempt < 10 => {
                attempt += 1;
                thread::sleep(GROUP_CHECK);
            }
            other => return other,
        }
    }
}

/// The program on this machine, and a thread that waits for it.
fn start_here(cmd: &Cmd, tx: &mpsc::Sender<Event>) -> io::Result<Started> {
    let mut command = command(cmd);
    let cwd = cmd.cwd.as_deref().unwrap_or(Path::new("/"));
    // Only where it is needed: a static build's std can change directory in the child
    // only by forking (posix_spawn's chdir is looked up at run time, which a static
    // binary cannot do), and a fork copies the page tables of this whole process,
    // several times the cost of a spawn on an emulated guest's boot. The boot units run
    // in `/`, the default.
    if !std::env::current_dir().is_ok_and(|here| here == cwd) {
        command.current_dir(cwd);
    }
    let mut child = command.spawn()?;
    let started = Started {
        pid: child.id(),
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
    };
    let waiter = tx.clone();
    thread::spawn(move || {
        let _ = waiter.send(Event::Exited(child.wait()));
    });
    Ok(started)
}

/// The program in `sandbox`, started from a thread of its own that then waits for it:
/// the thread's next child is the first of a new PID namespace, and the box ends when the
/// thread does (see [`Sandbox`]). Each attempt needs a new thread: a thread enters one new
/// PID namespace only.
fn start_sealed(cmd: &Cmd, sandbox: &Sandbox, tx: &mpsc::Sender<Event>) -> io::Result<Started> {
    let (back, started) = mpsc::sync_channel(1);
    let (cmd, sandbox, waiter) = (cmd.clone(), sandbox.clone(), tx.clone());
    thread::spawn(move || {
        let mut command = command(&cmd);
        let cwd = cmd.cwd.as_deref().unwrap_or(Path::new("/"));
        let (mut child, status) = match sandbox.spawn(&mut command, cwd) {
            Ok(spawned) => spawned,
            Err(e) => {
                let _ = back.send(Err(e));
                return;
            }
        };
        let _ = back.send(Ok(Started {
            pid: child.id(),
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
        }));
        let ended = child
            .wait()
            .map(|init| sandbox::program_status(init, status));
        let _ = waiter.send(Event::Exited(ended));
    });
    started
        .recv()
        .map_err(|_| io::Error::other("the thread starting the sealed program ended"))?
}

/// The command line of `cmd`: a cleared environment, no input, piped output, a process
/// group of its own.
fn command(cmd: &Cmd) -> Command {
    let mut command = Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .env_clear()
        .env("PATH", PATH)
        .env("LANG", "C")
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(match cmd.stdin.is_empty() {
            true => Stdio::null(),
            false => Stdio::piped(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    command
}

/// SIGTERM to the group; after `grace` (or as soon as the group is empty) SIGKILL to
/// whatever is left; returns the program's exit status. Lines read meanwhile are delivered.
fn stop_group(
    pgid: Pid,
    grace: Duration,
    rx: &mpsc::Receiver<Event>,
    deliver: &mut dyn FnMut(Stream, String),
    readers_left: &mut usize,
) -> io::Result<ExitStatus> {
    let _ = killpg(pgid, Signal::SIGTERM);
    let deadline = Instant::now() + grace;
    let mut status = None;
    loop {
        if status.is_some() && !group_alive(pgid) {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let _ = killpg(pgid, Signal::SIGKILL);
            // SIGKILL is delivered asynchronously: wait (briefly) until nothing of the
            // group runs any more, so callers never see a survivor.
            let killed = Instant::now() + Duration::from_secs(2);
            while group_alive(pgid) && Instant::now() < killed {
                thread::sleep(Duration::from_millis(5));
            }
            break;
        }
        match rx.recv_timeout(left.min(GROUP_CHECK)) {
            Ok(Event::Exited(s)) => status = Some(s?),
            Ok(Event::Line(stream, line)) => deliver(stream, line),
            Ok(Event::ReaderDone) => *readers_left -= 1,
            Err(_) => {}
        }
    }
    match status {
        Some(s) => Ok(s),
        None => loop {
            match rx.recv() {
                Ok(Event::Exited(s)) => return s,
                Ok(Event::Line(stream, line)) => deliver(stream, line),
                Ok(Event::ReaderDone) => *readers_left -= 1,
                Err(_) => return Err(io::Error::other("lost track of the child process")),
            }
        },
    }
}

/// Whether any process of the group still runs. Signal 0 probes without sending, but it
/// also reaches zombies: children the program left behind are reparented to init, which may
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

/// Reads one stream on a thread. With `limit`, keeps its first `limit` bytes (and reads
/// the rest away); without, sends each line, never holding more than [`MAX_LINE_BYTES`]
/// of one line (the rest of a longer one is counted).
fn read(
    mut pipe: impl Read + Send + 'static,
    stream: Stream,
    limit: Option<usize>,
    tx: mpsc::Sender<Event>,
) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut line = Vec::new();
        let mut cut = 0u64;
        let mut buf = [0u8; 8192];
        let emit = |line: &mut Vec<u8>, cut: &mut u64| {
            let mut text = String::from_utf8_lossy(line)
                .trim_end_matches('\r')
                .to_string();
            if *cut > 0 {
                text.push_str(&format!("… ({cut} more bytes of this line not kept)"));
            }
            line.clear();
            *cut = 0;
            let _ = tx.send(Event::Line(stream, text));
        };
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Some(limit) = limit {
                let room = limit.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                continue;
            }
            for piece in buf[..n].split_inclusive(|&b| b == b'\n') {
                let (body, ends) = match piece.strip_suffix(b"\n") {
                    Some(b) => (b, true),
                    None => (piece, false),
                };
                let room = MAX_LINE_BYTES.saturating_sub(line.len());
                line.extend_from_slice(&body[..body.len().min(room)]);
                cut += body.len().saturating_sub(room) as u64;
                if ends {
                    emit(&mut line, &mut cut);
                }
            }
        }
        if limit.is_none() && (!line.is_empty() || cut > 0) {
            emit(&mut line, &mut cut);
        }
        let _ = tx.send(Event::ReaderDone);
        kept
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(10);

    fn sh(script: &str, timeout: Duration) -> Cmd {
        Cmd::new("/bin/sh", &["-c", script], timeout)
    }

    #[test]
    fn a_program_is_found_only_as_an_executable_in_an_absolute_directory() {
        use std::os::unix::fs::PermissionsExt;
        let bin = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let tool = bin.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A non-executable file of the same name earlier on the path is skipped.
        std::fs::write(other.path().join("tool"), "").unwrap();
        let join = |dirs: &[&Path]| std::env::join_paths(dirs).unwrap();
        let cases: [(std::ffi::OsString, Option<&Path>); 5] = [
            (
                join(&[other.path(), Path::new("relative"), bin.path()]),
                Some(&tool),
            ),
            (join(&[other.path()]), None),
            (join(&[Path::new(""), bin.path()]), Some(&tool)),
            (std::ffi::OsString::new(), None),
            (join(&[bin.path().join("tool").as_path()]), None),
        ];
        for (path, want) in cases {
            assert_eq!(find_on_path("tool", &path).as_deref(), want, "{path:?}");
        }
        // A relative directory is never searched, even where it holds the program.
        let up = std::env::current_dir().unwrap().components().count() - 1;
        let relative = Path::new(&"../".repeat(up)).join(bin.path().strip_prefix("/").unwrap());
        assert!(relative.join("tool").is_file(), "{}", relative.display());
        assert_eq!(find_on_path("tool", &join(&[relative.as_path()])), None);
    }

    /// The child starts in its directory whether or not this process is there already
    /// (where it is, none is set, so that the spawn need not fork).
    #[test]
    fn the_child_runs_in_its_directory() {
        let no = AtomicBool::new(false);
        let here = std::env::current_dir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let other = other.path().canonicalize().unwrap();
        for (cwd, want) in [
            (None, PathBuf::from("/")),
            (Some(here.clone()), here.clone()),
            (Some(other.clone()), other.clone()),
        ] {
            let mut cmd = sh("pwd -P", LONG);
            cmd.cwd = cwd.clone();
            let f = run(&cmd, Output::Bytes(4096), &no).unwrap();
            let got = String::from_utf8(f.stdout).unwrap();
            assert_eq!(Path::new(got.trim_end()), want, "{cwd:?}");
        }
    }

    #[test]
    fn exit_status_and_whole_output() {
        let no = AtomicBool::new(false);
        let f = run(
            &sh("echo out; echo err >&2; exit 3", LONG),
            Output::Bytes(1 << 20),
            &no,
        )
        .unwrap();
        assert_eq!(f.ended, Ended::Exited(3));
        assert_eq!(
            (f.stdout.as_slice(), f.stderr.as_slice()),
            (&b"out\n"[..], &b"err\n"[..])
        );
        assert!(run(
            &Cmd::new("/nonexistent/tool", &[], LONG),
            Output::Bytes(1),
            &no
        )
        .is_err());
    }

    #[test]
    fn lines_are_delivered_and_cut() {
        let no = AtomicBool::new(false);
        let mut got = Vec::new();
        let mut take = |s: Stream, l: String| got.push((s, l));
        let cmd = sh(
            "echo a; printf 'b\\r\\n'; head -c 5000 /dev/zero | tr '\\0' x",
            LONG,
        );
        assert!(run(&cmd, Output::Lines(&mut take), &no).unwrap().success());
        assert_eq!(got[0], (Stream::Stdout, "a".to_string()));
        assert_eq!(got[1].1, "b");
        assert!(got[2].1.starts_with(&"x".repeat(MAX_LINE_BYTES)));
        assert!(
            got[2].1.ends_with("(904 more bytes of this line not kept)"),
            "{}",
            got[2].1
        );
    }

    #[test]
    fn a_bare_program_name_is_found_on_the_fixed_path() {
        let no = AtomicBool::new(false);
        let f = run(&Cmd::new("true", &[], LONG), Output::Bytes(1), &no).unwrap();
        assert!(f.success());
    }

    #[test]
    fn bytes_are_bounded() {
        let no = AtomicBool::new(false);
        let f = run(
            &sh("head -c 5000000 /dev/zero", LONG),
            Output::Bytes(1000),
            &no,
        )
        .unwrap();
        assert!(f.success());
        assert_eq!(f.stdout.len(), 1000);
    }

    #[test]
    fn a_hanging_group_is_stopped_at_the_timeout() {
        let no = AtomicBool::new(false);
        let t = Instant::now();
        // The child leaves a background grandchild holding the pipes open.
        let f = run(
            &sh("sleep 30 & sleep 30", Duration::from_millis(300)),
            Output::Bytes(10),
            &no,
        )
        .unwrap();
        assert_eq!(f.ended, Ended::TimedOut);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert!(!group_alive(Pid::from_raw(f.pid as i32)));
    }

    #[test]
    fn the_stop_flag_stops_the_group() {
        let stop = AtomicBool::new(true);
        let f = run(
            &Cmd::new("/bin/sleep", &["30"], LONG),
            Output::Bytes(10),
            &stop,
        )
        .unwrap();
        assert_eq!(f.ended, Ended::Stopped);
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
