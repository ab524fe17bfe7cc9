//! `show`/`plan` with every kind of source: the OVF environment (XML file, ISO image
//! built by xorriso), guestinfo data (the fake host directory), an appliance mapping, and
//! their precedence when several are given.

mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use support::{example, scratch_root};

/// Runs vmcust; `show` prints JSON here (its default is a summary for people).
fn vmcust(args: &[&str]) -> Output {
    let mut args = args.to_vec();
    if args.first() == Some(&"show") && !args.contains(&"--format") {
        args.extend(["--format", "json"]);
    }
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(args)
        .env("VMCUST_LOG", "error")
        .output()
        .unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn ovf_with_a_password_property_never_prints_the_password() {
    let file = support::ovf_input("b64-network-config.xml");
    let out = vmcust(&["show", "--ovf", file.to_str().unwrap()]);
    let all =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let v = json(&out);
    assert_eq!(v["customization"]["instance_id"], "vm-7c1e-0042");
    assert_eq!(v["origins"]["root-password"], "ovf");
    assert!(!all.contains("0vf-Pa55"), "the OVF password leaked");
}

#[test]
fn ovf_from_an_iso_image_built_by_xorriso() {
    let dir = tempfile::tempdir().unwrap();
    let content = dir.path().join("content");
    fs::create_dir(&content).unwrap();
    fs::write(
        content.join("ovf-env.xml"),
        support::ovf_env(&[
            ("instance-id", "iso-1"),
            ("hostname", "from-iso.example.org"),
        ]),
    )
    .unwrap();
    let iso = dir.path().join("ovf.iso");
    support::require_tool("xorriso", "xorriso");
    let status = Command::new("xorriso")
        .args([
            "-as", "mkisofs", "-quiet", "-V", "OVF ENV", "-J", "-R", "-o",
        ])
        .arg(&iso)
        .arg(&content)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("xorriso is needed for this test: apt-get install -y xorriso");
    assert!(status.success());
    let v = json(&vmcust(&["show", "--ovf", iso.to_str().unwrap()]));
    assert_eq!(v["found_in"][0]["source"], "ovf");
    let place = v["found_in"][0]["place"].as_str().unwrap();
    assert!(
        place.starts_with("the OVF environment (") && place.contains(".iso"),
        "{place}"
    );
    assert_eq!(v["customization"]["identity"]["host_name"], "from-iso");
    assert_eq!(v["customization"]["identity"]["domain"], "example.org");
    let root = scratch_root();
    let out = vmcust(&[
        "plan",
        "--root",
        root.path().to_str().unwrap(),
        "--ovf",
        iso.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("| from-iso\n"));
}

#[test]
fn appliance_properties_configure_a_static_nic() {
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("ovf-env.xml");
    fs::write(
        &env,
        support::ovf_env(&[
            ("appliance.hostname", "vpx01"),
            ("appliance.ip0", "10.9.8.7"),
            ("appliance.netmask0", "24"),
            ("appliance.gateway", "10.9.8.1"),
            ("appliance.dns", "10.9.8.53"),
        ]),
    )
    .unwrap();
    let map = dir.path().join("ovf-properties.conf");
    fs::write(
        &map,
        "[properties]\nhostname = appliance.hostname\nipv4-address = appliance.ip0\n\
         ipv4-netmask = appliance.netmask0\nipv4-gateway = appliance.gateway\ndns-servers = appliance.dns\n",
    )
    .unwrap();
    let root = scratch_root();
    let out = vmcust(&[
        "apply",
        "--root",
        root.path().to_str().unwrap(),
        "--ovf",
        env.to_str().unwrap(),
        "--ovf-properties",
        map.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let netplan = fs::read_to_string(root.path().join("etc/netplan/50-vmcust.yaml")).unwrap();
    for want in [
        "10.9.8.7/24",
        "via: 10.9.8.1",
        "10.9.8.53",
        "set-name: ens192",
    ] {
        assert!(netplan.contains(want), "{want} missing:\n{netplan}");
    }
}

#[test]
fn precedence_imc_then_ovf_then_guestinfo() {
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("ovf-env.xml");
    fs::write(
        &env,
        support::ovf_env(&[("hostname", "from-ovf"), ("instance-id", "ovf-id")]),
    )
    .unwrap();
    let host = dir.path().join("host");
    fs::create_dir(&host).unwrap();
    fs::write(
        host.join("guestinfo.metadata"),
        "instance-id: gi-id\nlocal-hostname: from-guestinfo\npublic-keys-data: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f x@y\n",
    )
    .unwrap();
    fs::write(host.join("guestinfo.userdata"), "#!/bin/sh\ntrue\n").unwrap();
    let v = json(&vmcust(&[
        "show",
        example("dhcp.cfg").to_str().unwrap(),
        "--ovf",
        env.to_str().unwrap(),
        "--guestinfo-dir",
        host.to_str().unwrap(),
    ]));
    let o = &v["origins"];
    assert_eq!(
        v["customization"]["identity"]["host_name"],
        "build-agent-17"
    );
    assert_eq!(o["host-name"], "imc");
    assert_eq!(o["time-zone"], "imc");
    assert_eq!(o["instance-id"], "ovf");
    assert_eq!(o["ssh-authorized-keys"], "guestinfo");
    assert_eq!(v["origins"]["user-data"], "guestinfo");
}

#[test]
fn malformed_sources_are_refused_with_where_and_what() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        ("bad.xml", "<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\">\n<PropertySection>\n</Environment>", "line 3"),
        ("wrongns.xml", "<Environment xmlns=\"urn:other\"/>", "namespace"),
    ];
    for (name, text, needle) in cases {
        let p = dir.path().join(name);
        fs::write(&p, text).unwrap();
        let out = vmcust(&["show", "--ovf", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{name}: {err}");
        assert!(err.contains(needle) && err.contains(name), "{name}: {err}");
    }
    let host = dir.path().join("host");
    fs::create_dir(&host).unwrap();
    fs::write(host.join("guestinfo.metadata"), "e30=").unwrap();
    fs::write(host.join("guestinfo.metadata.encoding"), "rot13").unwrap();
    let out = vmcust(&["show", "--guestinfo-dir", host.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{err}");
    assert!(err.contains("guestinfo.metadata.encoding"), "{err}");
    let none = vmcust(&["show"]);
    assert_eq!(
        none.status.code(),
        Some(64),
        "no source at all is a usage error"
    );
    assert!(Path::new(env!("CARGO_BIN_EXE_vmcust")).exists());
}

/// A real-looking ed25519 key blob (the type and 32 key bytes).
const ED_BLOB: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f";

/// A list of keys with a `#` comment line and a blank line, as people write them, is read
/// by every source that carries keys: the comments are left out, the keys kept (a tab
/// between fields included, as sshd reads it), and a bad key is named by its real line.
#[test]
fn key_lists_with_comment_lines_are_read_by_every_source() {
    let keys = |nl: &str| {
        format!("# ops team{nl}ssh-ed25519 {ED_BLOB} a@x{nl}{nl}ssh-ed25519\t{ED_BLOB}\tb@y{nl}")
    };
    let want = serde_json::json!([
        format!("ssh-ed25519 {ED_BLOB} a@x"),
        format!("ssh-ed25519\t{ED_BLOB}\tb@y")
    ]);
    // The same text with its second key misspelt: line 4 of the text, entry [2] of
    // a list (which has no blank entry).
    let bad = |nl: &str| keys(nl).replace("ssh-ed25519\t", "ssh-ed2551\t");
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, case: &str, text: String| -> Output {
        let case = dir.path().join(case);
        fs::create_dir_all(&case).unwrap();
        let args: Vec<String> = match name {
            "ovf" | "appliance" => {
                let prop = if name == "ovf" {
                    "public-keys"
                } else {
                    "appliance.keys"
                };
                // In an XML attribute a newline is written &#10; (a raw one reads as a blank).
                let xml = text.replace('\n', "&#10;").replace('\t', "&#9;");
                fs::write(case.join("env.xml"), support::ovf_env(&[(prop, &xml)])).unwrap();
                let mut a = vec!["--ovf".into(), case.join("env.xml").display().to_string()];
                if name == "appliance" {
                    fs::write(
                        case.join("map.conf"),
                        "[properties]\nssh-keys = appliance.keys\n",
                    )
                    .unwrap();
                    a.extend([
                        "--ovf-properties".into(),
                        case.join("map.conf").display().to_string(),
                    ]);
                }
                a
            }
            _ => {
                fs::write(case.join("guestinfo.metadata"), text).unwrap();
                vec!["--guestinfo-dir".into(), case.display().to_string()]
            }
        };
        let mut all = vec!["show"];
        all.extend(args.iter().map(String::as_str));
        vmcust(&all)
    };
    let metadata_string =
        |t: String| format!("public-keys-data: {}\n", serde_json::to_string(&t).unwrap());
    let metadata_list = |t: String| {
        let items: Vec<&str> = t.split('\n').filter(|l| !l.is_empty()).collect();
        format!("public-keys: {}\n", serde_json::to_string(&items).unwrap())
    };
    let rows: [(&str, String, String, &str); 4] = [
        (
            "ovf",
            keys("\n"),
            bad("\n"),
            "ovf property public-keys: line 4",
        ),
        ("appliance", keys("\n"), bad("\n"), "appliance.keys: line 4"),
        (
            "metadata-string",
            metadata_string(keys("\n")),
            metadata_string(bad("\n")),
            "unknown key type",
        ),
        (
            "metadata-list",
            metadata_list(keys("\n")),
            metadata_list(bad("\n")),
            "public-keys[2]",
        ),
    ];
    for (name, good, bad_text, where_) in rows {
        let v = json(&run(name, name, good));
        assert_eq!(
            v["customization"]["identity"]["ssh_authorized_keys"], want,
            "{name}"
        );
        let out = run(name, &format!("{name}-bad"), bad_text);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{name}: a bad key was accepted");
        assert!(
            err.contains(where_) && err.contains("ssh-ed2551"),
            "{name}: {where_:?} not in {err}"
        );
    }
}

/// User-data follows the sources' precedence, not the order they are read in: a spec's
/// raw cloud-init user-data wins over the OVF environment's (issue 17: `plan --imc raw.cfg
/// --ovf env.xml` took the OVF user-data).
#[test]
fn a_specs_user_data_beats_the_ovf_environments() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("cust.cfg"),
        "[CLOUDINIT]\nMETADATA = md.yaml\nUSERDATA = ud.txt\n",
    )
    .unwrap();
    fs::write(dir.path().join("md.yaml"), "instance-id: raw-1\n").unwrap();
    fs::write(dir.path().join("ud.txt"), "#!/bin/sh\necho from-imc\n").unwrap();
    use base64::Engine as _;
    let ovf_ud = base64::engine::general_purpose::STANDARD.encode("#!/bin/sh\necho from-ovf\n");
    fs::write(
        dir.path().join("env.xml"),
        support::ovf_env(&[("instance-id", "ovf-1"), ("user-data", &ovf_ud)]),
    )
    .unwrap();
    let imc = dir.path().join("cust.cfg");
    let ovf = dir.path().join("env.xml");
    let out = vmcust(&[
        "show",
        "--imc",
        imc.to_str().unwrap(),
        "--ovf",
        ovf.to_str().unwrap(),
    ]);
    let v = json(&out);
    assert_eq!(v["origins"]["user-data"], "imc", "{v}");
    assert_eq!(v["origins"]["instance-id"], "imc", "{v}");
    let root = scratch_root();
    let out = vmcust(&[
        "plan",
        "--root",
        root.path().to_str().unwrap(),
        "--format",
        "json",
        "--imc",
        imc.to_str().unwrap(),
        "--ovf",
        ovf.to_str().unwrap(),
    ]);
    let v = json(&out);
    assert_eq!(v["boot"]["user_data"]["from"], "imc", "{v}");
}

/// The same fault gives the same exit status from `plan` as from a boot stage: a root
/// whose /etc/hosts is a directory cannot be read, which is I/O (74) both ways, and the
/// boot tells vCenter `4 100` (issue 17: it was 65 from `plan` and 1 at boot).
#[test]
fn an_unreadable_root_file_is_io_from_plan_and_from_run() {
    let spec = "[NETWORK]\nHOSTNAME = web01\n";
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cust.cfg");
    fs::write(&cfg, spec).unwrap();
    let root = scratch_root();
    let _ = fs::remove_file(root.path().join("etc/hosts"));
    fs::create_dir_all(root.path().join("etc/hosts")).unwrap();
    let plan = vmcust(&[
        "plan",
        "--root",
        root.path().to_str().unwrap(),
        cfg.to_str().unwrap(),
    ]);
    assert_eq!(
        plan.status.code(),
        Some(74),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let vm = support::vm::Vm::new();
    let _ = fs::remove_file(vm.path("/etc/hosts"));
    fs::create_dir_all(vm.path("/etc/hosts")).unwrap();
    vm.hand_over(spec, &[]);
    let run = vm.run("early");
    assert_eq!(
        run.status.code(),
        plan.status.code(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let last = vm.final_state().unwrap_or_default();
    assert!(last.starts_with("deployPkg.update.state 4 100 "), "{last}");
}
