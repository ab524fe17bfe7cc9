//! Telling vCenter what happened: `deployPkg.update.state`, `guestinfo.gc.status`, and the
//! NIC-connect handshake (open-vm-tools reference §2.8, §2.11; cloud-init reference §5.9).
//!
//! Every send is best effort: a failing RPC is logged and never stops the customization,
//! because the state that matters most is the one that comes after it.

use std::time::Duration;

use crate::failure::Code;
use crate::host::GuestRpc;
use crate::state::LOG_PATH;

/// `TOOLSDEPLOYPKG_RUNNING`: customization in progress (also used for failures).
pub(crate) const STATE_RUNNING: u8 = 4;
/// `TOOLSDEPLOYPKG_DONE`: customization finished.
pub(crate) const STATE_DONE: u8 = 5;

/// The host's reply to 103 when it can report the NICs' connection state.
pub(crate) const NICS_QUERY_SUPPORTED: &str = "queryNicsSupported";
/// The host's reply to 104 once the NICs are connected.
pub(crate) const NICS_CONNECTED: &str = "connected";

/// The guestinfo key vCloud Director reads for a human-readable status.
pub(crate) const GC_STATUS_KEY: &str = "guestinfo.gc.status";

/// Longest `@message` sent; the host shows it in an event, not a document.
const MAX_MESSAGE: usize = 400;

/// Attempts and waits of the NIC-connect handshake (as open-vm-tools and cloud-init).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NicTiming {
    /// How many times 103 is sent.
    pub attempts: u32,
    /// Pause after an empty 103 reply.
    pub retry_wait: Duration,
    /// How many times 104 is sent per attempt.
    pub polls: u32,
    /// Pause between 104 polls.
    pub poll_wait: Duration,
}

impl Default for NicTiming {
    fn default() -> Self {
        NicTiming {
            attempts: 5,
            retry_wait: Duration::from_secs(5),
            polls: 5,
            poll_wait: Duration::from_secs(1),
        }
    }
}

/// How the NIC handshake ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NicsOutcome {
    /// `nics.txt` listed nothing.
    NothingToConnect,
    /// The host said the NICs are connected.
    Connected,
    /// The host cannot report NIC state (old VMX); NICs are assumed connected.
    QueryNotSupported,
    /// All attempts used up without `connected`.
    GaveUp,
    /// Interrupted (SIGTERM) before the end.
    Interrupted,
}

/// Sends status to the host for one customization.
pub(crate) struct Reporter<'a> {
    rpc: &'a mut dyn GuestRpc,
    post_gc_status: bool,
}

impl<'a> Reporter<'a> {
    /// A reporter; `post_gc_status` mirrors `MISC|POST-GC-STATUS`.
    pub(crate) fn new(rpc: &'a mut dyn GuestRpc, post_gc_status: bool) -> Self {
        Reporter {
            rpc,
            post_gc_status,
        }
    }

    /// Sends `deployPkg.update.state <state> <code> <log>[@message]`; returns the reply.
    pub(crate) fn state(&mut self, state: u8, code: Code, message: Option<&str>) -> String {
        let rpc = state_rpc(state, code, message);
        match self.rpc.send(&rpc) {
            Ok(reply) => reply,
            Err(e) => {
                tracing::warn!("could not send `{rpc}` to the host: {e}");
                String::new()
            }
        }
    }

    /// Reports success: `5 0`, and `Successful` in gc.status.
    pub(crate) fn done(&mut self) {
        self.state(STATE_DONE, Code::Success, None);
        self.gc_status("Successful");
        // The VM's vmware.log on the host is where an administrator without guest access
        // looks first.
        self.rpc.log("vmcust: guest customization succeeded");
    }

    /// Reports a failure with its code and a short reason (`4 <code> <log>@<reason>`).
    pub(crate) fn failed(&mut self, failure: &crate::failure::Failure) {
        let (code, gc_text) = (failure.kind.code(), failure.kind.gc_text());
        self.state(STATE_RUNNING, code, Some(&failure.reason));
        self.gc_status(gc_text);
        self.rpc.log(&format!(
            "vmcust: guest customization failed (code {}): {gc_text}; details in {LOG_PATH}",
            code as u16
        ));
    }

    /// Sets `guestinfo.gc.status` when the spec asked for it (vCloud Director).
    pub(crate) fn gc_status(&mut self, text: &str) {
        if !self.post_gc_status {
            return;
        }
        if let Err(e) = self.rpc.set_guestinfo(GC_STATUS_KEY, text) {
            tracing::warn!("could not set {GC_STATUS_KEY}: {e}");
        }
    }

