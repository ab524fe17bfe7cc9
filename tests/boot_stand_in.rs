//! The real binary answering as `cloud-init` (through a symlink of that name), read the
//! way open-vm-tools reads it: version from the first digit, status by exit code and
//! substring.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use vmcust::test_api::equivalents::EQUIVALENTS;
use vmcust::test_api::root::Root;
use vmcust::test_api::state::{read_status, write_status, RunState, RunStatus, ROOT_ENV};

struct StandIn {
    _dir: tempfile::TempDir,
    link: PathBuf,
    root: PathBuf,
}

fn stand_in() -> StandIn {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let link = bin.join("cloud-init");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), &link).unwrap();
    let root = dir.path().join("root");
    // A VMware guest, where vmcust's units run.
    let dmi = root.join("sys/class/dmi/id");
    std::fs::create_dir_all(&dmi).unwrap();
    std::fs::write(dmi.join("sys_vendor"), "VMware, Inc.\n").unwrap();
    std::fs::write(dmi.join("product_name"), "VMware Virtual Platform\n").unwrap();
    StandIn {
        _dir: dir,
        link,
        root,
    }
}

impl StandIn {
    fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.link)
            .args(args)
            .env(ROOT_ENV, &self.root)
            .output()
            .unwrap()
    }

    fn set(&self, state: RunState) {
        let root = Root::new(&self.root).unwrap();
        let status = RunStatus::now(state, Some("early"), Some("network failed".into()));
        write_status(&root, &status).unwrap();
        assert_eq!(read_status(&root).unwrap(), Some(status));
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// open-vm-tools' reading of `cloud-init status` (reference §2.9).
fn tools_status(o: &Output) -> &'static str {
    if o.status.code() == Some(1) {
        return "ERROR";
    }
    let text = stdout(o);
    for (needle, state) in [
        ("not run", "NOT_RUN"),
        ("not started", "NOT_RUN"),
        ("running", "RUNNING"),
        ("done", "DONE"),
        ("error", "ERROR"),
        ("disabled", "DISABLED"),
    ] {
        if text.contains(needle) {
            return state;
        }
    }
    "UNKNOWN"
}

#[test]
fn version_is_one_tools_accepts_for_raw_data() {
    let p = stand_in();
    for flag in ["-v", "--version"] {
        let o = p.run(&[flag]);
        assert!(o.status.success(), "{o:?}");
        assert!(o.stderr.is_empty(), "{o:?}");
        let text = stdout(&o);
        // Tools starts at the first digit and reads <major>[-.]<minor>.
        let from = text.find(|c: char| c.is_ascii_digit()).unwrap();
        let mut parts = text[from..].split(['.', '-']);
        let major: u32 = parts.next().unwrap().parse().unwrap();
        let minor: u32 = parts
            .next()
            .unwrap()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap();
        assert!((major, minor) >= (21, 1), "{text}");
        assert!(text.contains("vmcust"), "{text}");
    }
}

#[test]
fn status_follows_the_run_engine() {
    let p = stand_in();
    let o = p.run(&["status"]);
    assert_eq!(
        (o.status.code(), tools_status(&o)),
        (Some(0), "NOT_RUN"),
        "{o:?}"
    );
    for (state, code, parsed) in [
        (RunState::Running, 0, "RUNNING"),
        (RunState::Done, 0, "DONE"),
        (RunState::Error, 1, "ERROR"),
        (RunState::Disabled, 0, "DISABLED"),
        (RunState::NotStarted, 0, "NOT_RUN"),
    ] {
        p.set(state);
        // `--wait` answers at once once the run is no longer going.
        let waits = !matches!(state, RunState::Running | RunState::NotStarted);
        for args in [
            &["status"][..],
            &["status", "--long"],
            &["status", "--wait"],
        ] {
            if args.contains(&"--wait") && !waits {
                continue;
            }
            let o = p.run(args);
            assert_eq!(o.status.code(), Some(code), "{state:?} {args:?} {o:?}");
            assert_eq!(tools_status(&o), parsed, "{state:?} {args:?} {o:?}");
        }
    }
    p.set(RunState::Error);
    let long = stdout(&p.run(&["status", "--long"]));
    assert!(
        long.contains("errors:\n\t- network failed\n")
            && long.contains("extended_status: error - done"),
        "{long}"
    );
}

