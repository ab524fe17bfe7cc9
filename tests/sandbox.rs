//! An offline root is a sealed box (issue 35, point 1): user-data run for a root other
//! than `/` (`vmcust run --root DIR`) sees nothing of the machine running vmcust — no
//! block device, no host process or its files, not the caller's environment or inherited
//! descriptors, no host loopback service, not the host's name, no writable `/proc/sys`,
//! no host `/sys` — and nothing it starts outlives the run. One test per escape, each
//! through a `#!` user-data part of a raw cloud-init spec run by the late stage, in a
//! scratch root made of this machine's programs. Threat T14 (docs/security.md).

mod support;

use std::fs;
use std::io::Read as _;
use std::path::Path;

use support::{install_tool, text, vm::Vm};

/// A name no other run uses.
fn unique() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}{}", std::process::id(), t % 1_000_000_000)
}

/// Boots a VM whose user-data is `body` (a `/bin/sh` script whose output goes to
/// `/root/out`), with `tools` of this machine copied into its root and `env` set on
/// vmcust's late stage; returns the VM and what the script wrote.
fn in_root(body: &str, tools: &[&str], env: &[(&str, &str)]) -> (Vm, String) {
    support::require_root("user-data of another root runs sealed inside it");
    let vm = Vm::new();
    for dir in ["/tmp", "/root"] {
        fs::create_dir_all(vm.path(dir)).unwrap();
    }
    for tool in tools {
        install_tool(vm.root.path(), tool);
    }
    let md = "{\"instance-id\": \"sealed-1\", \"local-hostname\": \"sealed\"}";
    let ud = format!("#!/bin/sh\nexec > /root/out 2>&1\n{body}\necho end\n");
    vm.hand_over(
        &fs::read_to_string(support::example("raw-cloud-init.cfg")).unwrap(),
        &[("metadata", md), ("userdata", &ud)],
    );
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let late = vm
        .command("late", 0)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let out = fs::read_to_string(vm.path("/root/out")).unwrap_or_default();
    assert!(
        out.ends_with("end\n"),
        "the user-data did not run to its end: {out}"
    );
    (vm, out)
}

/// `/dev` holds only the six character devices a program needs; no block device (an
/// image's `mkfs /dev/vdb` would format the build machine's disk).
#[test]
fn no_block_device_is_reachable() {
    let (_vm, out) = in_root(
        "for f in /dev/* /dev/*/*; do\n\
           [ -L \"$f\" ] && continue\n\
           [ -b \"$f\" ] && echo \"block $f\"\n\
           [ -c \"$f\" ] && echo \"char $f\"\n\
         done\n\
         echo x > /dev/null && echo null-works\n",
        &[],
        &[],
    );
    assert!(!out.contains("block "), "{out}");
    let chars: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("char "))
        .collect();
    assert_eq!(
        chars,
        [
            "/dev/full",
            "/dev/null",
            "/dev/random",
            "/dev/tty",
            "/dev/urandom",
            "/dev/zero"
        ],
        "{out}"
    );
    assert!(out.contains("null-works"), "{out}");
}

/// The program's `/proc` is that of its own PID namespace: this test process (and so
/// every host process, its root and its files) is not there.
#[test]
fn no_host_process_is_visible() {
    let me = std::process::id();
    let (_vm, out) = in_root(
        &format!(
            "test -e /proc/{me} && echo \"sees {me}\"\n\
             test -e /proc/{me}/root/. && echo \"enters {me}\"\n\
             for d in /proc/[0-9]*; do echo \"pid ${{d#/proc/}}\"; done\n"
        ),
        &[],
        &[],
    );
    assert!(!out.contains("sees") && !out.contains("enters"), "{out}");
    let pids: Vec<u32> = out
        .lines()
        .filter_map(|l| l.strip_prefix("pid ")?.parse().ok())
        .collect();
    // Its stub init, itself, and what it started meanwhile; never the machine's hundreds.
    assert!(!pids.is_empty() && pids.len() < 8, "{out}");
    assert!(pids.iter().all(|&p| p < 100), "{out}");
}

/// A secret in vmcust's environment (a build pipeline's token) reaches no process of the
/// root: not its own environment, not any `/proc/<pid>/environ` it can read.
#[test]
fn the_callers_environment_is_not_readable() {
    let secret = format!("build-token-{}", unique());
    let (_vm, out) = in_root(
        "env\nfor e in /proc/[0-9]*/environ; do echo \"== $e\"; cat \"$e\"; echo; done\n\
         cat /proc/1/mem > /dev/null && echo read-init-memory\n",
        &[],
        &[("VMCUST_TEST_BUILD_SECRET", &secret)],
    );
    assert!(!out.contains(&secret), "{out}");
    assert!(!out.contains("read-init-memory"), "{out}");
}

