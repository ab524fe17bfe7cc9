//! Running a program the way the boot engine needs: its own process group (so that
//! nothing it starts outlives it), a timeout after which the whole group gets SIGTERM,
//! a grace period and SIGKILL, SIGTERM to vmcust stopping it the same way, retry while the
//! program file is still open for writing elsewhere (ETXTBSY), and a bounded tail of its
//! output. Synchronous: the early stage has nothing else to do while a tool runs.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// Bytes of each output stream kept (the newest).
pub const KEPT_OUTPUT: usize = 16 * 1024;
/// How often the stop flag is looked at while a program runs.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// How a program ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this status.
    Exited(i32),
    /// A signal killed it.
    Signalled(i32),
    /// It ran past the timeout and its group was stopped.
    TimedOut,
    /// vmcust was asked to stop (SIGTERM) and stopped the group.
    Stopped,
}

/// The end of a run and the tail of its output.
#[derive(Debug, Clone)]
pub struct Finished {
    /// How it ended.
    pub ended: Ended,
    /// The last [`KEPT_OUTPUT`] bytes of standard output and standard error, merged
    /// per stream (stdout first), lossily decoded.
    pub output: String,
}

impl Finished {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.ended == Ended::Exited(0)
    }
}

/// Runs `program` with `args` and a cleared environment but for `PATH`, `timeout` at
/// most, stopping early when `stop` is set. `grace` separates SIGTERM from SIGKILL.
pub fn run(
    program: &str,
    args: &[&str],
    timeout: Duration,
    grace: Duration,
    stop: &AtomicBool,
) -> std::io::Result<Finished> {
    let mut child = spawn(program, args)?;
    let pid = Pid::from_raw(child.id() as i32);
    let out = child.stdout.take().map(tail_reader);
    let err = child.stderr.take().map(tail_reader);
    let (tx, rx) = mpsc::channel();
    let waiter = thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send(());
        status
    });
    let deadline = Instant::now() + timeout;
    let mut ended = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(STOP_CHECK)) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if stop.load(Ordering::SeqCst) {
            ended = Some(Ended::Stopped);
        } else if left.is_zero() {
            ended = Some(Ended::TimedOut);
        }
        if ended.is_some() {
            stop_group(pid, grace, &rx);
            break;
        }
    }
    let status = waiter.join().expect("the waiter does not panic")?;
    // The group is gone or being killed: whatever it printed is read to the end.
    let _ = killpg(pid, Signal::SIGKILL);
    let mut output = out
        .map(|h| h.join().unwrap_or_default())
        .unwrap_or_default();
    output.push_str(
        &err.map(|h| h.join().unwrap_or_default())
            .unwrap_or_default(),
    );
    Ok(Finished {
        ended: ended.unwrap_or_else(|| from_status(status)),
        output,
    })
}

fn from_status(status: ExitStatus) -> Ended {
    match (status.code(), status.signal()) {
        (Some(code), _) => Ended::Exited(code),
        (None, Some(sig)) => Ended::Signalled(sig),
        (None, None) => Ended::Exited(-1),
    }
}

/// Starts the program in its own process group; a program file another thread's fork
/// still holds open for writing (ETXTBSY) is retried for a moment.
fn spawn(program: &str, args: &[&str]) -> std::io::Result<std::process::Child> {
    let mut attempt = 0;
    loop {
        let result = Command::new(program)
            .args(args)
            .env_clear()
            .env("PATH", crate::scripts::run::SCRIPT_PATH)
            .env("LANG", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn();
        match result {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && attempt < 10 => {
                attempt += 1;
                thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// SIGTERM to the group, up to `grace` for it to end, then SIGKILL.
fn stop_group(pid: Pid, grace: Duration, exited: &mpsc::Receiver<()>) {
    let _ = killpg(pid, Signal::SIGTERM);
    if exited.recv_timeout(grace).is_err() {
        let _ = killpg(pid, Signal::SIGKILL);
    }
}

/// Reads a stream to its end on a thread, keeping only its last [`KEPT_OUTPUT`] bytes.
fn tail_reader(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut kept: Vec<u8> = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * KEPT_OUTPUT {
                kept.drain(..kept.len() - KEPT_OUTPUT);
            }
        }
        if kept.len() > KEPT_OUTPUT {
            kept.drain(..kept.len() - KEPT_OUTPUT);
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(10);
    const GRACE: Duration = Duration::from_millis(200);

    #[test]
    fn exit_status_and_output() {
        let no = AtomicBool::new(false);
        let f = run(
            "sh",
            &["-c", "echo out; echo err >&2; exit 3"],
            LONG,
            GRACE,
            &no,
        )
        .unwrap();
        assert_eq!(f.ended, Ended::Exited(3));
        assert_eq!(f.output, "out\nerr\n");
        assert!(run("true", &[], LONG, GRACE, &no).unwrap().success());
        assert!(run("/nonexistent/tool", &[], LONG, GRACE, &no).is_err());
    }

    #[test]
    fn a_hanging_group_is_stopped_at_the_timeout() {
        let no = AtomicBool::new(false);
        let t = Instant::now();
        // The child leaves a background grandchild holding the pipes open.
        let f = run(
            "sh",
            &["-c", "sleep 30 & sleep 30"],
            Duration::from_millis(300),
            GRACE,
            &no,
        )
        .unwrap();
        assert_eq!(f.ended, Ended::TimedOut);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn output_is_bounded() {
        let no = AtomicBool::new(false);
        let f = run(
            "sh",
            &["-c", "head -c 5000000 /dev/zero | tr '\\0' x"],
            LONG,
            GRACE,
            &no,
        )
        .unwrap();
        assert!(f.success());
        assert_eq!(f.output.len(), KEPT_OUTPUT);
    }

    #[test]
    fn stop_flag_stops_the_group() {
        let stop = AtomicBool::new(true);
        let f = run("sleep", &["30"], LONG, GRACE, &stop).unwrap();
        assert_eq!(f.ended, Ended::Stopped);
    }
}
