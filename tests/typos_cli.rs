//! Typos caught at the door, end to end through `vmcust show`, `plan` and `apply`: each
//! row is a spec with a typo and what the command must say (on which stream), its exit
//! status, and that the scratch root is unchanged.

mod support;

use std::path::Path;
use std::process::Output;

use support::{scratch_root, snapshot, text};

/// The binary, logging warnings only.
fn vmcust(args: &[&str]) -> Output {
    support::vmcust_env(args, &[("VMCUST_LOG", "warn")])
}

/// Writes `body` as `name` in `dir` and returns its path.
fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_str().unwrap().to_string()
}

/// One command run on a scratch root: the exit status, the words stderr must hold (each
/// exactly once) and the words neither stream may hold.
struct Row {
    name: &'static str,
    file: &'static str,
    body: String,
    /// The command; `{spec}` is replaced by the file's path and `{root}` by the root's.
    args: &'static [&'static str],
    code: i32,
    stderr_once: Vec<String>,
    stdout_has: Vec<&'static str>,
    never: Vec<&'static str>,
}

fn run(rows: Vec<Row>) {
    for row in rows {
        let root = scratch_root();
        let before = snapshot(root.path());
        let dir = tempfile::tempdir().unwrap();
        let spec = write(dir.path(), row.file, &row.body);
        let r = root.path().to_str().unwrap();
        let args: Vec<String> = row
            .args
            .iter()
            .map(|a| a.replace("{spec}", &spec).replace("{root}", r))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = vmcust(&args);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        let name = row.name;
        assert_eq!(
            out.status.code(),
            Some(row.code),
            "{name}: stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        for w in &row.stderr_once {
            let w = w.replace("{spec}", &spec);
            let n = stderr.matches(&w).count() + stdout.matches(&w).count();
            assert_eq!(n, 1, "{name}: {w:?} {n} times in\n{stdout}\n{stderr}");
        }
        for w in &row.stdout_has {
            assert!(stdout.contains(w), "{name}: {w:?} not in\n{stdout}");
        }
        for w in &row.never {
            assert!(
                !stdout.contains(w) && !stderr.contains(w),
                "{name}: {w:?} in\n{stdout}\n{stderr}"
            );
        }
        assert_eq!(snapshot(root.path()), before, "{name}: the root changed");
    }
}

const SHOW: &[&str] = &["show", "{spec}"];
const APPLY: &[&str] = &["apply", "--root", "{root}", "--imc", "{spec}"];

#[test]
fn misspelt_sections() {
    let dsn = "[NETWORK]\nHOSTNAME = web\n[DSN]\nNAMESERVER|1 = 10.0.0.1\n".to_string();
    let beside = "[NETWORK]\nHOSTNAME = web\n[DNS]\nSUFFIX|1 = example.com\n[DSN]\nX = 1\n";
    run(vec![
        Row {
            name: "show refuses a typo that hides [DNS]",
            file: "site-a.cfg",
            body: dsn.clone(),
            args: SHOW,
            code: 65,
            stderr_once: vec![
                "{spec}: line 3: [DSN]: unknown section, and there is no [DNS]: did you mean [DNS]?"
                    .into(),
                "nothing was changed".into(),
            ],
            stdout_has: vec![],
            never: vec!["cust.cfg"],
        },
        Row {
            name: "apply refuses it and changes nothing",
            file: "site-a.cfg",
            body: dsn,
            args: APPLY,
            code: 65,
            stderr_once: vec!["{spec}: line 3: [DSN]".into()],
            stdout_has: vec![],
            never: vec![],
        },
        Row {
            name: "a typo beside the real section warns once, naming the file",
            file: "site-b.cfg",
            body: beside.into(),
            args: SHOW,
            code: 0,
            stderr_once: vec![
                "{spec}: line 5: [DSN]: unknown section; kept but not used; did you mean [DNS]?"
                    .into(),
            ],
            stdout_has: vec!["host name"],
            never: vec!["cust.cfg"],
        },
    ]);
}