/// A service listening on the machine's loopback is out of reach: the root has its own
/// network namespace, with only its own loopback (up: a closed port is refused, not
/// unreachable).
#[test]
fn host_loopback_services_are_not_reachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_vm, out) = in_root(
        &format!(
            "bash -c 'echo hello > /dev/tcp/127.0.0.1/{port}' && echo connected\n\
             bash -c 'echo > /dev/tcp/127.0.0.1/1'\n"
        ),
        &["/usr/bin/bash"],
        &[],
    );
    assert!(!out.contains("connected"), "{out}");
    match listener.accept() {
        Ok((mut s, from)) => {
            let mut got = String::new();
            let _ = s.read_to_string(&mut got);
            panic!("the root reached this machine's 127.0.0.1:{port} from {from}: {got:?}");
        }
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock),
    }
    assert!(out.contains("Connection refused"), "loopback is up: {out}");
}

/// The root has its own host name (the one its customization gave it), and setting it
/// there does not rename this machine.
#[test]
fn the_host_name_is_the_roots_own() {
    let host = fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let (_vm, out) = in_root(
        "echo \"name $(hostname)\"\nhostname renamed-by-user-data\n",
        &["/usr/bin/hostname"],
        &[],
    );
    assert_eq!(
        fs::read_to_string("/proc/sys/kernel/hostname").unwrap(),
        host,
        "{out}"
    );
    assert!(out.contains("name sealed\n"), "{out}");
}

/// `/proc/sys` (and the other kernel-wide files of `/proc`) cannot be written.
#[test]
fn proc_sys_is_read_only() {
    let (_vm, out) = in_root(
        "v=$(cat /proc/sys/vm/swappiness)\n\
         echo \"$v\" > /proc/sys/vm/swappiness && echo wrote-proc-sys\n\
         ( : > /proc/sysrq-trigger ) && echo opened-sysrq\n\
         cat /proc/sys/kernel/ostype\n",
        &[],
        &[],
    );
    assert!(!out.contains("wrote-proc-sys"), "{out}");
    assert!(!out.contains("opened-sysrq"), "{out}");
    assert!(out.contains("Linux"), "/proc/sys stays readable: {out}");
}

/// The machine's `/sys` (its disks, network devices, firmware) is not there: `/sys` is
/// empty and read-only.
#[test]
fn the_hosts_sys_is_not_there() {
    let (_vm, out) = in_root(
        "for f in /sys/* /sys/.[!.]*; do [ -e \"$f\" ] && echo \"sys $f\"; done\n\
         touch /sys/x && echo wrote-sys\n",
        &[],
        &[],
    );
    assert!(!out.contains("sys /"), "{out}");
    assert!(!out.contains("wrote-sys"), "{out}");
}

/// A descriptor vmcust inherited (not close-on-exec) is not passed on to the root's
/// programs: they start with 0, 1 and 2 only.
#[test]
fn no_inherited_descriptor_reaches_the_root() {
    use std::os::fd::AsRawFd as _;
    let file = tempfile::NamedTempFile::new().unwrap();
    // SAFETY: dup2 onto a free number, then clearing close-on-exec on it: plain calls.
    let fd = 77;
    unsafe {
        assert_eq!(libc::dup2(file.as_file().as_raw_fd(), fd), fd);
        assert_eq!(libc::fcntl(fd, libc::F_SETFD, 0), 0);
    }
    let probe = format!(
        "for f in /proc/$$/fd/*; do n=${{f##*/}}; echo \"listed $n\"; done\n\
         test -e /proc/$$/fd/{fd} && echo inherited-{fd}\n"
    );
    let result = std::panic::catch_unwind(|| in_root(&probe, &[], &[]).1);
    // SAFETY: closing the number opened above.
    unsafe { libc::close(fd) };
    let out = result.unwrap();
    assert!(!out.contains(&format!("inherited-{fd}")), "{out}");
}

/// A daemon the user-data starts in a session of its own (`setsid`, out of the process
/// group) is ended with the run.
#[test]
fn nothing_started_outlives_the_run() {
    let tag = format!("1000.{}", unique());
    let (_vm, out) = in_root(
        &format!("setsid sleep {tag} > /dev/null 2>&1 < /dev/null &\nsleep 0.2\n"),
        &["/usr/bin/setsid"],
        &[],
    );
    // The namespace's end is immediate, but a kill is delivered asynchronously.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut left = survivors(&tag);
    while !left.is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
        left = survivors(&tag);
    }
    for &p in &left {
        // SAFETY: kill(2) of a process this test's run left behind.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "survivors {left:?} of the run: {out}");
}

/// The processes of this machine whose command line holds `tag`.
fn survivors(tag: &str) -> Vec<i32> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            fs::read(Path::new("/proc").join(p.to_string()).join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(tag))
        })
        .collect()
}

