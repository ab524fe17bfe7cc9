//! `vmcust query` after a real boot tells what the instance applied, for every source
//! kind that can carry a cloud-config (guestinfo, a raw cloud-init vSphere spec, an OVF
//! environment, a NoCloud seed drive): accounts, SSH keys by `ssh-keygen -l` fingerprint, files written (with
//! `write_files`, deferred ones included) with mode and owner, commands and their exit
//! status, the time zone, each module and what was skipped; a vSphere spec's password and
//! script left out for a missing MARKER-ID are shown with the reason. Key paths and
//! `--all` as cloud-init's `query`.

mod support;

use std::fs;
use std::process::{Command, Output};

use support::example;
use support::text;
use support::vm::Vm;

/// A key made by `ssh-keygen -t ed25519`; `ssh-keygen -lf` prints this fingerprint for it.
const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFdIi7BduwfuU48BgN9a8EqHjzBXJfeQL+pqg6n+/Jpd alice@example";
const FINGERPRINT: &str = "SHA256:KjluU7sI/9fwI62mQlFT1ge/MZl5nmiUNpQeoEw+ppg";

/// The document every source kind carries.
fn document() -> String {
    format!(
        "#cloud-config\ntimezone: Europe/Paris\ngroups: [ops]\nusers:\n  - name: alice\n    groups: [ops]\n    ssh_authorized_keys:\n      - {KEY}\n\
write_files:\n  - path: /etc/motd.d/welcome\n    content: hello\n    permissions: '0640'\n  - path: /home/alice/later\n    content: x\n    owner: alice:alice\n    permissions: '0600'\n    defer: true\n\
bootcmd:\n  - echo boot >> /var/tmp/bootcmd-runs\nruncmd:\n  - [sh, -c, 'echo run >> /var/tmp/runcmd-runs']\n  - [sh, -c, 'exit 3']\n"
    )
}

/// A VM whose root has a Debian system's account files and the zone the document names.
fn vm() -> Vm {
    let vm = Vm::new();
    fs::write(
        vm.path("/etc/group"),
        "root:x:0:\nsudo:x:27:\nusers:x:100:\nnogroup:x:65534:\n",
    )
    .unwrap();
    fs::write(
        vm.path("/etc/gshadow"),
        "root:*::\nsudo:*::\nusers:*::\nnogroup:*::\n",
    )
    .unwrap();
    for d in [
        "/etc/skel",
        "/home",
        "/var/tmp",
        "/usr/share/zoneinfo/Europe",
    ] {
        fs::create_dir_all(vm.path(d)).unwrap();
    }
    fs::copy(
        "/usr/share/zoneinfo/Europe/Paris",
        vm.path("/usr/share/zoneinfo/Europe/Paris"),
    )
    .expect("tzdata is needed for this test");
    vm
}

fn query(vm: &Vm, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .arg("query")
        .args(args)
        .arg("--root")
        .arg(vm.root.path())
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// Boots `vm` (early, then late); the late stage ends failed, as runcmd's second
/// command exits 3.
fn boot(vm: &Vm) {
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(0), "{}", text(&early.stderr));
    vm.run("late");
}

/// Guestinfo metadata and user-data.
fn by_guestinfo(vm: &Vm) {
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: q-1\nlocal-hostname: q-vm\n",
    )
    .unwrap();
    fs::write(vm.host.path().join("guestinfo.userdata"), document()).unwrap();
}

/// A raw cloud-init vSphere spec with its metadata and userdata files.
fn by_raw_spec(vm: &Vm) {
    let spec = fs::read_to_string(example("raw-cloud-init.cfg")).unwrap();
    vm.hand_over(
        &spec,
        &[
            ("nics.txt", "0\n"),
            ("metadata", "instance-id: q-2\nlocal-hostname: q-vm\n"),
            ("userdata", &document()),
        ],
    );
}

