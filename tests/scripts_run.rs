//! Staging and running custom scripts with real processes: exit codes, captured output,
//! a cleared environment, and that timeouts and cancellation leave no process of the
//! script's group alive.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::kill;
use nix::unistd::Pid;
use vmcust::test_api::root::Root;
use vmcust::test_api::run::{run_script_blocking, Limits, Outcome, Phase, Stream};
use vmcust::test_api::stage::{stage_script, unstage, StageError};

/// Stages `body` as the package's script in a fresh root; returns the root and the script.
fn staged(body: &str) -> (tempfile::TempDir, PathBuf) {
    let root_dir = tempfile::tempdir().unwrap();
    let pkg = tempfile::tempdir().unwrap();
    fs::write(pkg.path().join("script.sh"), body).unwrap();
    let root = Root::new(root_dir.path()).unwrap();
    let s = stage_script(&root, pkg.path(), "script.sh").unwrap();
    (root_dir, s.script)
}

fn limits(timeout_ms: u64, grace_ms: u64) -> Limits {
    Limits {
        timeout: Duration::from_millis(timeout_ms),
        grace: Duration::from_millis(grace_ms),
    }
}

/// Alive means signal 0 reaches it and it is not a zombie waiting for init to reap it.
fn alive(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return false;
    }
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit_once(") ").map(|(_, r)| r.chars().next());
    !matches!(state, Some(Some('Z' | 'X')) | None)
}

/// Pids the script printed, one per stdout line that is a number.
fn pids(lines: &[(Stream, String)]) -> Vec<i32> {
    lines
        .iter()
        .filter_map(|(_, l)| l.trim().parse().ok())
        .collect()
}

