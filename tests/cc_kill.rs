//! Exactly once for the cloud-config modules (src/cloud_config/apply/semaphore.rs): a
//! boot's two stages (early, then late) with a boothook, bootcmd, write_files (early and
//! deferred), packages, a per-boot script and runcmd between two user scripts, run in a
//! child process on a scratch root and killed with SIGKILL
//! (the whole process tree, as systemd's cgroup kill) or SIGTERM at a random point, then
//! run again to the end as the unit's restart would, and once more. Every time: no
//! module's effect happens twice, every module ends recorded, a module recorded as run
//! has its effect exactly once, one that was cut off is reported and not run again, and
//! the idempotent modules' files are all there.
//!
//! The seed is printed; `VMCUST_KILL_SEED=N` replays it, `VMCUST_KILL_ROUNDS=N` changes
//! the count.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use vmcust::test_api::cc_apply::{run_early, run_late, StageContext};
use vmcust::test_api::model::InstanceId;
use vmcust::test_api::root::Root;
use vmcust::test_api::userdata;

use support::kill::kill_tree;

const DOC: &str = "#cloud-config\nbootcmd: ['echo bootcmd >> /root/ran; sleep 0.05']\n\
write_files:\n- {path: /etc/cc-early, content: early}\n- {path: /etc/cc-late, content: late, defer: true}\n\
packages: [tool]\n\
runcmd: ['echo runcmd >> /root/ran; sleep 0.05']\n";

/// The user-data: [`DOC`] and script parts, each recording its name and working a little.
fn user_data() -> String {
    let script = |name: &str| format!("#!/bin/sh\necho {name} >> /root/ran\nsleep 0.05\n");
    let parts = [
        ("text/cloud-config", "", DOC.to_string()),
        (
            "text/cloud-boothook",
            "",
            format!("#cloud-boothook\n{}", script("hook")),
        ),
        ("text/x-shellscript-per-boot", "every.sh", script("every")),
        ("text/x-shellscript", "zz.sh", script("zz")),
        ("text/x-shellscript", "aa.sh", script("aa")),
    ];
    let mut s =
        String::from("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n");
    for (ctype, name, body) in parts {
        s.push_str(&format!("--XX\nContent-Type: {ctype}\n"));
        if !name.is_empty() {
            s.push_str(&format!(
                "Content-Disposition: attachment; filename=\"{name}\"\n"
            ));
        }
        s.push_str(&format!("\n{body}\n"));
    }
    s + "--XX--\n"
}

/// Our stand-in apt-get: records the command, then works a little.
const APT: &str =
    "#!/bin/sh\nfor a in \"$@\"; do last=$a; done\necho \"apt $last\" >> /root/ran\nsleep 0.03\n";