/// An ed25519 public key blob (`ssh-ed25519` and 32 bytes), as `ssh-keygen` writes it.
const ED25519: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f";

#[test]
fn bad_ssh_keys_are_refused_with_their_place() {
    let ovf = |keys: &str| support::ovf_env(&[("instance-id", "iid-keys"), ("public-keys", keys)]);
    let apply_ovf: &[&str] = &["apply", "--root", "{root}", "--ovf", "{spec}"];
    run(vec![
        Row {
            name: "invalid base64 in the second ovf key",
            file: "env.xml",
            body: ovf(&format!("ssh-ed25519 {ED25519} good@x&#10;ssh-ed25519 {}* bad@x", &ED25519[..40])),
            args: apply_ovf,
            code: 65,
            stderr_once: vec![
                "ovf property public-keys: line 2: ssh public key: the ssh-ed25519 key \"bad@x\" is not valid base64".into(),
            ],
            stdout_has: vec![],
            never: vec![&ED25519[..40]],
        },
        Row {
            name: "a key cut on a 4-character base64 boundary",
            file: "env.xml",
            body: ovf(&format!("ssh-ed25519 {ED25519} good@x&#10;ssh-ed25519 {} cut@x", &ED25519[..64])),
            args: apply_ovf,
            code: 65,
            stderr_once: vec![
                "ovf property public-keys: line 2: ssh public key: the ssh-ed25519 key \"cut@x\" is cut short (it ends inside or before its Ed25519 public key); copy the whole line from the .pub file again".into(),
            ],
            stdout_has: vec![],
            never: vec![&ED25519[..40]],
        },
        Row {
            name: "a blob whose own type differs",
            file: "env.xml",
            body: ovf(&format!("ssh-rsa {ED25519} mixed@x")),
            args: apply_ovf,
            code: 65,
            stderr_once: vec![
                "ovf property public-keys: line 1: ssh public key: the ssh-rsa key \"mixed@x\" holds a key of type \"ssh-ed25519\"".into(),
            ],
            stdout_has: vec![],
            never: vec![],
        },
        Row {
            name: "a misspelt key type",
            file: "env.xml",
            body: ovf(&format!("ssh-ed2519 {ED25519} typo@x")),
            args: apply_ovf,
            code: 65,
            stderr_once: vec!["did you mean ssh-ed25519?".into()],
            stdout_has: vec![],
            never: vec![],
        },
        Row {
            name: "good keys, one with options, are taken",
            file: "env.xml",
            body: ovf(&format!("no-pty ssh-ed25519 {ED25519} good@x&#10;ssh-ed25519 {ED25519}")),
            args: &["show", "--ovf", "{spec}"],
            code: 0,
            stderr_once: vec![],
            stdout_has: vec!["ssh keys        2 for root"],
            never: vec![],
        },
    ]);
}

#[test]
fn the_marker_rule_is_said_not_silent() {
    let no_marker = "[NETWORK]\nHOSTNAME = web\n[PASSWORD]\n-PASS = c2VjcmV0\n".to_string();
    let with_marker = format!("{no_marker}[MISC]\nMARKER-ID = m1\n");
    let plan: &[&str] = &["plan", "--root", "{root}", "{spec}"];
    let warning = "will not set the root password: no [MISC] MARKER-ID";
    run(vec![
        Row {
            name: "show warns about a password without MARKER-ID",
            file: "pw.cfg",
            body: no_marker.clone(),
            args: SHOW,
            code: 0,
            stderr_once: vec![warning.into()],
            stdout_has: vec!["root password   set to <redacted>, not applied: no MARKER-ID"],
            never: vec!["None", "c2VjcmV0", "secret"],
        },
        Row {
            name: "plan warns and lists the password as skipped",
            file: "pw.cfg",
            body: no_marker.clone(),
            args: plan,
            code: 0,
            stderr_once: vec![
                warning.into(),
                "skipped:  set the root password: no [MISC] MARKER-ID".into(),
            ],
            stdout_has: vec![],
            never: vec!["None", "c2VjcmV0", "/etc/shadow"],
        },
        Row {
            name: "plan's json names the skipped action and why",
            file: "pw.cfg",
            body: no_marker.clone(),
            args: &["plan", "--root", "{root}", "--format", "json", "{spec}"],
            code: 0,
            stderr_once: vec![warning.into()],
            stdout_has: vec![
                "\"skipped\": [",
                "\"action\": \"set the root password\"",
                "\"reason\": \"no [MISC] MARKER-ID",
            ],
            never: vec!["None", "c2VjcmV0", "null"],
        },
        Row {
            name: "with a new MARKER-ID nothing is skipped",
            file: "pw.cfg",
            body: with_marker,
            args: plan,
            code: 0,
            stderr_once: vec![],
            stdout_has: vec!["/etc/shadow", "marker m1 is new"],
            never: vec!["skipped", "will not", "None"],
        },
    ]);
}