#[test]
fn exit_codes_and_output_are_reported() {
    let cases = [
        (
            "#!/bin/sh\necho \"out $1\"\necho err >&2\nexit 0\n",
            Outcome::Exited(0),
        ),
        (
            "#!/bin/sh\necho \"out $1\"\necho err >&2\nexit 3\n",
            Outcome::Exited(3),
        ),
        (
            "#!/bin/sh\necho \"out $1\"\necho err >&2\nkill -USR1 $$\n",
            Outcome::Signalled(10),
        ),
    ];
    for (body, want) in cases {
        let (_r, script) = staged(body);
        let run = run_script_blocking(
            &script,
            Phase::Pre,
            Limits::default(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(run.outcome, want, "{body}");
        let mut out = run.output.clone();
        out.sort_by_key(|(s, _)| *s == Stream::Stderr);
        assert_eq!(
            out,
            [
                (Stream::Stdout, "out precustomization".to_string()),
                (Stream::Stderr, "err".to_string())
            ],
            "{body}"
        );
    }
}

#[test]
fn environment_is_cleared_and_cwd_is_the_staging_dir() {
    let (_r, script) = staged("#!/bin/sh\npwd\nenv | sort\n");
    let run = run_script_blocking(
        &script,
        Phase::Post,
        Limits::default(),
        &AtomicBool::new(false),
    )
    .unwrap();
    let lines: Vec<&str> = run.output.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(lines[0], script.parent().unwrap().to_str().unwrap());
    assert!(lines.contains(&"HOME=/root"), "{lines:?}");
    assert!(lines.contains(&"LANG=C"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("PATH=/usr/local/sbin:")));
    // cargo runs tests with CARGO_* set; none of it reaches the script.
    assert!(!lines.iter().any(|l| l.starts_with("CARGO")), "{lines:?}");
}

#[test]
fn a_hanging_script_and_its_background_child_are_killed_on_timeout() {
    let (_r, script) = staged("#!/bin/sh\nsleep 30 &\necho $!\necho $$\nsleep 30\n");
    let start = Instant::now();
    let run = run_script_blocking(
        &script,
        Phase::Pre,
        limits(500, 300),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(run.outcome, Outcome::TimedOut);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    let pids = pids(&run.output);
    assert_eq!(pids.len(), 2, "{:?}", run.output);
    assert!(pids.contains(&(run.pid as i32)));
    for pid in pids {
        assert!(!alive(pid), "pid {pid} survived the timeout");
    }
}

#[test]
fn a_group_that_ignores_sigterm_gets_sigkill_after_the_grace() {
    let (_r, script) = staged("#!/bin/sh\ntrap '' TERM\nsleep 30 &\necho $!\necho $$\nwait\n");
    let start = Instant::now();
    let run = run_script_blocking(
        &script,
        Phase::Pre,
        limits(300, 400),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(run.outcome, Outcome::TimedOut);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(700),
        "{took:?}: grace not given"
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
    for pid in pids(&run.output) {
        assert!(!alive(pid), "pid {pid} survived SIGKILL");
    }
}

#[test]
fn the_blocking_form_stops_on_its_flag() {
    let (_r, script) = staged("#!/bin/sh\nsleep 30 &\necho $!\necho $$\nsleep 30\n");
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::SeqCst);
        Instant::now()
    });
    let run = run_script_blocking(&script, Phase::Pre, limits(60_000, 5_000), &stop).unwrap();
    let took = setter.join().unwrap().elapsed();
    assert_eq!(run.outcome, Outcome::Cancelled);
    assert!(took < Duration::from_secs(1), "{took:?}");
    for pid in pids(&run.output) {
        assert!(!alive(pid), "pid {pid} survived");
    }
}

#[test]
fn a_background_child_holding_the_pipes_does_not_hang_a_finished_script() {
    let (_r, script) = staged("#!/bin/sh\nsleep 5 &\necho $!\nexit 0\n");
    let start = Instant::now();
    let run = run_script_blocking(
        &script,
        Phase::Post,
        Limits::default(),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(run.outcome, Outcome::Exited(0));
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    for pid in pids(&run.output) {
        let _ = kill(Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
}

#[test]
fn a_script_that_cannot_start_is_a_spawn_error() {
    let (_r, script) = staged("no shebang, not executable\n");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o600)).unwrap();
    let err = run_script_blocking(
        &script,
        Phase::Pre,
        Limits::default(),
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert!(
        matches!(err, vmcust::test_api::scripts::RunError::Spawn { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("precustomization"), "{err}");
}

#[test]
fn staging_strips_every_cr_and_keeps_it_private() {
    let (r, script) = staged("#!/bin/sh\r\necho test-CR-strip\r\r\n");
    assert_eq!(
        fs::read(&script).unwrap(),
        b"#!/bin/sh\necho test-CR-strip\n"
    );
    assert_eq!(script, r.path().join("root/.customization/customize.sh"));
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&script), 0o700);
    assert_eq!(mode(script.parent().unwrap()), 0o700);
    unstage(&Root::new(r.path()).unwrap()).unwrap();
    assert!(!script.parent().unwrap().exists());
}

#[test]
fn staging_refuses_what_it_must_not_copy() {
    let root_dir = tempfile::tempdir().unwrap();
    let root = Root::new(root_dir.path()).unwrap();
    let pkg = tempfile::tempdir().unwrap();
    fs::write(pkg.path().join("real.sh"), "#!/bin/sh\n").unwrap();
    symlink("/etc/passwd", pkg.path().join("link.sh")).unwrap();
    fs::create_dir(pkg.path().join("dir.sh")).unwrap();
    // A sparse file over the cap: refused without being read whole.
    let big = fs::File::create(pkg.path().join("big.sh")).unwrap();
    big.set_len(vmcust::test_api::stage::MAX_SCRIPT_BYTES + 1)
        .unwrap();
    type Check = fn(&StageError) -> bool;
    let cases: [(&str, Check); 7] = [
        ("big.sh", |e| {
            matches!(e, StageError::TooLarge { max: 4194304, .. })
        }),
        ("missing.sh", |e| matches!(e, StageError::NotFound { .. })),
        ("../real.sh", |e| matches!(e, StageError::BadName { .. })),
        ("", |e| matches!(e, StageError::BadName { .. })),
        ("..", |e| matches!(e, StageError::BadName { .. })),
        ("link.sh", |e| matches!(e, StageError::NotRegular { .. })),
        ("dir.sh", |e| matches!(e, StageError::NotRegular { .. })),
    ];
    for (name, ok) in cases {
        let err = stage_script(&root, pkg.path(), name).unwrap_err();
        assert!(ok(&err), "{name}: {err:?}");
    }
    // A symlinked staging directory is never written through.
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir_all(root_dir.path().join("root")).unwrap();
    symlink(outside.path(), root_dir.path().join("root/.customization")).unwrap();
    let err = stage_script(&root, pkg.path(), "real.sh").unwrap_err();
    assert!(matches!(err, StageError::BadStagingDir { .. }), "{err:?}");
    assert!(err.to_string().contains("/root/.customization"), "{err}");
    assert!(fs::read_dir(outside.path()).unwrap().next().is_none());
}

/// Issue 9: a script printing a huge line and many lines keeps a bounded tail per stream,
/// each line cut short with the count of what was cut.
#[test]
fn output_is_bounded_per_stream_and_per_line() {
    use vmcust::test_api::run::{KEPT_BYTES, KEPT_LINES, MAX_LINE_BYTES};
    let (_root, script) = staged(
        "#!/bin/sh\nhead -c 20000000 /dev/zero | tr '\\0' x\necho\nseq 1 200000 >&2\necho last\n",
    );
    let run = run_script_blocking(
        &script,
        Phase::Post,
        limits(60_000, 100),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(run.outcome, Outcome::Exited(0));
    for stream in [Stream::Stdout, Stream::Stderr] {
        let lines = run.output.iter().filter(|(s, _)| *s == stream).count();
        assert!(lines <= KEPT_LINES, "{stream:?}: {lines} lines kept");
        let bytes: usize = run
            .output
            .iter()
            .filter(|(s, _)| *s == stream)
            .map(|(_, l)| l.len())
            .sum();
        assert!(bytes <= KEPT_BYTES, "{stream:?}: {bytes} bytes kept");
    }
    let long = &run
        .output
        .iter()
        .find(|(_, l)| l.starts_with("xxx"))
        .unwrap()
        .1;
    assert!(long.len() < MAX_LINE_BYTES + 100, "{}", long.len());
    assert!(
        long.ends_with("(19995904 more bytes of this line not kept)"),
        "{}",
        &long[long.len() - 80..]
    );
    // The two streams are read side by side, so only each stream's own order is fixed.
    let last = |stream: Stream| {
        run.output
            .iter()
            .rfind(|(s, _)| *s == stream)
            .map(|(_, l)| l.as_str())
    };
    assert_eq!(last(Stream::Stdout), Some("last"));
    assert_eq!(last(Stream::Stderr), Some("200000"));
}
