//! The `vmware-rpctool` / `vmtoolsd --cmd` transport against small fake tools (shell
//! scripts in a temporary PATH directory): exit codes, stderr, fallback and timeouts.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use vmcust::test_api::host::{GuestRpc, RpcError};
use vmcust::test_api::rpctool::{search_path, RpcTool};

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

/// Makes the fake `vmware-rpctool` in `dir` refuse every RPC (it still records them), so
/// that only `vmtoolsd --cmd` answers.
fn only_vmtoolsd_works(dir: &Path) {
    let refusing = FAKE.replace(
        "if [ \"$1\" = \"--cmd\" ]; then shift; fi",
        "if [ \"$1\" = \"--cmd\" ]; then shift; else printf '%s|%s\\n' \"$#\" \"$1\" >> \"$0.log\"; echo 'Permission denied' >&2; exit 1; fi",
    );
    tool(dir, "vmware-rpctool", &refusing);
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

/// A read, asked directly or started ahead, falls back to `vmtoolsd --cmd` when
/// `vmware-rpctool` fails, and later reads go to it directly, one by one (never started
/// ahead: `vmtoolsd --cmd` hangs when called in quick succession).
#[test]
fn falls_back_to_vmtoolsd_and_stays_there() {
    for ahead in [false, true] {
        let (d, mut t) = both();
        only_vmtoolsd_works(d.path());
        if ahead {
            t.prefetch(&["guestinfo.metadata"]);
        }
        assert!(t.get_guestinfo("guestinfo.metadata").unwrap().is_some());
        assert_eq!(t.name(), "vmtoolsd");
        t.prefetch(&["guestinfo.metadata", "guestinfo.missing"]);
        assert_eq!(calls(d.path(), "vmtoolsd").len(), 1, "ahead: {ahead}");
        assert!(t.get_guestinfo("guestinfo.metadata").unwrap().is_some());
        assert_eq!(t.get_guestinfo("guestinfo.missing").unwrap(), None);
        assert_eq!(calls(d.path(), "vmware-rpctool").len(), 1, "ahead: {ahead}");
        assert_eq!(calls(d.path(), "vmtoolsd").len(), 3, "ahead: {ahead}");
    }
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

/// A fake `vmware-rpctool` that answers only when `$N` calls run at the same time: each
/// call marks that it started, waits up to 3 s for `$N` marks, and answers `together`,
/// else fails. Calls made one after another can never all answer.
fn barrier(dir: &Path, n: usize) {
    let body = format!(
        r#"#!/bin/sh
d=$(dirname "$0")
printf '%s\n' "$1" >> "$d/vmware-rpctool.log"
mkdir -p "$d/started"
: > "$d/started/$$"
i=0
while [ "$(ls "$d/started" | wc -l)" -lt {n} ]; do
  i=$((i + 1))
  if [ $i -gt 60 ]; then echo "alone" >&2; exit 1; fi
  sleep 0.05
done
echo together
"#
    );
    tool(dir, "vmware-rpctool", &body);
}

#[test]
fn prefetched_reads_run_at_once_and_each_runs_once() {
    let d = tempfile::tempdir().unwrap();
    barrier(d.path(), 3);
    let mut t = RpcTool::from_search_path(&search_path([d.path()]));
    let keys = ["guestinfo.a", "guestinfo.b", "guestinfo.c"];
    t.prefetch(&keys);
    // Asked again while running: not started twice.
    t.prefetch(&keys[..1]);
    for key in keys {
        assert_eq!(
            t.get_guestinfo(key).unwrap().as_deref(),
            Some(&b"together"[..]),
            "{key}"
        );
    }
    let mut log = calls(d.path(), "vmware-rpctool");
    log.sort();
    assert_eq!(
        log,
        [
            "info-get guestinfo.a",
            "info-get guestinfo.b",
            "info-get guestinfo.c"
        ]
    );
    // An answer is taken once: the next read is a call of its own.
    t.get_guestinfo("guestinfo.a").unwrap();
    assert_eq!(calls(d.path(), "vmware-rpctool").len(), 4);
}

#[test]
fn set_many_runs_the_sets_at_once_and_keeps_the_order_of_results() {
    let d = tempfile::tempdir().unwrap();
    barrier(d.path(), 2);
    let mut t = RpcTool::from_search_path(&search_path([d.path()]));
    let results = t.set_many(&[("guestinfo.x", "1"), ("guestinfo.y", "2")]);
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    let mut log = calls(d.path(), "vmware-rpctool");
    log.sort();
    assert_eq!(log, ["info-set guestinfo.x 1", "info-set guestinfo.y 2"]);
    // A key that cannot be sent fails alone, in its place.
    let (_d, mut t) = both();
    let results = t.set_many(&[("bad key", "1"), ("guestinfo.ok", "2")]);
    assert!(matches!(results[0], Err(RpcError::InvalidKey(_))));
    assert!(results[1].is_ok(), "{results:?}");
}

#[test]
fn a_transport_dropped_with_reads_running_waits_for_them() {
    let d = tempfile::tempdir().unwrap();
    tool(
        d.path(),
        "vmware-rpctool",
        "#!/bin/sh\nsleep 0.3\n: > \"$(dirname \"$0\")/finished\"\necho x\n",
    );
    let mut t = RpcTool::from_search_path(&search_path([d.path()]));
    t.prefetch(&["guestinfo.never-read"]);
    drop(t);
    assert!(d.path().join("finished").exists(), "no tool outlives it");
}

#[test]
fn a_follow_up_read_is_made_ahead_only_when_the_first_has_a_value() {
    let (d, mut t) = both();
    let non_blank = |v: &[u8]| !v.is_empty();
    t.prefetch_then("guestinfo.metadata", "guestinfo.twolines", non_blank);
    t.prefetch_then("guestinfo.missing", "guestinfo.denied", non_blank);
    assert!(t.get_guestinfo("guestinfo.metadata").unwrap().is_some());
    assert_eq!(t.get_guestinfo("guestinfo.missing").unwrap(), None);
    // Dropped without asking for either follow-up: the transport waits for its calls.
    drop(t);
    let mut log = calls(d.path(), "vmware-rpctool");
    log.sort();
    assert_eq!(
        log,
        [
            "1|info-get guestinfo.metadata",
            "1|info-get guestinfo.missing",
            "1|info-get guestinfo.twolines",
        ],
        "the follow-up of a key with a value is read ahead; of one without, never"
    );
    // Taken when asked for: no second call.
    let mut t = RpcTool::from_search_path(&search_path([d.path()]));
    t.prefetch_then("guestinfo.metadata", "guestinfo.twolines", non_blank);
    assert!(t.get_guestinfo("guestinfo.metadata").unwrap().is_some());
    assert_eq!(
        t.get_guestinfo("guestinfo.twolines").unwrap().as_deref(),
        Some(&b"x\n"[..])
    );
    assert_eq!(calls(d.path(), "vmware-rpctool").len(), 5);
}