#[test]
fn off_vmware_status_is_disabled_at_once() {
    // No VMware DMI (and not a VMware CPU): vmcust's units never run, so `status --wait`
    // must not wait for them (seen blocking on a real Debian 12 boot off VMware, tests/vm).
    let p = stand_in();
    std::fs::remove_dir_all(p.root.join("sys")).unwrap();
    for args in [
        &["status"][..],
        &["status", "--wait"],
        &["status", "--long"],
    ] {
        let start = Instant::now();
        let o = p.run(args);
        assert!(start.elapsed() < Duration::from_secs(2), "{args:?} waited");
        assert_eq!(
            (o.status.code(), tools_status(&o)),
            (Some(0), "DISABLED"),
            "{args:?} {o:?}"
        );
    }
    // A status the engine wrote still wins (e.g. `vmcust run` forced with a source).
    p.set(RunState::Done);
    assert_eq!(tools_status(&p.run(&["status"])), "DONE");
}

#[test]
fn status_wait_returns_when_the_run_ends() {
    let p = stand_in();
    p.set(RunState::Running);
    let root = p.root.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(600));
        let root = Root::new(&root).unwrap();
        write_status(&root, &RunStatus::now(RunState::Done, Some("late"), None)).unwrap();
    });
    let start = Instant::now();
    let o = p.run(&["status", "--wait"]);
    writer.join().unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(500),
        "returned before the run ended"
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(
        (o.status.code(), tools_status(&o)),
        (Some(0), "DONE"),
        "{o:?}"
    );
}

/// The commands `cloud-init --help` lists as answered.
fn answered(p: &StandIn) -> Vec<String> {
    let help = stdout(&p.run(&["--help"]));
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

/// Each cloud-init command the stand-in does not answer fails (exit 1) naming the vmcust
/// command that does it, which exists with the options named, or saying why there is none.
#[test]
fn other_commands_name_their_vmcust_equivalent() {
    let p = stand_in();
    let answered = answered(&p);
    assert!(answered.iter().any(|c| c == "status"), "{answered:?}");
    let vmcust_help = |words: &[&str]| {
        let mut args = words.to_vec();
        args.push("--help");
        let o = Command::new(env!("CARGO_BIN_EXE_vmcust"))
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "vmcust {words:?} does not exist");
        stdout(&o)
    };
    for e in EQUIVALENTS {
        if answered.iter().any(|c| c == e.words[0]) {
            continue;
        }
        let mut args = e.words.to_vec();
        args.push("--an-option");
        let o = p.run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?} {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        let head = format!(
            "cloud-init {}: not answered by the stand-in; ",
            e.words.join(" ")
        );
        assert!(err.starts_with(&head), "{args:?}: {err}");
        assert!(err.contains(e.why), "{args:?}: {err}");
        match e.vmcust {
            Some(cmd) => {
                assert!(
                    err.contains(&format!("the vmcust equivalent is `{cmd}`")),
                    "{args:?}: {err}"
                );
                let words: Vec<&str> = cmd.split_whitespace().skip(1).collect();
                let sub: Vec<&str> = words
                    .iter()
                    .copied()
                    .take_while(|w| {
                        !w.starts_with('-') && !w.chars().all(|c| c.is_ascii_uppercase())
                    })
                    .collect();
                let help = vmcust_help(&sub);
                for flag in words.iter().filter(|w| w.starts_with("--")) {
                    assert!(help.contains(flag), "vmcust {sub:?} has no {flag}");
                }
            }
            None => assert!(
                err.contains("vmcust has no equivalent: "),
                "{args:?}: {err}"
            ),
        }
    }
    // The commands people ask most, and ones cloud-init does not have.
    for (args, says) in [
        (
            &["schema", "-c", "user-data"][..],
            "the vmcust equivalent is `vmcust schema FILE`",
        ),
        (
            &["analyze", "blame"],
            "the vmcust equivalent is `vmcust analyze blame`",
        ),
        (
            &["single", "--name", "cc_runcmd"],
            "vmcust has no equivalent: vmcust runs each",
        ),
        (
            &["devel", "make-mime", "-a", "x"],
            "vmcust has no equivalent: vmcust reads MIME",
        ),
        (
            &["init", "--local"],
            "the vmcust equivalent is `vmcust run --stage early`",
        ),
        (
            &["modules", "--mode", "final"],
            "the vmcust equivalent is `vmcust run --stage late`",
        ),
        (&["frobnicate"], "this is not a cloud-init command"),
        (&[], "a command is needed"),
    ] {
        let o = p.run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?} {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(says) && err.contains("vmcust"),
            "{args:?}: {err}"
        );
    }
}