#[test]
fn misspelt_time_zones_are_caught_where_the_spec_is_read() {
    let spec = "[NETWORK]\nHOSTNAME = web\n[DATETIME]\nUTC = yes\nTIMEZONE = Asia/Tokio\n";
    let message = "{spec}: line 5: [DATETIME] TIMEZONE = \"Asia/Tokio\": unknown time zone; did you mean Asia/Tokyo?";
    run(vec![
        Row {
            name: "show, without a root",
            file: "tz.cfg",
            body: spec.into(),
            args: SHOW,
            code: 65,
            stderr_once: vec![message.into(), "nothing was changed".into()],
            stdout_has: vec![],
            never: vec![],
        },
        Row {
            name: "plan, against the root's zones",
            file: "tz.cfg",
            body: spec.into(),
            args: &["plan", "--root", "{root}", "{spec}"],
            code: 65,
            stderr_once: vec![message.into()],
            stdout_has: vec![],
            never: vec![],
        },
        Row {
            name: "apply changes nothing",
            file: "tz.cfg",
            body: spec.into(),
            args: APPLY,
            code: 65,
            stderr_once: vec![message.into()],
            stdout_has: vec![],
            never: vec![],
        },
        Row {
            name: "a zone the root has",
            file: "tz.cfg",
            body: spec.replace("Tokio", "Tokyo"),
            args: &["plan", "--root", "{root}", "{spec}"],
            code: 0,
            stderr_once: vec![],
            stdout_has: vec!["/etc/localtime -> /usr/share/zoneinfo/Asia/Tokyo"],
            never: vec!["did you mean"],
        },
    ]);
}

#[test]
fn a_document_of_the_other_kind_gets_a_hint() {
    let ovf = support::ovf_env(&[("instance-id", "iid-1"), ("hostname", "web")]);
    let spec = "[NETWORK]\nHOSTNAME = web\n";
    let json = "{\"instance-id\": \"i-1\", \"local-hostname\": \"web\"}\n";
    let yaml = "instance-id: i-1\nlocal-hostname: web\n";
    let to_ovf: &[&str] = &["show", "--ovf", "{spec}"];
    let use_ovf = "{spec}: this looks like an OVF environment (ovf-env.xml); use --ovf FILE";
    let use_imc = "{spec}: this looks like a vSphere customization spec (cust.cfg); give it as FILE or --imc FILE";
    let use_dir = "{spec}: this looks like guestinfo metadata (JSON or YAML); save it as guestinfo.metadata in a directory and use --guestinfo-dir DIR";
    let row = |name, file, body: &str, args, hint: &str| Row {
        name,
        file,
        body: body.to_string(),
        args,
        code: 65,
        stderr_once: vec![hint.to_string(), "nothing was changed".into()],
        stdout_has: vec![],
        never: vec![],
    };
    run(vec![
        row("ovf environment as a spec", "env.xml", &ovf, SHOW, use_ovf),
        row("ovf environment to apply", "env.xml", &ovf, APPLY, use_ovf),
        row("cust.cfg to --ovf", "cust.cfg", spec, to_ovf, use_imc),
        row("json metadata as a spec", "md.json", json, SHOW, use_dir),
        row("yaml metadata as a spec", "md.yaml", yaml, SHOW, use_dir),
        row("yaml metadata to --ovf", "md.yaml", yaml, to_ovf, use_dir),
    ]);
    // The right option for each: no hint.
    run(vec![Row {
        name: "an ovf environment to --ovf",
        file: "env.xml",
        body: ovf,
        args: to_ovf,
        code: 0,
        stderr_once: vec![],
        stdout_has: vec!["host name       web"],
        never: vec!["this looks like"],
    }]);
}