/// An OVF environment with a `user-data` property, as a seed file.
fn by_ovf(vm: &Vm) {
    use base64::Engine as _;
    let seed = vm.path("/var/lib/vmcust/seed");
    fs::create_dir_all(&seed).unwrap();
    let ud = base64::engine::general_purpose::STANDARD.encode(document());
    fs::write(
        seed.join("ovf-env.xml"),
        format!(
            "<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" \
             xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\"><PropertySection>\
             <Property oe:key=\"instance-id\" oe:value=\"q-3\"/>\
             <Property oe:key=\"hostname\" oe:value=\"q-vm\"/>\
             <Property oe:key=\"user-data\" oe:value=\"{ud}\"/></PropertySection></Environment>"
        ),
    )
    .unwrap();
}

/// A NoCloud seed drive (`genisoimage -V cidata`) at `/dev/sr0`.
fn by_seed_drive(vm: &Vm) {
    support::require_tool("genisoimage", "genisoimage");
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("tree");
    fs::create_dir_all(&top).unwrap();
    fs::write(
        top.join("meta-data"),
        "instance-id: q-4
local-hostname: q-vm
",
    )
    .unwrap();
    fs::write(top.join("user-data"), document()).unwrap();
    let image = dir.path().join("seed.iso");
    let made = Command::new("genisoimage")
        .args(["-quiet", "-R", "-J", "-V", "cidata", "-o"])
        .arg(&image)
        .arg(&top)
        .output()
        .expect("genisoimage is needed for this test: apt-get install -y genisoimage");
    assert!(made.status.success(), "{}", text(&made.stderr));
    fs::create_dir_all(vm.path("/dev")).unwrap();
    fs::copy(&image, vm.path("/dev/sr0")).unwrap();
}

/// Gives a VM its customization.
type Give = fn(&Vm);