const ROOT_ENV: &str = "VMCUST_CC_KILL_ROOT";

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_term(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// The child: one boot's stages on the root `VMCUST_CC_KILL_ROOT` names.
#[test]
#[ignore = "run by the kill test in a child process"]
fn child_boot() {
    let Ok(dir) = std::env::var(ROOT_ENV) else {
        return;
    };
    // SAFETY: the handler only stores to an atomic.
    unsafe { libc::signal(libc::SIGTERM, on_term as *const () as libc::sighandler_t) };
    let u = userdata::read(user_data().as_bytes(), None).unwrap();
    assert!(u.problems.is_empty(), "{:?}", u.problems);
    let mut ctx = StageContext::new(
        Root::new(Path::new(&dir)).unwrap(),
        InstanceId::parse("i-kill").unwrap(),
        "boot-1".into(),
        &STOP,
    );
    ctx.script_parts = u.scripts;
    let mut reports = run_early(&ctx, &u.config);
    if !STOP.load(Ordering::SeqCst) {
        reports.extend(run_late(&ctx, &u.config));
    }
    println!("\nREPORTS {}", serde_json::to_string(&reports).unwrap());
}

fn scratch() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    support::install_shell(d.path());
    fs::create_dir_all(d.path().join("etc")).unwrap();
    fs::create_dir_all(d.path().join("root")).unwrap();
    fs::write(
        d.path().join("etc/passwd"),
        "root:x:0:0:root:/root:/bin/sh\n",
    )
    .unwrap();
    fs::write(d.path().join("etc/group"), "root:x:0:\n").unwrap();
    let apt = d.path().join("usr/bin/apt-get");
    fs::create_dir_all(apt.parent().unwrap()).unwrap();
    fs::write(&apt, APT).unwrap();
    fs::set_permissions(&apt, fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn child(dir: &Path) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "child_boot",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(ROOT_ENV, dir)
    .stdin(Stdio::null())
    .stderr(Stdio::null());
    c
}

/// A whole run; its module reports as JSON text.
fn full_run(dir: &Path) -> String {
    let out = child(dir).stdout(Stdio::piped()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "child failed: {text}");
    text.lines()
        .find_map(|l| l.strip_prefix("REPORTS "))
        .unwrap_or_else(|| panic!("no reports in {text}"))
        .to_string()
}

fn ran(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join("root/ran"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The note of a module's (or a script's) `done` record.
fn done(dir: &Path, module: &str) -> Option<String> {
    let p = dir.join(format!(
        "var/lib/vmcust/instances/i-kill/sem/config_{module}.done"
    ));
    fs::read_to_string(p)
        .ok()
        .map(|t| t.lines().nth(1).unwrap_or("").to_string())
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

fn killed_run(dir: &Path, at: Duration, signal: i32) -> bool {
    let mut c = child(dir).stdout(Stdio::null()).spawn().unwrap();
    let t = Instant::now();
    while c.try_wait().unwrap().is_none() {
        if t.elapsed() >= at {
            if signal == libc::SIGKILL {
                kill_tree(&mut c);
            } else {
                unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
                let t = Instant::now();
                while c.try_wait().unwrap().is_none() {
                    if t.elapsed() > Duration::from_secs(10) {
                        kill_tree(&mut c);
                    }
                    thread::sleep(Duration::from_millis(2));
                }
            }
            return true;
        }
        thread::sleep(Duration::from_micros(500));
    }
    false
}

#[test]
fn random_kills_neither_repeat_nor_skip_a_module() {
    let (seed, rounds) = support::kill::seed_and_rounds(30);
    eprintln!("cc kill loop: seed {seed} (VMCUST_KILL_SEED={seed} replays it), {rounds} rounds");
    // The uninterrupted run: its effects, its records and its length.
    let golden = scratch();
    let t = Instant::now();
    full_run(golden.path());
    let length = t.elapsed();
    let want = [
        "hook",
        "bootcmd",
        "apt update",
        "apt tool",
        "every",
        "aa",
        "runcmd",
        "zz",
    ];
    assert_eq!(ran(golden.path()), want);
    let mut rng = Rng(seed);
    let mut seen = BTreeMap::<String, usize>::new();
    for round in 0..rounds {
        let d = scratch();
        let at = Duration::from_micros(rng.below(length.as_micros() as u64));
        let signal = if rng.below(2) == 0 {
            libc::SIGKILL
        } else {
            libc::SIGTERM
        };
        let killed = killed_run(d.path(), at, signal);
        let ctx = format!("round {round}, signal {signal}, at {at:?} (killed: {killed})");
        let reports = full_run(d.path());
        let after = ran(d.path());
        let count = |what: &str| after.iter().filter(|l| *l == what).count();
        for w in want {
            assert!(
                count(w) <= 1,
                "{ctx}: {w} ran {} times: {after:?}",
                count(w)
            );
        }
        for (module, effects) in [
            ("boothooks+user+002", &["hook"][..]),
            ("bootcmd", &["bootcmd"][..]),
            (
                "package_update_upgrade_install",
                &["apt update", "apt tool"][..],
            ),
            ("scripts+per-boot+every.sh", &["every"][..]),
            ("scripts+aa.sh", &["aa"][..]),
            ("runcmd", &["runcmd"][..]),
            ("scripts+zz.sh", &["zz"][..]),
        ] {
            let note = done(d.path(), module)
                .unwrap_or_else(|| panic!("{ctx}: {module} has no done record; {reports}"));
            if note.starts_with("ran") {
                for e in effects {
                    assert_eq!(count(e), 1, "{ctx}: {module} recorded as run: {after:?}");
                }
            } else {
                assert_eq!(note, "cut off", "{ctx}: {module}");
            }
            let kind = if note.starts_with("ran") {
                "ran"
            } else {
                "cut off"
            };
            *seen.entry(format!("{module} {kind}")).or_default() += 1;
        }
        for (f, text) in [("etc/cc-early", "early"), ("etc/cc-late", "late")] {
            assert_eq!(
                fs::read_to_string(d.path().join(f)).unwrap_or_default(),
                text,
                "{ctx}: {f}"
            );
        }
        // Once more: nothing runs, nothing changes.
        let again = full_run(d.path());
        assert_eq!(ran(d.path()), after, "{ctx}: the third run ran something");
        let again: Vec<serde_json::Value> = serde_json::from_str(&again).unwrap();
        for r in &again {
            let ran = r["outcome"]["outcome"] == "ran";
            assert!(
                !ran || r["module"] == "final_message",
                "{ctx}: the third run: {r}"
            );
        }
    }
    eprintln!("cc kill loop outcomes: {seen:?}");
}