/// A dotted name of these label lengths, e.g. `[63, 61]` is 125 characters.
fn name_of(labels: &[usize]) -> String {
    let parts: Vec<String> = labels.iter().map(|&n| "a".repeat(n)).collect();
    parts.join(".")
}

#[test]
fn an_fqdn_over_253_characters_is_refused_from_every_source() {
    let fqdn_254 = name_of(&[63, 63, 63, 62]);
    let fqdn_317 = name_of(&[63, 63, 63, 63, 61]);
    let domain_253 = name_of(&[63, 63, 63, 61]);
    assert_eq!((fqdn_254.len(), fqdn_317.len()), (254, 317));
    let ovf = |host: &str| support::ovf_env(&[("instance-id", "iid-1"), ("hostname", host)]);
    let to_ovf: &[&str] = &["show", "--ovf", "{spec}"];
    let mut rows = Vec::new();
    for (name, body, args, place) in [
        (
            "cust.cfg HOSTNAME and DOMAINNAME",
            format!("[NETWORK]\nHOSTNAME = web\nDOMAINNAME = {domain_253}\n"),
            SHOW,
            "{spec}: line 3: [NETWORK] DOMAINNAME",
        ),
        (
            "ovf hostname of 254",
            ovf(&fqdn_254),
            to_ovf,
            "ovf property hostname",
        ),
        (
            "ovf hostname of 317",
            ovf(&fqdn_317),
            to_ovf,
            "ovf property hostname",
        ),
    ] {
        rows.push(Row {
            name,
            file: if args == SHOW { "s.cfg" } else { "env.xml" },
            body,
            args,
            code: 65,
            stderr_once: vec![place.to_string(), "more than the 253".into()],
            stdout_has: vec![],
            never: vec![],
        });
    }
    rows.push(Row {
        name: "253 characters fit",
        file: "env.xml",
        body: ovf(&name_of(&[63, 63, 63, 61])),
        args: to_ovf,
        code: 0,
        stderr_once: vec![],
        stdout_has: vec!["host name"],
        never: vec!["253"],
    });
    run(rows);

    // Guestinfo metadata's local-hostname, and a host name and domain from two sources.
    let dir = tempfile::tempdir().unwrap();
    let gi = dir.path().join("gi");
    std::fs::create_dir(&gi).unwrap();
    let md = format!("instance-id: i-1\nlocal-hostname: {fqdn_254}\n");
    std::fs::write(gi.join("guestinfo.metadata"), md).unwrap();
    let out = vmcust(&["show", "--guestinfo-dir", gi.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{stderr}");
    assert!(
        stderr.contains("guestinfo.metadata: local-hostname: the fqdn")
            && stderr.contains("254 characters"),
        "{stderr}"
    );
    let spec = write(
        dir.path(),
        "d.cfg",
        &format!("[NETWORK]\nDOMAINNAME = {domain_253}\n"),
    );
    let env = write(dir.path(), "env.xml", &ovf("web"));
    let out = vmcust(&["show", "--imc", &spec, "--ovf", &env]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{stderr}");
    assert!(
        stderr.contains("host name and domain: the fqdn \"web\".<domain> would be 257 characters"),
        "{stderr}"
    );
}
