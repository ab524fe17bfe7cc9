//! The `vmware-rpctool` / `vmtoolsd --cmd` transport against small fake tools (shell
//! scripts in a temporary PATH directory): exit codes, stderr, fallback and timeouts.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use vmcust::host::rpctool::{search_path, RpcTool};
use vmcust::host::{GuestRpc, RpcError};

/// A fake tool: records its argument count and arguments, then answers like the real
/// tools from the cases below. `$TOOL_LOG` is where it records.
const FAKE: &str = r#"#!/bin/sh
if [ "$1" = "--cmd" ]; then shift; fi
printf '%s|%s\n' "$#" "$1" >> "$(dirname "$0")/$(basename "$0").log"
case "$1" in
  "info-get guestinfo.metadata") echo "instance-id: x"; exit 0 ;;
  "info-get guestinfo.twolines") printf 'x\n\n'; exit 0 ;;
  "info-get guestinfo.missing") echo "No value found" >&2; exit 1 ;;
  "info-get guestinfo.denied") echo "Permission denied" >&2; exit 1 ;;
  "info-set "*) echo; exit 0 ;;
  "deployPkg.update.state 4 103"*) echo queryNicsSupported; exit 0 ;;
  "notvm") echo "Error: must be run inside a virtual machine" >&2; exit 255 ;;
  "crash") kill -9 $$ ;;
  "hang") sleep 30; exit 0 ;;
  *) echo "Unknown command" >&2; exit 1 ;;
esac
"#;

fn tool(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn calls(dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(format!("{name}.log")))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn both() -> (tempfile::TempDir, RpcTool) {
    let d = tempfile::tempdir().unwrap();
    tool(d.path(), "vmware-rpctool", FAKE);
    tool(d.path(), "vmtoolsd", FAKE);
    let t = RpcTool::from_search_path(&search_path([d.path()]));
    (d, t)
}

#[test]
fn reads_trim_one_newline_and_missing_is_none() {
    let (d, mut t) = both();
    assert_eq!(
        t.get_guestinfo("guestinfo.metadata").unwrap().as_deref(),
        Some(&b"instance-id: x"[..])
    );
    assert_eq!(
        t.get_guestinfo("guestinfo.twolines").unwrap().as_deref(),
        Some(&b"x\n"[..])
    );
    assert_eq!(t.get_guestinfo("guestinfo.missing").unwrap(), None);
    // "No value found" is an answer, not a failure: no fallback to vmtoolsd.
    assert!(calls(d.path(), "vmtoolsd").is_empty());
    assert_eq!(
        calls(d.path(), "vmware-rpctool"),
        [
            "1|info-get guestinfo.metadata",
            "1|info-get guestinfo.twolines",
            "1|info-get guestinfo.missing"
        ]
    );
    assert_eq!(t.name(), "vmware-rpctool");
}

#[test]
fn set_and_send_use_one_argument() {
    let (d, mut t) = both();
    t.set_guestinfo("guestinfo.local-ipv4", "10.0.0.5").unwrap();
    t.set_guestinfo("guestinfo.cleared", "").unwrap();
    assert_eq!(
        t.send("deployPkg.update.state 4 103 /var/log/vmcust.log@nics")
            .unwrap(),
        "queryNicsSupported"
    );
    assert_eq!(
        calls(d.path(), "vmware-rpctool"),
        [
            "1|info-set guestinfo.local-ipv4 10.0.0.5",
            "1|info-set guestinfo.cleared  ",
            "1|deployPkg.update.state 4 103 /var/log/vmcust.log@nics",
        ]
    );
}

#[test]
fn falls_back_to_vmtoolsd_and_stays_there() {
    let (d, mut t) = both();
    let only_vmtoolsd_works = FAKE.replace(
        "if [ \"$1\" = \"--cmd\" ]; then shift; fi",
        "if [ \"$1\" = \"--cmd\" ]; then shift; else printf '%s|%s\\n' \"$#\" \"$1\" >> \"$0.log\"; echo 'Permission denied' >&2; exit 1; fi",
    );
    tool(d.path(), "vmware-rpctool", &only_vmtoolsd_works);
    assert!(t.get_guestinfo("guestinfo.metadata").unwrap().is_some());
    assert_eq!(t.name(), "vmtoolsd");
    assert!(t.get_guestinfo("guestinfo.metadata").unwrap().is_some());
    assert_eq!(calls(d.path(), "vmware-rpctool").len(), 1);
    assert_eq!(calls(d.path(), "vmtoolsd").len(), 2);
}

#[test]
fn failures_keep_the_reply_but_never_the_value() {
    let d = tempfile::tempdir().unwrap();
    tool(
        d.path(),
        "vmware-rpctool",
        &FAKE.replace("\"info-set \"*)", "\"nope\")"),
    );
    let mut t = RpcTool::from_search_path(&search_path([d.path()]));
    let e = t
        .set_guestinfo("guestinfo.password", "s3cret-value")
        .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, RpcError::Failed { .. }), "{msg}");
    assert!(msg.contains("Unknown command"), "{msg}");
    assert!(msg.contains("info-set guestinfo.password"), "{msg}");
    assert!(!msg.contains("s3cret"), "{msg}");

    let e = t.get_guestinfo("guestinfo.denied").unwrap_err().to_string();
    assert!(e.contains("Permission denied"), "{e}");
    let e = t.send("notvm").unwrap_err();
    assert!(matches!(e, RpcError::NotVmware { .. }), "{e}");
    let e = t.send("crash").unwrap_err().to_string();
    assert!(e.contains("killed by a signal"), "{e}");
}

#[test]
fn a_hanging_vmtoolsd_is_killed_at_the_timeout() {
    let d = tempfile::tempdir().unwrap();
    tool(d.path(), "vmtoolsd", FAKE);
    let mut t = RpcTool::from_search_path(&search_path([d.path()]))
        .with_timeout(Duration::from_millis(300));
    let start = Instant::now();
    let e = t.send("hang").unwrap_err();
    assert!(matches!(e, RpcError::Timeout { .. }), "{e}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(
        e.to_string().contains("vmtoolsd did not answer `hang`"),
        "{e}"
    );
    // The tool works again for the next call.
    assert!(t.get_guestinfo("guestinfo.metadata").unwrap().is_some());
}

#[test]
fn missing_tools() {
    let d = tempfile::tempdir().unwrap();
    let mut t = RpcTool::from_search_path(&search_path([d.path()]));
    assert!(!t.available());
    let e = t.get_guestinfo("guestinfo.metadata").unwrap_err();
    assert!(matches!(e, RpcError::NoTransport));
    // A tool that cannot be started.
    let mut t = RpcTool::with_tools(Some(d.path().join("absent")), None);
    assert!(matches!(t.send("x"), Err(RpcError::Io { .. })));
}