    /// The NIC-connect handshake for the NIC list read from `nics.txt`. `sleep` waits and
    /// returns false when the wait was interrupted (SIGTERM), which ends the handshake.
    pub(crate) fn connect_nics(
        &mut self,
        nics: &str,
        timing: &NicTiming,
        sleep: &mut dyn FnMut(Duration) -> bool,
    ) -> NicsOutcome {
        let nics = nics.trim();
        if nics.is_empty() {
            tracing::warn!("nics.txt lists no NICs to connect");
            return NicsOutcome::NothingToConnect;
        }
        for attempt in 1..=timing.attempts {
            let reply = self.state(STATE_RUNNING, Code::EnableNics, Some(nics));
            if reply.is_empty() {
                if !sleep(timing.retry_wait) {
                    return NicsOutcome::Interrupted;
                }
                continue;
            }
            if reply != NICS_QUERY_SUPPORTED {
                tracing::info!(
                    "the host cannot report NIC state (it answered {}); assuming connected",
                    reply.escape_debug()
                );
                return NicsOutcome::QueryNotSupported;
            }
            for _ in 0..timing.polls {
                if self.state(STATE_RUNNING, Code::QueryNics, Some(nics)) == NICS_CONNECTED {
                    tracing::info!("NICs {nics} connected (attempt {attempt})");
                    return NicsOutcome::Connected;
                }
                if !sleep(timing.poll_wait) {
                    return NicsOutcome::Interrupted;
                }
            }
        }
        tracing::warn!(
            "the host did not connect NICs {nics} after {} attempts",
            timing.attempts
        );
        NicsOutcome::GaveUp
    }
}

/// The text of a `deployPkg.update.state` RPC. The message is made one short line: the
/// host parses everything after `@` as free text but shows it in a single event.
pub(crate) fn state_rpc(state: u8, code: Code, message: Option<&str>) -> String {
    let code = code as u16;
    match message.map(one_line) {
        Some(m) if !m.is_empty() => format!("deployPkg.update.state {state} {code} {LOG_PATH}@{m}"),
        _ => format!("deployPkg.update.state {state} {code} {LOG_PATH}"),
    }
}

fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(MAX_MESSAGE) {
        Some((cut, _)) => format!("{}...", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::guestinfo_dir::GuestinfoDir;

    fn host(replies: &str) -> (tempfile::TempDir, GuestinfoDir) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("replies"), replies).unwrap();
        let host = GuestinfoDir::new(dir.path());
        (dir, host)
    }

    #[test]
    fn state_messages_are_one_short_line() {
        assert_eq!(
            state_rpc(5, Code::Success, None),
            "deployPkg.update.state 5 0 /var/log/vmcust.log"
        );
        assert_eq!(
            state_rpc(4, Code::CustomizeFailed, Some("line 3:\n bad\tmask")),
            "deployPkg.update.state 4 100 /var/log/vmcust.log@line 3: bad mask"
        );
        let long = "x".repeat(500);
        assert!(state_rpc(4, Code::CustomizeFailed, Some(&long))
            .ends_with(&format!("@{}...", "x".repeat(MAX_MESSAGE))));
    }

    #[test]
    fn handshake_connects_after_polls() {
        let (_d, mut host) = host(
            "deployPkg.update.state 4 103 => queryNicsSupported\n\
             deployPkg.update.state 4 104 => disconnected | disconnected | connected\n",
        );
        let mut waits = Vec::new();
        let outcome = Reporter::new(&mut host, false).connect_nics(
            "0,1\n",
            &NicTiming::default(),
            &mut |d| {
                waits.push(d);
                true
            },
        );
        assert_eq!(outcome, NicsOutcome::Connected);
        assert_eq!(waits, vec![Duration::from_secs(1); 2]);
        let sent = host.recorded().unwrap();
        assert_eq!(
            sent,
            [
                "deployPkg.update.state 4 103 /var/log/vmcust.log@0,1",
                "deployPkg.update.state 4 104 /var/log/vmcust.log@0,1",
                "deployPkg.update.state 4 104 /var/log/vmcust.log@0,1",
                "deployPkg.update.state 4 104 /var/log/vmcust.log@0,1",
            ]
        );
    }

    #[test]
    fn handshake_cases() {
        let cases: &[(&str, &str, NicsOutcome, usize)] = &[
            ("no reply at all: 5 attempts", "", NicsOutcome::GaveUp, 5),
            (
                "old VMX",
                "deployPkg.update.state 4 103 => Unknown command",
                NicsOutcome::QueryNotSupported,
                1,
            ),
            (
                "never connected",
                "deployPkg.update.state 4 103 => queryNicsSupported\n",
                NicsOutcome::GaveUp,
                5 + 25,
            ),
        ];
        for (name, replies, want, rpcs) in cases {
            let (_d, mut host) = host(replies);
            let got = Reporter::new(&mut host, false).connect_nics(
                "1",
                &NicTiming::default(),
                &mut |_| true,
            );
            assert_eq!(&got, want, "{name}");
            assert_eq!(host.recorded().unwrap().len(), *rpcs, "{name}");
        }
    }

    #[test]
    fn interrupted_handshake_stops_at_once() {
        let (_d, mut host) = host("");
        let got =
            Reporter::new(&mut host, false)
                .connect_nics("1", &NicTiming::default(), &mut |_| false);
        assert_eq!(got, NicsOutcome::Interrupted);
        assert_eq!(host.recorded().unwrap().len(), 1);
    }

    #[test]
    fn gc_status_only_when_asked() {
        for (post, want) in [(false, None), (true, Some("Successful"))] {
            let (d, mut host) = host("");
            Reporter::new(&mut host, post).done();
            let got = std::fs::read_to_string(d.path().join(GC_STATUS_KEY)).ok();
            assert_eq!(got.as_deref(), want);
        }
    }
}