/// The stand-in's exit codes, on the real binary started as `cloud-init`: each row is the
/// recorded state (if any), the arguments, the exit code, and where its text goes.
#[test]
fn exit_codes_of_the_stand_in() {
    enum To {
        Stdout(&'static str),
        Stderr(&'static str),
    }
    let cases: &[(Option<RunState>, &[&str], i32, To)] = &[
        (None, &["--help"], 0, To::Stdout("Usage: cloud-init")),
        (None, &["-h"], 0, To::Stdout("Usage: cloud-init")),
        (None, &["status", "--help"], 0, To::Stdout("--wait")),
        (None, &["clean", "--help"], 0, To::Stdout("--reboot")),
        (
            None,
            &["collect-logs", "--help"],
            0,
            To::Stdout("--tarfile"),
        ),
        (None, &["-v"], 0, To::Stdout("23.4.0")),
        (None, &["status", "--bogus"], 2, To::Stderr("'--bogus'")),
        (None, &["status", "--format", "xml"], 2, To::Stderr("'xml'")),
        (None, &["clean", "-x"], 2, To::Stderr("'-x'")),
        (
            None,
            &["init", "--local"],
            1,
            To::Stderr("not answered by the stand-in"),
        ),
        (None, &[], 1, To::Stderr("a command is needed")),
        (
            Some(RunState::Done),
            &["status", "-wl"],
            0,
            To::Stdout("status: done"),
        ),
        (
            Some(RunState::Error),
            &["status", "-lw"],
            1,
            To::Stdout("errors:\n\t- network failed"),
        ),
        (
            Some(RunState::Done),
            &["status", "--format", "yaml"],
            0,
            To::Stdout("status: done\n"),
        ),
        (Some(RunState::Done), &["clean", "-ls"], 0, To::Stdout("")),
        // Not the running system: cleaned, and the reboot refused (not attempted).
        (
            Some(RunState::Done),
            &["clean", "-lsr"],
            0,
            To::Stderr("not rebooting"),
        ),
    ];
    for (state, args, code, to) in cases {
        let p = stand_in();
        if let Some(state) = state {
            p.set(*state);
        }
        let o = p.run(args);
        assert_eq!(o.status.code(), Some(*code), "{args:?} {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        match to {
            To::Stdout(want) => {
                assert!(stdout(&o).contains(want), "{args:?}: {o:?}");
                assert!(*code != 0 || !err.contains("error"), "{args:?}: {err}");
            }
            To::Stderr(want) => assert!(err.contains(want), "{args:?}: {err}"),
        }
    }
}

#[test]
fn the_vmcust_name_is_unaffected() {
    let o = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("vmcust "), "{o:?}");
}

#[test]
fn a_copy_of_the_binary_is_recognised_as_vmcust() {
    let dir = tempfile::tempdir().unwrap();
    let ci = dir.path().join("usr/bin/cloud-init");
    std::fs::create_dir_all(ci.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_vmcust"), &ci).unwrap();
    let root = Root::new(Path::new(dir.path())).unwrap();
    assert!(vmcust::test_api::coexist::is_vmcust_stand_in(&root));
    assert_eq!(vmcust::test_api::coexist::real_cloud_init(&root), None);
}
