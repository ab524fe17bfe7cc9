//! Waiting for open-vm-tools to drop `cust.cfg` — or for a CD drive to appear — with
//! inotify rather than polling.
//!
//! Tools copies the package files into `/var/run/vmware-imc` and renames `cust.cfg` into
//! place last, so the moment `cust.cfg` exists the whole set is there. cloud-init checks
//! every 5 s; an inotify watch wakes us within milliseconds of the rename. A CD-ROM whose
//! driver loads from udev after the early unit started shows up as `/dev/sr0` being
//! created, which the same wait sees.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// How often a wait looks at the stop flag and reports progress even without events.
const SLICE: Duration = Duration::from_millis(100);
/// How often progress is logged while waiting.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// How a wait ended.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waited {
    /// The file is there; it took this long.
    Found(Duration),
    /// The maximum passed without the file.
    TimedOut,
    /// `stop` was set (SIGTERM).
    Interrupted,
}

/// Waits until `path` exists, for at most `max`. With `max` zero the file is looked for
/// once, without waiting. `stop` is checked at least every 100 ms.
#[cfg(test)]
pub(crate) fn wait_for_file(
    path: &Path,
    max: Duration,
    stop: &AtomicBool,
) -> std::io::Result<Waited> {
    let what = path.display().to_string();
    Ok(
        match wait_for_any(&[path.to_path_buf()], &what, max, stop)? {
            WaitedAny::Found(_, after) => Waited::Found(after),
            WaitedAny::TimedOut => Waited::TimedOut,
            WaitedAny::Interrupted => Waited::Interrupted,
        },
    )
}

/// How waiting for several paths ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitedAny {
    /// `paths[index]` exists, after this long.
    Found(usize, Duration),
    /// None appeared within the maximum.
    TimedOut,
    /// `stop` was set (SIGTERM).
    Interrupted,
}

/// Waits until any of `paths` exists (a file, a device node), for at most `max`; `what`
/// names them in the progress lines.
pub(crate) fn wait_for_any(
    paths: &[PathBuf],
    what: &str,
    max: Duration,
    stop: &AtomicBool,
) -> std::io::Result<WaitedAny> {
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
    let result = wait_with(&inotify, paths, what, max, stop);
    // Closing an inotify descriptor waits for an RCU grace period (10-20 ms here); the
    // customization should not wait for that, so the close happens on another thread.
    std::thread::spawn(move || drop(inotify));
    result
}

fn wait_with(
    inotify: &Inotify,
    paths: &[PathBuf],
    what: &str,
    max: Duration,
    stop: &AtomicBool,
) -> std::io::Result<WaitedAny> {
    let start = Instant::now();
    let deadline = start + max;
    // One watch per distinct nearest existing directory, moved down as directories
    // appear (a watch on `/var/run` becomes one on `/var/run/vmware-imc`).
    let mut watched: Vec<(PathBuf, WatchDescriptor)> = Vec::new();
    let mut next_progress = start + PROGRESS_EVERY;
    loop {
        // Watch first, then look: a file created in between still wakes the poll.
        let anchors: Vec<PathBuf> = paths.iter().map(|p| nearest_existing_dir(p)).collect();
        for (dir, wd) in std::mem::take(&mut watched) {
            if anchors.contains(&dir) {
                watched.push((dir, wd));
            } else {
                let _ = inotify.rm_watch(wd);
            }
        }
        for anchor in anchors {
            if !watched.iter().any(|(d, _)| *d == anchor) {
                let flags = AddWatchFlags::IN_CREATE
                    | AddWatchFlags::IN_MOVED_TO
                    | AddWatchFlags::IN_CLOSE_WRITE;
                let wd = inotify.add_watch(&anchor, flags)?;
                watched.push((anchor, wd));
            }
        }
        if let Some(i) = paths.iter().position(|p| p.exists()) {
            return Ok(WaitedAny::Found(i, start.elapsed()));
        }
        if stop.load(Ordering::SeqCst) {
            return Ok(WaitedAny::Interrupted);
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(WaitedAny::TimedOut);
        }
        if now >= next_progress {
            tracing::info!(
                "waiting for {what} ({} s of at most {} s)",
                start.elapsed().as_secs(),
                max.as_secs()
            );
            next_progress += PROGRESS_EVERY;
        }
        let slice = (deadline - now).min(SLICE);
        let timeout = PollTimeout::try_from(slice).unwrap_or(PollTimeout::ZERO);
        let mut fds = [PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
        match inotify.read_events() {
            Ok(_) | Err(Errno::EAGAIN) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// The deepest directory on the way to `path` that exists now (ending at `/`).
fn nearest_existing_dir(path: &Path) -> PathBuf {
    let mut dir = path.parent().unwrap_or(Path::new("/"));
    while !dir.is_dir() {
        match dir.parent() {
            Some(p) => dir = p,
            None => break,
        }
    }
    dir.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    #[test]
    fn finds_a_file_that_is_already_there_even_with_zero_wait() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("cust.cfg"), "").unwrap();
        let got = wait_for_file(
            &d.path().join("cust.cfg"),
            Duration::ZERO,
            &AtomicBool::new(false),
        );
        assert!(matches!(got.unwrap(), Waited::Found(_)));
    }

    #[test]
    fn times_out_after_the_maximum() {
        let d = tempfile::tempdir().unwrap();
        let t = Instant::now();
        let got = wait_for_file(
            &d.path().join("cust.cfg"),
            Duration::from_millis(300),
            &AtomicBool::new(false),
        );
        assert_eq!(got.unwrap(), Waited::TimedOut);
        assert!(t.elapsed() >= Duration::from_millis(300));
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn wakes_on_a_rename_into_a_directory_created_later() {
        let d = tempfile::tempdir().unwrap();
        let imc = d.path().join("run/vmware-imc");
        let target = imc.join("cust.cfg");
        let writer = {
            let imc = imc.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(300));
                std::fs::create_dir_all(&imc).unwrap();
                std::fs::write(imc.join("cust.cfg.tmp"), "[MISC]\n").unwrap();
                std::fs::rename(imc.join("cust.cfg.tmp"), imc.join("cust.cfg")).unwrap();
                Instant::now()
            })
        };
        let got = wait_for_file(&target, Duration::from_secs(10), &AtomicBool::new(false));
        let seen = Instant::now();
        let renamed = writer.join().unwrap();
        assert!(matches!(got.unwrap(), Waited::Found(_)));
        // React within the poll slice at worst; inotify usually makes it ~immediate.
        assert!(seen.duration_since(renamed) < Duration::from_millis(150));
    }

    #[test]
    fn stop_interrupts_the_wait() {
        let d = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(true);
        let got = wait_for_file(&d.path().join("x"), Duration::from_secs(30), &stop);
        assert_eq!(got.unwrap(), Waited::Interrupted);
    }
}