/// The bounds hold in the box: the program's own exit status and signal come through its
/// stub init; a timeout, and vmcust's SIGTERM (the stop flag), end the whole box — a
/// program that ignores SIGTERM and a `setsid` daemon included — within the grace.
#[test]
fn a_sealed_run_is_bounded_and_ended_whole() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    use vmcust::test_api::run::{run_script_in, Limits, Outcome, Phase};
    support::require_root("user-data of another root runs sealed inside it");
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/root")).unwrap();
    install_tool(vm.root.path(), "/usr/bin/setsid");
    let root = vmcust::test_api::root::Root::new(vm.root.path()).unwrap();
    let limits = |timeout_ms, grace_ms| Limits {
        timeout: Duration::from_millis(timeout_ms),
        grace: Duration::from_millis(grace_ms),
    };
    let tag = format!("2000.{}", unique());
    let hang =
        format!("trap '' TERM\nsetsid sleep {tag} > /dev/null 2>&1 < /dev/null &\nsleep 1000\n");
    // (script body, limits, stop after, what it ends as)
    let cases: [(&str, Limits, Option<u64>, Outcome); 4] = [
        ("exit 3\n", limits(10_000, 500), None, Outcome::Exited(3)),
        (
            "kill -USR1 $$\nsleep 5\n",
            limits(10_000, 500),
            None,
            Outcome::Signalled(10),
        ),
        (&hang, limits(300, 300), None, Outcome::TimedOut),
        (&hang, limits(60_000, 300), Some(300), Outcome::Cancelled),
    ];
    for (body, limits, stop_after, want) in cases {
        let script = vm.path("/root/case.sh");
        fs::write(&script, format!("#!/bin/sh\n{body}")).unwrap();
        fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let setter = stop_after.map(|ms| {
            let flag = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(ms));
                flag.store(true, Ordering::SeqCst);
            })
        });
        let start = Instant::now();
        let run = run_script_in(&root, &script, Phase::UserData, limits, &stop).unwrap();
        let took = start.elapsed();
        if let Some(s) = setter {
            s.join().unwrap();
        }
        assert_eq!(run.outcome, want, "{body}: {:?}", run.output);
        assert!(took < Duration::from_secs(4), "{body}: took {took:?}");
        let left = survivors(&tag);
        for &p in &left {
            // SAFETY: kill(2) of a process this test's run left behind.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        assert!(left.is_empty(), "{body}: survivors {left:?}");
    }
}

/// vmcust killed outright (SIGKILL: no handler, no cleanup) mid-run: the box dies with it,
/// the program and its `setsid` daemon included.
#[test]
fn the_box_ends_when_vmcust_is_killed() {
    use std::time::{Duration, Instant};
    support::require_root("user-data of another root runs sealed inside it");
    let tag = format!("3000.{}", unique());
    let vm = Vm::new();
    for dir in ["/tmp", "/root"] {
        fs::create_dir_all(vm.path(dir)).unwrap();
    }
    install_tool(vm.root.path(), "/usr/bin/setsid");
    let md = "{\"instance-id\": \"sealed-2\", \"local-hostname\": \"sealed\"}";
    let ud = format!(
        "#!/bin/sh\nsetsid sleep {tag} > /dev/null 2>&1 < /dev/null &\n\
         touch /root/started\nsleep {tag}\n"
    );
    vm.hand_over(
        &fs::read_to_string(support::example("raw-cloud-init.cfg")).unwrap(),
        &[("metadata", md), ("userdata", &ud)],
    );
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let mut late = vm
        .command("late", 0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !vm.path("/root/started").exists() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "user-data never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    while survivors(&tag).len() < 2 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    late.kill().unwrap();
    late.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(3);
    let mut left = survivors(&tag);
    while !left.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
        left = survivors(&tag);
    }
    for &p in &left {
        // SAFETY: kill(2) of a process this test's run left behind.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "survivors {left:?} of vmcust's death");
}

/// The program keeps a short list of capabilities (what package scripts, `useradd`,
/// `chown` and `su` need); the rest (mounts, modules, raw I/O, ptrace, device nodes, …)
/// is out of its bounding set, so no set-user-ID program brings one back.
#[test]
fn capabilities_are_bounded() {
    let (_vm, out) = in_root("cat /proc/self/status\n", &[], &[]);
    let kept: u64 = [0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 29, 31]
        .iter()
        .fold(0, |m, c| m | 1 << c);
    let field = |name: &str| -> u64 {
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:\t")))
            .unwrap_or_else(|| panic!("no {name} in {out}"));
        u64::from_str_radix(line.trim(), 16).unwrap()
    };
    for name in ["CapBnd", "CapPrm", "CapEff"] {
        assert_eq!(field(name) & !kept, 0, "{name} beyond the kept set: {out}");
    }
    assert_eq!(field("CapBnd"), kept, "{out}");
    assert_eq!((field("CapInh"), field("CapAmb")), (0, 0), "{out}");
}
