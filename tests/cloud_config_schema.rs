//! `vmcust schema FILE` end to end: one line per problem as `FILE:LINE: key.path:
//! message` (lines of the whole file, MIME parts included), did-you-mean, exit 0 for a
//! valid document, 2 for one applied with something left out, 65 for a refused one, no
//! secret in any output.

mod support;

use std::fs;
use std::path::Path;

use support::{text, vmcust};

fn write(dir: &Path, name: &str, body: &[u8]) -> String {
    let p = dir.join(name);
    fs::write(&p, body).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn a_valid_document_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "ok.yaml",
        b"#cloud-config\nruncmd: [ls]\nhostname: web1\n",
    );
    let out = vmcust(&["schema", &f]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{f}: valid (1 part)\n"));
}

#[test]
fn each_problem_is_one_line_with_file_line_and_key_path() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "bad.yaml",
        b"#cloud-config\nruncmdd: [ls]\nwrite_files:\n  - path: /x\n    permissions: rw\ntimezone: Asia/Tokio\nlandscape: {}\n",
    );
    let out = vmcust(&["schema", &f]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    let got = text(&out.stdout);
    let want = [
        format!("{f}:2: runcmdd: unknown key; did you mean runcmd?"),
        format!("{f}:5: write_files[0].permissions: is not a file mode; write octal digits such as '0644' (at most 07777)"),
        format!("{f}:6: timezone: \"Asia/Tokio\": unknown time zone; did you mean Asia/Tokyo?"),
        format!("{f}:7: landscape: a cloud-init key vmcust does not implement"),
    ];
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines.len(), want.len(), "{got}");
    for (line, w) in lines.iter().zip(&want) {
        assert!(line.starts_with(w.as_str()), "{line}\n  wanted {w}");
    }
    assert!(
        text(&out.stderr).contains("refused: 2 errors"),
        "{}",
        text(&out.stderr)
    );
}

/// What vmcust does not apply (a cloud-init key it lacks, a value cloud-init takes that it
/// cannot apply) does not refuse the document: `schema` names each with what vmcust
/// offers instead and exits 2, as `status` would after the boot; with `[user-data]
/// cloud_config_unknown = refuse` in the root's settings it exits 65.
#[test]
fn what_is_not_applied_exits_2_with_the_nearest_offer_or_65_when_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "ud.yaml",
        b"#cloud-config
runcmd: [ls]
lxd: {init: {storage_backend: dir}}
ntp: {ntp_client: myntpclient}
",
    );
    let root = dir.path().join("root");
    fs::create_dir_all(root.join("etc/vmcust")).unwrap();
    let r = root.to_str().unwrap();
    let out = vmcust(&["schema", &f, "--root", r]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let got = text(&out.stdout);
    assert!(
        got.contains(&format!("{f}:3: lxd: a cloud-init key vmcust does not implement; not applied (the customization ends degraded): install lxd with packages: and run lxd init --preseed with runcmd:")),
        "{got}"
    );
    assert!(
        got.contains(&format!(
            "{f}:4: ntp.ntp_client: \"myntpclient\" is not a client vmcust configures"
        )),
        "{got}"
    );
    assert!(
        text(&out.stderr).contains("2 things not applied"),
        "{}",
        text(&out.stderr)
    );
    fs::write(
        root.join("etc/vmcust/vmcust.conf"),
        "[user-data]\ncloud_config_unknown = refuse\n",
    )
    .unwrap();
    let out = vmcust(&["schema", &f, "--root", r]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cloud_config_unknown = refuse"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn mime_parts_are_placed_at_their_line_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mime = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=BB\n\n--BB\nContent-Type: text/cloud-config\n\n#cloud-config\nruncmd: [a]\n--BB\nContent-Type: text/cloud-config\n\n#cloud-config\nbootcmd: 5\n--BB\nContent-Type: text/cloud-config\nContent-Transfer-Encoding: base64\n\nI2Nsb3VkLWNvbmZpZwpob3N0bmFtZTogNDIK\n--BB--\n";
    let f = write(dir.path(), "ud.mime", mime.as_bytes());
    let out = vmcust(&["schema", &f]);
    assert_eq!(out.status.code(), Some(65));
    assert_eq!(
        text(&out.stdout),
        format!("{f}:13: bootcmd: is an integer; write a list\n{f} (part 3):2: hostname: is an integer; write a string\n")
    );
}

#[test]
fn refused_user_data_exits_65_naming_why() {
    let dir = tempfile::tempdir().unwrap();
    for (body, why) in [
        (
            &b"#include\nhttps://example.com/x\n"[..],
            "nothing at boot is fetched",
        ),
        (
            b"## template: jinja\n#cloud-config\nruncmd: [{{ a ]\n",
            "line 3: the Jinja template has a syntax error",
        ),
        (
            b"## template: jinja\n#include\nhttps://example.com/x\n",
            "the rendered Jinja template starts with",
        ),
        (b"hello\n", "no handler takes"),
    ] {
        let f = write(dir.path(), "ud", body);
        let out = vmcust(&["schema", &f]);
        assert_eq!(out.status.code(), Some(65), "{why}");
        assert!(text(&out.stderr).contains(why), "{}", text(&out.stderr));
    }
    let out = vmcust(&["schema", &dir.path().join("missing").to_string_lossy()]);
    assert_eq!(out.status.code(), Some(74), "{}", text(&out.stderr));
}

#[test]
fn vendor_data_is_checked_and_merged_under_user_data() {
    let dir = tempfile::tempdir().unwrap();
    let u = write(dir.path(), "user.yaml", b"#cloud-config\nruncmd: [user]\n");
    let v = write(
        dir.path(),
        "vendor.yaml",
        b"#cloud-config\nruncmd: [vendor]\nbootcmd: x\n",
    );
    let out = vmcust(&["schema", &u, "--vendor-data", &v]);
    assert_eq!(out.status.code(), Some(65));
    assert_eq!(
        text(&out.stdout),
        format!("{v}:3: bootcmd: is a string; write a list\n")
    );
    let out = vmcust(&["schema", &u, "--vendor-data", &v, "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["config"]["runcmd"],
        serde_json::json!([{"shell": "user"}])
    );
    assert_eq!(json["vendor_applied"], true);
}

#[test]
fn no_output_shows_a_password() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "pw.yaml",
        b"#cloud-config\nusers: [{name: a, plain_text_passwd: Hunter2Secret}]\nchpasswd: {list: 'root:RootSecret'}\nwrite_files: [{path: /k, content: FileSecret}]\nrunccmd: x\n",
    );
    for format in ["text", "json", "yaml"] {
        let out = vmcust(&["schema", &f, "--format", format]);
        let all = text(&out.stdout) + &text(&out.stderr);
        for s in ["Hunter2Secret", "RootSecret", "FileSecret"] {
            assert!(!all.contains(s), "{format}: {all}");
        }
    }
}

#[test]
fn the_man_pages_describe_schema() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man");
    assert!(vmcust(&["generate", "man", man.to_str().unwrap()])
        .status
        .success());
    let page = fs::read_to_string(man.join("vmcust-schema.1")).unwrap();
    assert!(page.contains("vendor"), "{page}");
    let main = fs::read_to_string(man.join("vmcust.1")).unwrap();
    assert!(
        main.contains("vmcust schema user") && main.contains("vmcust\\-schema"),
        "{main}"
    );
}
