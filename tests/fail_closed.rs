//! Fail closed (docs/security.md): a customization the early stage refuses stays an error
//! on every status surface after the late stage has run — `vmcust status`, the stand-in's
//! `cloud-init status` (plain, `--wait`, `--long`, `--format json`), `status.json` and
//! `result.json` — until a later boot succeeds.

mod support;

use std::fs;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output};

use support::text;
use support::vm::Vm;

/// The stand-in: a `cloud-init` link to the binary, reading the VM's root.
fn cloud_init(vm: &Vm, args: &[&str]) -> Output {
    let bin = vm.host.path().join("bin");
    let link = bin.join("cloud-init");
    if !link.exists() {
        fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), &link).unwrap();
    }
    Command::new(&link)
        .args(args)
        .env("VMCUST_ROOT", vm.root.path())
        .output()
        .unwrap()
}

fn gzip_cut_short(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    let full = enc.finish().unwrap();
    full[..full.len() / 2].to_vec()
}

fn b64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

fn json(path: PathBuf) -> serde_json::Value {
    let t = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&t).unwrap()
}

/// The guestinfo keys the host holds, with their values.
type Keys = Vec<(&'static str, String)>;

/// Each row: the case, the guestinfo keys the host holds, and what the reason names.
fn cases() -> Vec<(&'static str, Keys, &'static str)> {
    vec![
        (
            "bad JSON",
            vec![(
                "guestinfo.metadata",
                "{\"instance-id\": \"gi-1\", \"local-hostname\": ".to_string(),
            )],
            "guestinfo.metadata: not a json object or yaml mapping",
        ),
        (
            "wrong encoding name",
            vec![
                ("guestinfo.metadata", b64(b"instance-id: gi-1\n")),
                ("guestinfo.metadata.encoding", "base46".to_string()),
            ],
            "unknown encoding \"base46\"",
        ),
        (
            "corrupt gzip",
            vec![
                (
                    "guestinfo.metadata",
                    b64(&gzip_cut_short(b"instance-id: gi-1\nlocal-hostname: web\n")),
                ),
                ("guestinfo.metadata.encoding", "gzip+base64".to_string()),
            ],
            "not valid gzip data",
        ),
    ]
}

#[test]
fn a_refused_customization_stays_an_error_on_every_surface() {
    for (name, keys, reason) in cases() {
        let vm = Vm::new();
        for (k, v) in &keys {
            fs::write(vm.host.path().join(k), v).unwrap();
        }
        let early = vm.run("early");
        assert_eq!(
            early.status.code(),
            Some(65),
            "{name}: {}",
            text(&early.stderr)
        );
        assert!(
            text(&early.stderr).contains(reason),
            "{name}: {}",
            text(&early.stderr)
        );
        let late = vm.run("late");
        assert_eq!(
            late.status.code(),
            Some(0),
            "{name}: {}",
            text(&late.stderr)
        );

        let (code, out) = vm.status();
        assert_eq!(code, Some(1), "{name}: vmcust status: {out}");
        assert!(
            out.contains("run: error") && out.contains(reason),
            "{name}: {out}"
        );

        for args in [
            &["status"][..],
            &["status", "--wait"],
            &["status", "--long"],
        ] {
            let o = cloud_init(&vm, args);
            assert_eq!(o.status.code(), Some(1), "{name} {args:?}: {o:?}");
            assert!(
                text(&o.stdout).starts_with("status: error\n"),
                "{name} {args:?}: {o:?}"
            );
        }
        let long = text(&cloud_init(&vm, &["status", "--long"]).stdout);
        assert!(long.contains(reason), "{name}: {long}");
        let o = cloud_init(&vm, &["status", "--format", "json"]);
        assert_eq!(o.status.code(), Some(1), "{name}: {o:?}");
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["status"], "error", "{name}: {doc}");
        assert!(
            doc["errors"][0].as_str().unwrap().contains(reason),
            "{name}: {doc}"
        );

        // cloud-init's files say the same, and the boot is over.
        let status = json(vm.path("/var/lib/cloud/data/status.json"));
        let local = status["v1"]["init-local"]["errors"][0]
            .as_str()
            .unwrap_or("");
        assert!(local.contains(reason), "{name}: {status}");
        assert_eq!(status["v1"]["stage"], serde_json::Value::Null, "{name}");
        let result = json(vm.path("/var/lib/cloud/data/result.json"));
        let errors = result["v1"]["errors"].as_array().unwrap();
        assert!(
            errors.iter().any(|e| e.as_str().unwrap().contains(reason)),
            "{name}: {result}"
        );
        assert!(
            vm.path("/var/lib/cloud/instance/boot-finished").is_file(),
            "{name}"
        );

        // The next boot, with the same data, refuses again: still an error.
        assert_eq!(vm.run("early").status.code(), Some(65), "{name}");
        assert_eq!(vm.run("late").status.code(), Some(0), "{name}");
        assert_eq!(vm.status().0, Some(1), "{name}: second boot");
        assert_eq!(
            cloud_init(&vm, &["status"]).status.code(),
            Some(1),
            "{name}"
        );

        // A later boot that succeeds (the host's data fixed) says done again.
        for (k, _) in &keys {
            let _ = fs::remove_file(vm.host.path().join(k));
        }
        fs::write(
            vm.host.path().join("guestinfo.metadata"),
            "instance-id: gi-2\nlocal-hostname: fixed\n",
        )
        .unwrap();
        // A new VM as far as the trust rule goes (docs/security.md): a clone.
        fs::write(
            vm.path("/sys/class/dmi/id/product_uuid"),
            "4217E0A1-0000-0000-0000-00000000C10E\n",
        )
        .unwrap();
        vm.boot();
        let (code, out) = vm.status();
        assert_eq!(code, Some(0), "{name}: after a good boot: {out}");
        let o = cloud_init(&vm, &["status"]);
        assert_eq!(
            (o.status.code(), text(&o.stdout)),
            (Some(0), "status: done\n".into())
        );
        let result = json(vm.path("/var/lib/cloud/data/result.json"));
        assert_eq!(result["v1"]["errors"], serde_json::json!([]), "{name}");
    }
}

/// A failure in the late stage after a good early stage is an error too, and an early
/// error is not washed out by a late stage's re-run of a hand-over (vmcust-imc.service).
#[test]
fn a_later_stage_never_erases_an_earlier_error() {
    let vm = Vm::new();
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "{\"instance-id\": ",
    )
    .unwrap();
    assert_eq!(vm.run("early").status.code(), Some(65));
    // The late hand-over's pair of stages, within the same boot.
    let rerun = vm
        .command("early", 0)
        .arg("--reconfigure-network")
        .output()
        .unwrap();
    assert_eq!(rerun.status.code(), Some(65), "{}", text(&rerun.stderr));
    for _ in 0..2 {
        assert_eq!(vm.run("late").status.code(), Some(0));
        let (code, out) = vm.status();
        assert_eq!(code, Some(1), "{out}");
        let o = cloud_init(&vm, &["status"]);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
    }
}
