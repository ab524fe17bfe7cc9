//! Typos caught at the door at boot (`vmcust run --stage early` on a scratch VM root with
//! the fake host): each row is a handed-over spec, the exit status, the final state sent
//! to vCenter and the warnings the log (`/var/log/vmcust.log`) must hold, exactly once.

mod support;

use support::{text, vm::Vm};

const NIC: &str =
    "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n";

#[test]
fn typos_at_boot() {
    // (name, spec, exit status, final state's start, log words, each once)
    let rows: Vec<(&str, String, i32, &str, Vec<&str>)> = vec![
        (
            "a section typo that hides [DNS] fails, nothing changed",
            format!("{NIC}[DSN]\nNAMESERVER|1 = 10.0.0.1\n"),
            65,
            "deployPkg.update.state 4 100 /var/log/vmcust.log@invalid cust.cfg: line 6: [DSN]: unknown section, and there is no [DNS]: did you mean [DNS]?",
            vec![],
        ),
        (
            "a misspelt time zone fails with its line and the zone meant",
            format!("{NIC}[DATETIME]\nTIMEZONE = Asia/Tokio\n"),
            65,
            "deployPkg.update.state 4 100 /var/log/vmcust.log@cust.cfg: line 7: [DATETIME] TIMEZONE = \"Asia/Tokio\": unknown time zone; did you mean Asia/Tokyo?",
            vec![],
        ),
        (
            "a password without MARKER-ID is a warning in the log",
            format!("{NIC}[PASSWORD]\n-PASS = c2VjcmV0\n"),
            0,
            "deployPkg.update.state 5 0",
            vec!["will not set the root password: no [MISC] MARKER-ID"],
        ),
    ];
    for (name, spec, code, state, log_words) in rows {
        let vm = Vm::new();
        let before = vm.state();
        let shadow = std::fs::read_to_string(vm.path("/etc/shadow")).unwrap();
        vm.hand_over(&spec, &[("nics.txt", "0")]);
        let out = vm.run("early");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{name}: {stderr}");
        let last = vm.final_state().unwrap_or_default();
        assert!(last.starts_with(state), "{name}: sent {last:?}");
        let log = std::fs::read_to_string(vm.path("/var/log/vmcust.log")).unwrap_or_default();
        for w in log_words {
            assert_eq!(log.matches(w).count(), 1, "{name}: {w:?} in\n{log}");
        }
        assert!(
            !log.contains("None") && !log.contains("c2VjcmV0"),
            "{name}:\n{log}"
        );
        if code != 0 {
            assert_eq!(vm.state(), before, "{name}: the root changed");
        }
        // The password is never set without a marker.
        let now = std::fs::read_to_string(vm.path("/etc/shadow")).unwrap();
        assert_eq!(now, shadow, "{name}: /etc/shadow changed");
    }
}
