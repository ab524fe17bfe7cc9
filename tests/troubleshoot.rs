//! The person at the console: `vmcust query` says what a boot (or `apply`) applied and
//! from which source, secrets never shown; `vmcust analyze show|blame` says where the
//! boot's time went; `collect-logs` cannot be turned against root by another user
//! through planted directories or symlinks.

mod support;

use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::process::{Command, Output};

use support::vm::Vm;
use support::{example, scratch_root, text, vmcust};

fn ok(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    text(&o.stdout)
}

const COUNTING_SCRIPT: &str = "#!/bin/sh\necho \"$1\" >> \"$(dirname \"$0\")/../ran\"\n";

#[test]
fn query_reports_a_vsphere_customization_and_its_scripts_without_the_password() {
    let vm = Vm::new();
    vm.enable_scripts();
    let spec = fs::read_to_string(example("password-marker-script.cfg")).unwrap();
    vm.hand_over(
        &spec,
        &[("nics.txt", "0\n"), ("script0001.bat", COUNTING_SCRIPT)],
    );
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let late = vm.run("late");
    assert_eq!(late.status.code(), Some(0), "{}", text(&late.stderr));
    let r = vm.root.path().to_str().unwrap();

    let q = ok(&vmcust(&["query", "--root", r]));
    for want in [
        "instance: 4217e0a1-6c2b-9d7e-51a0-3b9f2c1d8e44\n",
        "outcome: done (code 0) at 20",
        "source: imc\n",
        "applied by: vmcust run at 20",
        "host name: app03 (app03.lab.example.org)\n",
        "time zone: Asia/Tokyo (hardware clock utc)\n",
        "root password: set, expires at next login\n",
        "marker: 2026-11-30-app03-7f3a (new: password and scripts applied)\n",
        "network (netplan):\n  NIC1 00:50:56:a6:8c:08: ipv4 dhcp, ipv6 auto\n",
        "  precustomization customize.sh: succeeded (",
        "  postcustomization customize.sh: succeeded (",
        "ssh keys: none\n",
        "user-data: none\n",
        "/etc/hostname (",
    ] {
        assert!(q.contains(want), "{want:?} not in:\n{q}");
    }
    let json = ok(&vmcust(&["query", "--root", r, "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let a = &v["applied"];
    assert_eq!(a["root_password"], "set, expires at next login");
    assert_eq!(a["scripts"].as_array().unwrap().len(), 2, "{json}");
    assert_eq!(a["scripts"][1]["phase"], "postcustomization");
    assert!(a["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["path"] == "/etc/shadow" && f["change"] == "updated"));
    // The password, its base64 and the hash written to /etc/shadow appear nowhere.
    let shadow = fs::read_to_string(vm.path("/etc/shadow")).unwrap();
    let hash = shadow
        .lines()
        .find(|l| l.starts_with("root:"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap()
        .to_string();
    assert!(hash.starts_with("$6$"), "{hash}");
    let record = fs::read_to_string(
        vm.path("/var/lib/vmcust/instances/4217e0a1-6c2b-9d7e-51a0-3b9f2c1d8e44/applied.json"),
    )
    .unwrap();
    // collect-logs takes vmcust's own records as they are: still JSON, still no secret.
    let tarball = vm.root.path().join("logs.tar.gz");
    ok(&vmcust(&[
        "collect-logs",
        "--root",
        r,
        "--tarfile",
        tarball.to_str().unwrap(),
    ]));
    support::require_tool("tar", "tar");
    let collected = Command::new("tar")
        .arg("-xzOf")
        .arg(&tarball)
        .arg("vmcust-logs/var/lib/vmcust/instances/4217e0a1-6c2b-9d7e-51a0-3b9f2c1d8e44/applied.json")
        .output()
        .unwrap();
    assert!(collected.status.success(), "{}", text(&collected.stderr));
    let collected = text(&collected.stdout);
    let v: serde_json::Value = serde_json::from_str(&collected)
        .unwrap_or_else(|e| panic!("collected applied.json is not JSON ({e}):\n{collected}"));
    assert_eq!(v["root_password"], "set, expires at next login");
    for out in [&q, &json, &record, &collected] {
        for secret in ["Vmw@re-2026!", "Vm13QHJlLTIwMjYh", hash.as_str()] {
            assert!(!out.contains(secret), "{secret} leaked:\n{out}");
        }
    }

    // analyze: one boot (no boot id on a scratch root: late joins early's boot), both
    // stages, their steps in order and, in blame, slowest first.
    let show = ok(&vmcust(&["analyze", "show", "--root", r]));
    assert!(
        show.starts_with("-- boot 1 of 1 --\nstage early started 20"),
        "{show}"
    );
    for want in [
        "stage late started",
        "|`-> apply @",
        "|`-> facts and plan @",
        "1 boot(s) recorded",
    ] {
        assert!(show.contains(want), "{want:?} not in:\n{show}");
    }
    let times: serde_json::Value = serde_json::from_str(&ok(&vmcust(&[
        "analyze", "show", "--root", r, "--format", "json",
    ])))
    .unwrap();
    let stages = times["boots"][0]["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2);
    assert_eq!(
        (stages[0]["stage"].as_str(), stages[0]["ending"].as_str()),
        (Some("early"), Some("done"))
    );
    assert_eq!(stages[1]["stage"], "late");
    let blame: serde_json::Value = serde_json::from_str(&ok(&vmcust(&[
        "analyze", "blame", "--root", r, "--format", "json",
    ])))
    .unwrap();
    let ms: Vec<f64> = blame
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["ms"].as_f64().unwrap())
        .collect();
    assert!(ms.len() >= 4, "{blame}");
    assert!(ms.windows(2).all(|w| w[0] >= w[1]), "{ms:?}");
    let blame_text = ok(&vmcust(&["analyze", "blame", "--root", r]));
    assert!(blame_text.contains("s (early) apply\n"), "{blame_text}");
    // Each custom script is a step of its own, named by its phase and file.
    for want in [
        "s (early) precustomization script customize.sh\n",
        "s (late) postcustomization script customize.sh\n",
    ] {
        assert!(blame_text.contains(want), "{want:?} not in:\n{blame_text}");
    }
    assert!(
        blame_text.ends_with("step(s) of the last boot\n"),
        "{blame_text}"
    );

    // A second boot adds a second boot record; only the last MAX_BOOTS are kept.
    for _ in 0..vmcust::test_api::timings::MAX_BOOTS + 1 {
        assert_eq!(vm.run("early").status.code(), Some(0));
    }
    let times = vmcust::test_api::timings::read(
        &vmcust::test_api::root::Root::new(vm.root.path()).unwrap(),
    )
    .unwrap();
    assert_eq!(times.boots.len(), vmcust::test_api::timings::MAX_BOOTS);
}

#[test]
fn query_names_each_fields_source_keys_by_fingerprint_and_the_user_data_result() {
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/root")).unwrap();
    let keydir = tempfile::tempdir().unwrap();
    let key = keydir.path().join("k");
    support::require_tool("ssh-keygen", "openssh-client");
    assert!(Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-t", "ed25519", "-C", "ops@example", "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen (openssh-client)")
        .success());
    let public = fs::read_to_string(key.with_extension("pub")).unwrap();
    let listed = Command::new("ssh-keygen")
        .arg("-lf")
        .arg(key.with_extension("pub"))
        .output()
        .unwrap();
    let fingerprint = text(&listed.stdout)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        format!(
            "instance-id: gi-7\nlocal-hostname: gi-host\npublic-keys-data: {}\n",
            public.trim()
        ),
    )
    .unwrap();
    fs::write(
        vm.host.path().join("guestinfo.userdata"),
        "#!/bin/sh\ntrue\n",
    )
    .unwrap();
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    let r = vm.root.path().to_str().unwrap();
    let before_late = ok(&vmcust(&["query", "--root", r]));
    assert!(
        before_late.contains("run once as a #! script; pending (the late stage has not run yet)"),
        "{before_late}"
    );
    assert_eq!(vm.run("late").status.code(), Some(0));
    let q = ok(&vmcust(&["query", "--root", r]));
    for want in [
        "instance: gi-7\n".to_string(),
        "host-name from guestinfo".to_string(),
        "ssh-authorized-keys from guestinfo".to_string(),
        "host name: gi-host\n".to_string(),
        format!("ssh keys for root:\n  ssh-ed25519 {fingerprint} ops@example\n"),
        "user-data: 14 bytes from guestinfo, run once as a #! script; ran\n".to_string(),
        "  user-data user-data.sh: succeeded (".to_string(),
        "network: left as it was\n".to_string(),
    ] {
        assert!(q.contains(&want), "{want:?} not in:\n{q}");
    }
    // The key itself is not printed, only its fingerprint.
    let blob = public.split_whitespace().nth(1).unwrap();
    assert!(!q.contains(blob), "{q}");
}

#[test]
fn query_on_a_fresh_root_an_unknown_instance_and_after_apply() {
    let root = scratch_root();
    let r = root.path().to_str().unwrap();
    assert_eq!(
        ok(&vmcust(&["query", "--root", r])),
        "no instance has been customized on this root\n"
    );
    let unknown = vmcust(&["query", "--root", r, "--instance", "nope"]);
    assert_eq!(unknown.status.code(), Some(64));
    assert!(
        text(&unknown.stderr).contains("no instance nope on this root; customized: none"),
        "{}",
        text(&unknown.stderr)
    );
    assert_eq!(
        ok(&vmcust(&["analyze", "blame", "--root", r])),
        ok(&vmcust(&["analyze", "show", "--root", r]))
    );
    assert!(ok(&vmcust(&["analyze", "show", "--root", r])).starts_with("no boot times recorded"));
    // `apply` records what it applied too (its record, no result: query needs both).
    let spec = example("static-2nic-ipv6.cfg");
    ok(&vmcust(&["apply", "--root", r, spec.to_str().unwrap()]));
    let dirs = fs::read_dir(root.path().join("var/lib/vmcust/instances"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let rec = vmcust::test_api::applied::read(
        &vmcust::test_api::root::Root::new(root.path()).unwrap(),
        &dirs[0],
    )
    .unwrap()
    .expect("apply wrote applied.json");
    assert_eq!(rec.by, "vmcust apply");
    assert_eq!(rec.host_name.as_deref(), Some("web01"));
    let net = rec.network.unwrap();
    assert_eq!(net.interfaces.len(), 2);
    assert!(
        net.interfaces[0].ipv4.contains('/'),
        "{:?}",
        net.interfaces[0]
    );
    assert!(!net.dns.servers.is_empty());
    // And `query` shows it (an applied.json without a result.json), newest or by its id.
    let shown = ok(&vmcust(&["query", "--root", r]));
    for want in [
        format!("instance: {}\n", rec.instance_id),
        "outcome: applied by vmcust apply at ".to_string(),
        "source: the files given to vmcust apply\n".to_string(),
        "applied by: vmcust apply at ".to_string(),
        "host name: web01".to_string(),
    ] {
        assert!(shown.contains(&want), "{want:?} not in:\n{shown}");
    }
    let by_id = ok(&vmcust(&[
        "query",
        "--root",
        r,
        "--instance",
        &rec.instance_id,
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&by_id).unwrap();
    assert_eq!(v["result"]["outcome"], "applied by vmcust apply");
    assert_eq!(v["applied"]["host_name"], "web01");
    let unknown = vmcust(&["query", "--root", r, "--instance", "nope"]);
    assert!(
        text(&unknown.stderr).contains(&format!("customized: {}", rec.instance_id)),
        "{}",
        text(&unknown.stderr)
    );
}

/// Runs `sh -c script` as `nobody`, as a user on the machine who wants root's logs.
fn as_nobody(script: &str) {
    support::require_tool("setpriv", "util-linux");
    let st = Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "sh",
            "-c",
            script,
        ])
        .status()
        .expect("setpriv (util-linux)");
    assert!(st.success(), "as nobody: {script}");
}

// threat T11 (docs/security.md)
#[test]
fn collect_logs_cannot_be_turned_against_root_by_another_user() {
    support::require_root("acting as root and as nobody");
    let secret = "SECRET-LOG-LINE-7f3a";
    let root = scratch_root();
    let r = root.path().to_str().unwrap();
    fs::create_dir_all(root.path().join("var/log")).unwrap();
    let log = root.path().join("var/log/vmcust.log");
    fs::write(&log, format!("{secret}\n")).unwrap();
    // open-vm-tools' own logs are collected, redacted like every file.
    fs::write(
        root.path().join("var/log/vmware-vmsvc-root.log"),
        "vmsvc started\nguest password: hunter2\n",
    )
    .unwrap();
    fs::set_permissions(&log, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();

    // A world-writable, sticky TMPDIR and output directory, as /tmp is.
    let shared = tempfile::tempdir().unwrap();
    let tmp = shared.path().join("tmp");
    let out = shared.path().join("out");
    for d in [&tmp, &out] {
        fs::create_dir(d).unwrap();
        fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    }
    fs::set_permissions(
        shared.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // A file of root's that a planted symlink points at.
    let victim_dir = tempfile::tempdir().unwrap();
    let victim = victim_dir.path().join("victim");
    fs::write(&victim, "root's file\n").unwrap();
    // nobody plants, for the next few hundred pids, the staging directory the old code
    // used (world-writable, to read what root writes there), and symlinks to root's file
    // and directory; and the tarball's name as a symlink to root's file.
    let next: u32 = fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(1);
    let planted = format!(
        "for i in $(seq {a} {b}); do mkdir -m 0777 {tmp}/vmcust-logs.$i; done; \
         ln -s {victim} {out}/logs.tar.gz",
        a = next + 1,
        b = next + 400,
        tmp = tmp.display(),
        victim = victim.display(),
        out = out.display()
    );
    as_nobody(&planted);
    let target = out.join("logs.tar.gz");
    let o = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["collect-logs", "--root", r, "--tarfile"])
        .arg(&target)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Root's file is untouched; the name is now root's own 0600 tarball.
    assert_eq!(
        fs::read(&victim).unwrap(),
        b"root's file\n",
        "root's file was overwritten through the planted symlink"
    );
    let meta = fs::symlink_metadata(&target).unwrap();
    assert!(meta.is_file(), "the tarball must replace the symlink");
    assert_eq!((meta.uid(), meta.mode() & 0o777), (0, 0o600));
    // Nothing was written under TMPDIR: no copy of the log for nobody to read.
    let mut leaked = Vec::new();
    for (rel, _) in support::snapshot(&tmp) {
        let p = tmp.join(&rel);
        if p.is_file() {
            leaked.push(rel);
        }
    }
    assert!(leaked.is_empty(), "files staged in TMPDIR: {leaked:?}");
    // And nobody cannot read the tarball, nor find the secret anywhere they can read.
    support::require_tool("setpriv", "util-linux");
    let st = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "cat"])
        .arg(&target)
        .output()
        .unwrap();
    assert!(!st.status.success());
    assert!(!text(&st.stdout).contains(secret));
    let listed = fs::read_dir(&out).unwrap().count();
    assert_eq!(listed, 1, "no temporary file is left beside the tarball");
    // The tarball holds the log (for root).
    let x = tempfile::tempdir().unwrap();
    support::require_tool("tar", "tar");
    assert!(Command::new("tar")
        .arg("-C")
        .arg(x.path())
        .arg("-xzf")
        .arg(&target)
        .status()
        .unwrap()
        .success());
    assert_eq!(
        fs::read_to_string(x.path().join("vmcust-logs/var/log/vmcust.log")).unwrap(),
        format!("{secret}\n")
    );
    for name in [
        "status.txt",
        "query.txt",
        "query.json",
        "analyze.txt",
        "detect.txt",
        "MANIFEST.txt",
    ] {
        assert!(x.path().join("vmcust-logs").join(name).is_file(), "{name}");
    }
}

#[test]
fn analyze_shows_the_wait_for_a_spec_on_a_new_vm() {
    let vm = Vm::new();
    assert_eq!(vm.run("early").status.code(), Some(0));
    let r = vm.root.path().to_str().unwrap();
    let show = ok(&vmcust(&["analyze", "show", "--root", r]));
    assert!(show.contains(": nothing in "), "{show}");
    assert!(show.contains("|`-> waiting @"), "{show}");
}

/// A local user who may write `/var/log` (or plants a link there) cannot make
/// collect-logs ship a file of root's: a `vmware-*.log` that is a symlink (to
/// `/etc/shadow`, whose lines no redaction catches) is skipped, not followed, and so is a
/// file not owned by root in a directory others may write; the MANIFEST says why.
// threat T11 (docs/security.md)
#[test]
fn collect_logs_follows_no_symlink_and_takes_no_planted_file() {
    support::require_root("giving a file to another user");
    let hash = "root:$6$SHADOW-HASH-91c2$x:19000:0:99999:7:::";
    let root = scratch_root();
    let r = root.path().to_str().unwrap();
    fs::create_dir_all(root.path().join("etc")).unwrap();
    fs::write(root.path().join("etc/shadow"), format!("{hash}\n")).unwrap();
    let log = root.path().join("var/log");
    fs::create_dir_all(&log).unwrap();
    fs::write(log.join("vmware-vmsvc-root.log"), "vmsvc started\n").unwrap();
    std::os::unix::fs::symlink("/etc/shadow", log.join("vmware-evil.log")).unwrap();
    fs::write(log.join("vmware-planted.log"), format!("{hash}\n")).unwrap();
    std::os::unix::fs::chown(log.join("vmware-planted.log"), Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&log, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("logs.tar.gz");
    let o = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["collect-logs", "--root", r, "--tarfile"])
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let x = tempfile::tempdir().unwrap();
    support::require_tool("tar", "tar");
    assert!(Command::new("tar")
        .arg("-C")
        .arg(x.path())
        .arg("-xzf")
        .arg(&target)
        .status()
        .unwrap()
        .success());
    let bundle = x.path().join("vmcust-logs");
    for (rel, content) in support::snapshot(&bundle) {
        assert!(
            !content.contains("SHADOW-HASH"),
            "{} ships the hash",
            rel.display()
        );
    }
    assert_eq!(
        fs::read_to_string(bundle.join("var/log/vmware-vmsvc-root.log")).unwrap(),
        "vmsvc started\n"
    );
    let manifest = fs::read_to_string(bundle.join("MANIFEST.txt")).unwrap();
    assert!(
        manifest.contains("skipped: /var/log/vmware-evil.log (a symbolic link: not followed)"),
        "{manifest}"
    );
    assert!(
        manifest.contains("skipped: /var/log/vmware-planted.log (owned by uid 65534, not root"),
        "{manifest}"
    );
}
