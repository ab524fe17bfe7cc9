//! Stand-in for open-vm-tools' `vmware-rpctool` inside a test VM: it answers like the VMX
//! would (reference: open-vm-tools.md §4.1, §4.2, §2.8) and records every RPC, with the
//! boot number and the time since boot, in /vmtest/results/rpc.log on the test disk, so
//! the host can check what vCenter would have seen.
//!
//! A small compiled program, as the real tool is (tests/vm/run.sh builds it with rustc,
//! statically linked, at a fixed address): a shell script stand-in cost about 0.25 s per
//! call under emulation, and a position-independent build 36-42 ms (QEMU's TCG translates
//! its code again at each random load address) against 17 ms, all of which would have been
//! counted against vmcust's boot time.
//!
//! Host state lives on the test disk, as the VMX keeps it across guest reboots:
//!   /vmtest/host/guestinfo/<key>   guestinfo.* values (info-get reads, info-set writes)
//!
//! Any guest user may read and set any key, as on a VMX without
//! `guest_rpc.rpci.auth.cmd.info-set` / `info-get` (docs/security.md): the runner makes
//! the store directory world-writable and `rpc.log` world-appendable, and a set writes a
//! new file and renames it over the key, so a user replaces even a key the host (root) set.

use std::fs;
use std::io::Write;
use std::process::exit;

const STORE: &str = "/vmtest/host/guestinfo";
const LOG: &str = "/vmtest/results/rpc.log";

/// One tab-separated line per RPC; newlines in the RPC or reply are written as `\n`.
fn record(rpc: &str, reply: &str) {
    let boot = fs::read_to_string("/run/vmtest/boot").unwrap_or_default();
    let boot = boot.lines().next().filter(|b| !b.is_empty()).unwrap_or("?");
    let uptime = fs::read_to_string("/proc/uptime").unwrap_or_default();
    let uptime = uptime.split(' ').next().unwrap_or("");
    let line = format!(
        "{boot}\t{uptime}\t{}\t{}\n",
        rpc.replace('\n', "\\n"),
        reply.replace('\n', "\\n")
    );
    if let Ok(mut f) = fs::OpenOptions::new().append(true).create(true).open(LOG) {
        let _ = f.write_all(line.as_bytes());
    }
}

/// The VMX's "1 REPLY": printed with a newline on stdout, exit 0.
fn ok(rpc: &str, reply: &str) -> ! {
    record(rpc, reply);
    println!("{reply}");
    exit(0)
}

/// The VMX's "0 REPLY": printed with a newline on stderr, exit 1.
fn fail(rpc: &str, reply: &str) -> ! {
    record(rpc, &format!("!{reply}"));
    eprintln!("{reply}");
    exit(1)
}

/// A host slow to answer ENABLE_NICS on one boot: `/vmtest/host/hold-enable-nics` names
/// the boot. The hold is announced on the console and lasts longer than vmcust waits,
/// so the power-cut scenario can cut at a known moment: the customization's files are
/// written and nothing is reported yet.
fn hold_if_asked() {
    let Ok(hold_boot) = fs::read_to_string("/vmtest/host/hold-enable-nics") else {
        return;
    };
    let boot = fs::read_to_string("/run/vmtest/boot").unwrap_or_default();
    if hold_boot.trim() != boot.trim() {
        return;
    }
    if let Ok(mut console) = fs::OpenOptions::new().write(true).open("/dev/console") {
        let _ = writeln!(console, "vmtest-rpctool: holding ENABLE_NICS (boot {})", boot.trim());
    }
    std::thread::sleep(std::time::Duration::from_secs(60));
}

/// A key that names a file in the store and nothing else.
fn valid_key(key: &str) -> bool {
    !(key.is_empty() || key == "." || key == ".." || key.contains('/'))
}

fn main() {
    // Like the real tool: only argv[1] is used; none prints usage and exits 1.
    let Some(rpc) = std::env::args().nth(1) else {
        eprintln!("Usage: vmware-rpctool <command>");
        exit(1)
    };
    if rpc.starts_with("-h") || rpc.starts_with("--help") {
        println!("Usage: vmware-rpctool <command>");
        exit(0)
    }
    if let Some(rest) = rpc.strip_prefix("info-get ") {
        let key = rest.split(' ').next().unwrap_or("");
        if !valid_key(key) {
            fail(&rpc, "No value found")
        }
        match fs::read(format!("{STORE}/{key}")) {
            Ok(value) => {
                record(&rpc, &format!("({} bytes)", value.len()));
                // The VMX's value; the tool adds the newline.
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&value).and_then(|()| out.write_all(b"\n"));
                exit(0)
            }
            Err(_) => fail(&rpc, "No value found"),
        }
    }
    if let Some(rest) = rpc.strip_prefix("info-set ") {
        // The value is everything after the first space following the key.
        let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
        if !valid_key(key) {
            fail(&rpc, "Invalid key")
        }
        // A new file renamed over the old one: the caller needs the directory's write
        // permission only, not the file's (the VMX does not care who set a key).
        let tmp = format!("{STORE}/.{key}.{}.tmp", std::process::id());
        if fs::write(&tmp, value)
            .and_then(|()| fs::rename(&tmp, format!("{STORE}/{key}")))
            .is_err()
        {
            let _ = fs::remove_file(&tmp);
            fail(&rpc, "Could not set")
        }
        ok(&rpc, "")
    }
    if rpc.starts_with("deployPkg.update.state 4 103") {
        hold_if_asked();
        // ENABLE_NICS: this VMX supports the NIC status query.
        ok(&rpc, "queryNicsSupported")
    }
    if rpc.starts_with("deployPkg.update.state 4 104") {
        // QUERY_NICS: the NICs are connected (QEMU's NIC is never disconnected).
        ok(&rpc, "connected")
    }
    let accepted = ["deployPkg.update.state ", "log ", "tools.", "SetGuestInfo "];
    if accepted.iter().any(|p| rpc.starts_with(p)) {
        ok(&rpc, "")
    }
    fail(&rpc, "Unknown command")
}