#[test]
fn query_tells_what_a_cloud_config_boot_applied_for_every_source_kind() {
    let kinds: [(&str, Give); 4] = [
        ("guestinfo", by_guestinfo),
        ("raw vSphere spec", by_raw_spec),
        ("OVF environment", by_ovf),
        ("NoCloud seed drive", by_seed_drive),
    ];
    for (kind, give) in kinds {
        let vm = vm();
        give(&vm);
        boot(&vm);
        assert!(
            vm.path("/home/alice/later").is_file(),
            "{kind}: the boot wrote the deferred file"
        );
        let q = ok(&query(&vm, &[]));
        for want in [
            "time zone: Europe/Paris\n",
            "accounts:\n  user alice: created\n",
            "  group ops: created\n",
            &format!("ssh keys:\n  for alice: ssh-ed25519 {FINGERPRINT} alice@example\n"),
            "  timezone (late): ran",
            "  write_files_deferred (late): ran",
            "  runcmd (late): failed: ",
            "commands:\n  bootcmd: /bin/sh /var/lib/vmcust/instances/",
            "/scripts/bootcmd: succeeded (exit status 0)\n",
            "exited with status 3",
            "  created  /etc/motd.d/welcome (cloud-config write_files; mode 0640, owner root:root)\n",
            "  created  /home/alice/later (cloud-config write_files (deferred), by write_files_deferred; mode 0600, owner alice:alice)\n",
            "/etc/timezone (time zone name (Debian), by timezone; mode 0644",
            "  created  /home/alice/.ssh/authorized_keys (ssh authorized keys (cloud-config); mode 0600, owner alice:alice)\n",
            "skipped:\n",
            "  cloud-config growpart: growpart: the root is not the running system\n",
        ] {
            assert!(q.contains(want), "{kind}: {want:?} not in:\n{q}");
        }
        for wrong in ["time zone: not set", "ssh keys: none", "commands: none run"] {
            assert!(!q.contains(wrong), "{kind}: {wrong:?} in:\n{q}");
        }

        // The same as JSON, by key path and whole.
        let users: serde_json::Value =
            serde_json::from_str(&ok(&query(&vm, &["accounts.users"]))).unwrap();
        assert_eq!(
            users,
            serde_json::json!([{"name": "alice", "change": "created"}]),
            "{kind}"
        );
        assert_eq!(
            ok(&query(&vm, &["ssh_keys.0.fingerprint"])),
            format!("{FINGERPRINT}\n"),
            "{kind}"
        );
        assert_eq!(ok(&query(&vm, &["applied.time_zone"])), "Europe/Paris\n");
        assert_eq!(ok(&query(&vm, &["result.outcome"])), "done\n");
        let yaml = ok(&query(&vm, &["--format", "yaml"]));
        assert!(yaml.contains("fingerprint: "), "{kind}: {yaml}");
        assert!(
            ok(&query(&vm, &["accounts", "--format", "yaml"])).contains("name: alice"),
            "{kind}"
        );
        let all: serde_json::Value = serde_json::from_str(&ok(&query(&vm, &["--all"]))).unwrap();
        let a = &all["applied"];
        let runcmd: Vec<&serde_json::Value> = a["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["module"] == "runcmd")
            .collect();
        assert_eq!(runcmd.len(), 1, "{kind}: {a:#}");
        assert_eq!(runcmd[0]["exit_status"], 3, "{kind}");
        let later = a["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == "/home/alice/later")
            .unwrap_or_else(|| panic!("{kind}: no deferred file in {a:#}"));
        assert_eq!(later["module"], "write_files_deferred");
        assert_eq!(later["mode"], "0600");
        assert_eq!(later["owner"], "alice:alice");
        assert!(a["modules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["module"] == "bootcmd" && m["outcome"] == "ran"));
        // A key that is not there names the keys that are.
        let bad = query(&vm, &["accounts.nobody"]);
        assert_eq!(bad.status.code(), Some(64), "{kind}");
        assert!(
            text(&bad.stderr).contains("no key \"nobody\" in accounts (keys there: users, groups)"),
            "{kind}: {}",
            text(&bad.stderr)
        );

        // analyze blames each module and each script part as a step of its own.
        let blame = ok(&Command::new(env!("CARGO_BIN_EXE_vmcust"))
            .args(["analyze", "blame", "--root"])
            .arg(vm.root.path())
            .output()
            .unwrap());
        for want in [
            "s (early) cloud-config bootcmd\n",
            "s (early) cloud-config write_files\n",
            "s (late) cloud-config timezone\n",
            "s (late) cloud-config write_files_deferred\n",
            "s (late) cloud-config runcmd runcmd\n",
        ] {
            assert!(blame.contains(want), "{kind}: {want:?} not in:\n{blame}");
        }

        // The stages again: every module is skipped as already run, and the record keeps
        // what the first run did.
        let before = a["files"].clone();
        boot(&vm);
        let again: serde_json::Value = serde_json::from_str(&ok(&query(&vm, &["--all"]))).unwrap();
        assert_eq!(again["applied"]["files"], before, "{kind}");
        assert_eq!(again["applied"]["time_zone"], "Europe/Paris", "{kind}");
    }
}

/// A vSphere spec's password and script without a MARKER-ID are left out: `query` says
/// so, with the reason, instead of reporting them done.
#[test]
fn a_password_and_script_left_out_for_a_missing_marker_are_shown_with_the_reason() {
    let vm = vm();
    vm.enable_scripts();
    let spec: String = fs::read_to_string(example("password-marker-script.cfg"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("MARKER-ID"))
        .map(|l| format!("{l}\n"))
        .collect();
    vm.hand_over(
        &spec,
        &[("nics.txt", "0\n"), ("script0001.bat", "#!/bin/sh\ntrue\n")],
    );
    vm.boot();
    let q = ok(&query(&vm, &[]));
    for want in [
        "root password: not changed\n",
        "skipped:\n",
        "no [MISC] MARKER-ID",
        "add MARKER-ID = <new id>",
        "scripts: none run",
    ] {
        assert!(q.contains(want), "{want:?} not in:\n{q}");
    }
    let skipped: serde_json::Value = serde_json::from_str(&ok(&query(&vm, &["skipped"]))).unwrap();
    let whats: Vec<&str> = skipped
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["what"].as_str().unwrap())
        .collect();
    assert!(whats.iter().any(|w| w.contains("password")), "{skipped:#}");
    assert!(whats.iter().any(|w| w.contains("script")), "{skipped:#}");
    // `status` names them too, with the reason, under the instance.
    let (code, st) = vm.status();
    assert_eq!(code, Some(0), "{st}");
    for want in [
        "  skipped: set the root password and force its change at next login: no [MISC] MARKER-ID",
        "  skipped: run custom script script0001.bat: no [MISC] MARKER-ID",
    ] {
        assert!(st.contains(want), "{want:?} not in:\n{st}");
    }
    let json = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["status", "--format", "json", "--root"])
        .arg(vm.root.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["skipped"].as_array().map(Vec::len), Some(2), "{v:#}");
    assert!(v["skipped"][0]["why"]
        .as_str()
        .unwrap()
        .contains("add MARKER-ID = <new id>"));
}

/// vmcust's own records store their times as RFC 3339; records an older vmcust wrote
/// with Unix integers are still read by `query`, `status` and `analyze`. cloud-init's own
/// `status.json` keeps cloud-init's float seconds.
#[test]
fn records_store_rfc3339_and_old_unix_integer_records_are_still_read() {
    let vm = vm();
    by_guestinfo(&vm);
    boot(&vm);
    let json = |p: &str| -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(vm.path(p)).unwrap()).unwrap()
    };
    let rfc3339 = |v: &serde_json::Value, what: &str| {
        let t = v
            .as_str()
            .unwrap_or_else(|| panic!("{what}: {v} is not a string"));
        assert!(
            t.len() == 20 && t.ends_with('Z') && t.as_bytes()[10] == b'T',
            "{what}: {t}"
        );
    };
    let result = json("/var/lib/vmcust/instances/q-1/result.json");
    rfc3339(&result["finished"], "result.json finished");
    let applied = json("/var/lib/vmcust/instances/q-1/applied.json");
    rfc3339(&applied["recorded"], "applied.json recorded");
    let times = json("/var/lib/vmcust/boot-times.json");
    rfc3339(
        &times["boots"][0]["stages"][0]["started"],
        "boot-times.json started",
    );
    let status = json("/run/vmcust/status.json");
    rfc3339(&status["updated"], "status.json updated");
    // cloud-init's own file keeps cloud-init's numbers.
    let ci = json("/var/lib/cloud/data/status.json");
    assert!(ci["v1"]["init"]["start"].is_f64(), "{ci}");

    // Records as an older vmcust wrote them: Unix integers.
    let old = |p: &str, from: &str, to: &str| {
        let text = fs::read_to_string(vm.path(p)).unwrap();
        let first = text
            .find(from)
            .unwrap_or_else(|| panic!("{from} not in {p}"));
        let end = first + text[first..].find("Z\"").unwrap() + 2;
        fs::write(
            vm.path(p),
            format!("{}{to}{}", &text[..first], &text[end..]),
        )
        .unwrap();
    };
    old(
        "/var/lib/vmcust/instances/q-1/result.json",
        "\"finished\": \"",
        "\"finished\": 1780000000",
    );
    old(
        "/var/lib/vmcust/instances/q-1/applied.json",
        "\"recorded\": \"",
        "\"recorded\": 1780000000",
    );
    old(
        "/var/lib/vmcust/boot-times.json",
        "\"started\": \"",
        "\"started\": 1780000000",
    );
    old(
        "/run/vmcust/status.json",
        "\"updated\": \"",
        "\"updated\": 1780000000",
    );
    let q = ok(&query(&vm, &[]));
    assert!(
        q.contains("outcome: done (code 0) at 2026-05-28T20:26:40Z\n"),
        "{q}"
    );
    assert!(
        q.contains("applied by: vmcust run at 2026-05-28T20:26:40Z\n"),
        "{q}"
    );
    assert_eq!(
        ok(&query(&vm, &["applied.recorded"])),
        "2026-05-28T20:26:40Z\n"
    );
    let status = Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["status", "--root"])
        .arg(vm.root.path())
        .output()
        .unwrap();
    assert!(
        text(&status.stdout).contains("updated 2026-05-28T20:26:40Z"),
        "{}{}",
        text(&status.stdout),
        text(&status.stderr)
    );
    let show = ok(&Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["analyze", "show", "--root"])
        .arg(vm.root.path())
        .output()
        .unwrap());
    assert!(show.contains("started 2026-05-28T20:26:40Z"), "{show}");
}
