//! The host boundary: what the engine asks of the VMware host (guest RPC) and what it
//! learns about the platform it runs on.
//!
//! Every guest RPC goes through the small [`GuestRpc`] trait. Real transports are
//! [`rpctool::RpcTool`] (`vmware-rpctool`, falling back to `vmtoolsd --cmd`) and
//! [`backdoor::Backdoor`] (reads and logging over the `vmw_backdoor` crate, the rest
//! delegated to the tools); [`guestinfo_dir::GuestinfoDir`] is a directory of key files for tests.

pub(crate) mod addresses;
pub(crate) mod backdoor;
pub(crate) mod guestinfo_dir;
pub(crate) mod platform;
pub(crate) mod rpctool;

use std::path::PathBuf;
use std::time::Duration;

/// The namespace prefix of guestinfo keys.
pub(crate) const GUESTINFO_PREFIX: &str = "guestinfo.";

/// The host's reply to `info-get` of a key it does not have.
pub(crate) const NO_VALUE_FOUND: &str = "No value found";

/// The largest guest→host message the VMX accepts (`GUESTMSG_MAX_IN_SIZE`).
pub(crate) const MAX_MESSAGE_LEN: usize = 64 * 1024;

/// Why a guest RPC failed. Messages never carry the value that was being set.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// No transport is available (no tools on PATH, no backdoor).
    #[error("no guest rpc transport: neither vmware-rpctool nor vmtoolsd was found on PATH")]
    NoTransport,
    /// The tool reports that this is not a VMware virtual machine.
    #[error("{tool}: not running in a virtual machine on a vmware hypervisor")]
    NotVmware {
        /// Which tool said so.
        tool: String,
    },
    /// The tool did not finish in time and was killed.
    #[error("{tool} did not answer `{rpc}` within {} s and was killed", timeout.as_secs_f32())]
    Timeout {
        /// The tool that hung.
        tool: String,
        /// The RPC verb and key (never the value).
        rpc: String,
        /// The time it was given.
        timeout: Duration,
    },
    /// The host (or the tool's transport) refused the RPC; `reply` is its answer.
    #[error("{tool}: `{rpc}` failed: {reply}")]
    Failed {
        /// The tool or transport that carried the RPC.
        tool: String,
        /// The RPC verb and key (never the value).
        rpc: String,
        /// The reply text of the failure (e.g. `Permission denied`), shortened.
        reply: String,
    },
    /// The tool could not be started or its output not read.
    #[error("{tool}: {source}")]
    Io {
        /// The tool that failed to run.
        tool: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The backdoor transport failed.
    #[error("vmware backdoor: {0}")]
    Backdoor(String),
    /// The key is not one that can be sent (empty, whitespace or control characters).
    #[error(
        "invalid guestinfo key {0:?}: use a non-empty name without spaces or control characters"
    )]
    InvalidKey(String),
    /// The message is larger than the host accepts.
    #[error("`{rpc}` is {len} bytes, more than the {MAX_MESSAGE_LEN} bytes the host accepts")]
    TooLarge {
        /// The RPC verb and key.
        rpc: String,
        /// The message length.
        len: usize,
    },
}

/// What the engine asks of the host. One implementation per transport; all calls block.
pub trait GuestRpc {
    /// Short name of the transport, for logs and `vmcust detect`.
    fn name(&self) -> &'static str;

    /// Reads a guestinfo key (`info-get`). `key` is the full name, e.g.
    /// `guestinfo.metadata`. `Ok(None)` means the host has no value ("No value found").
    fn get_guestinfo(&mut self, key: &str) -> Result<Option<Vec<u8>>, RpcError>;

    /// Starts reading `keys` ahead, where each read is slow (a process of its own): the
    /// [`get_guestinfo`](GuestRpc::get_guestinfo) of one of them that follows takes the
    /// answer. Transports whose reads are fast (the backdoor, a directory) do nothing.
    fn prefetch(&mut self, _keys: &[&str]) {}

    /// As [`prefetch`](GuestRpc::prefetch) for `key`, and `then` read right after it when
    /// `key`'s value is one `wanted` accepts (a guestinfo value's `.encoding`, asked for
    /// only where there is a value). Transports whose reads are fast do nothing.
    fn prefetch_then(&mut self, _key: &str, _then: &str, _wanted: fn(&[u8]) -> bool) {}

    /// Sets a guestinfo key (`info-set`). An empty value cannot be sent, so it is sent as a
    /// single space (the convention cloud-init uses to clear a key).
    fn set_guestinfo(&mut self, key: &str, value: &str) -> Result<(), RpcError>;

    /// Sets several keys, at once where each call is slow (a process of its own); one
    /// result per pair, in order.
    fn set_many(&mut self, pairs: &[(&str, &str)]) -> Vec<Result<(), RpcError>> {
        pairs
            .iter()
            .map(|(key, value)| self.set_guestinfo(key, value))
            .collect()
    }

    /// Sends any RPC (e.g. `deployPkg.update.state 4 103 …@nics`) and returns the host's
    /// reply text (`queryNicsSupported`, `connected`, or empty).
    fn send(&mut self, rpc: &str) -> Result<String, RpcError>;

    /// Writes a line to the VM's `vmware.log` on the host. Best effort: failures are
    /// logged locally and otherwise ignored.
    fn log(&mut self, msg: &str);
}

impl<T: GuestRpc + ?Sized> GuestRpc for Box<T> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn get_guestinfo(&mut self, key: &str) -> Result<Option<Vec<u8>>, RpcError> {
        (**self).get_guestinfo(key)
    }
    fn prefetch(&mut self, keys: &[&str]) {
        (**self).prefetch(keys)
    }
    fn prefetch_then(&mut self, key: &str, then: &str, wanted: fn(&[u8]) -> bool) {
        (**self).prefetch_then(key, then, wanted)
    }
    fn set_guestinfo(&mut self, key: &str, value: &str) -> Result<(), RpcError> {
        (**self).set_guestinfo(key, value)
    }
    fn set_many(&mut self, pairs: &[(&str, &str)]) -> Vec<Result<(), RpcError>> {
        (**self).set_many(pairs)
    }
    fn send(&mut self, rpc: &str) -> Result<String, RpcError> {
        (**self).send(rpc)
    }
    fn log(&mut self, msg: &str) {
        (**self).log(msg)
    }
}

/// Adds the `guestinfo.` prefix unless the key has it already.
pub(crate) fn guestinfo_key(key: &str) -> String {
    if key.starts_with(GUESTINFO_PREFIX) {
        key.to_string()
    } else {
        format!("{GUESTINFO_PREFIX}{key}")
    }
}

/// Checks that a key can be sent in an RPC: non-empty, no whitespace, no control characters.
pub(crate) fn check_key(key: &str) -> Result<(), RpcError> {
    if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(RpcError::InvalidKey(key.chars().take(80).collect()));
    }
    Ok(())
}

/// The `info-get` RPC text for a key.
pub(crate) fn info_get(key: &str) -> Result<String, RpcError> {
    check_key(key)?;
    Ok(format!("info-get {key}"))
}

/// The `info-set` RPC text for a key and value (empty value → one space).
pub(crate) fn info_set(key: &str, value: &str) -> Result<String, RpcError> {
    check_key(key)?;
    let value = if value.is_empty() { " " } else { value };
    let rpc = format!("info-set {key} {value}");
    if rpc.len() > MAX_MESSAGE_LEN {
        return Err(RpcError::TooLarge {
            rpc: describe(&rpc),
            len: rpc.len(),
        });
    }
    Ok(rpc)
}

/// The part of an RPC that is safe to show: its verb and first argument (the key or the
/// state), never a value or a message.
pub(crate) fn describe(rpc: &str) -> String {
    let mut words = rpc.split(' ');
    let verb = words.next().unwrap_or_default();
    let first: String = words.next().unwrap_or_default().chars().take(80).collect();
    if first.is_empty() {
        verb.chars().take(80).collect()
    } else {
        format!("{verb} {first}")
    }
}

/// Shortens a host reply for an error message (first line, at most 200 characters).
pub(crate) fn short_reply(reply: &str) -> String {
    let line = reply.trim().lines().next().unwrap_or_default();
    let mut s: String = line.chars().take(200).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

/// How to pick a transport.
#[derive(Debug, Clone, Default)]
pub(crate) struct TransportOptions {
    /// Use the fake backed by this directory instead of the real host.
    pub guestinfo_dir: Option<PathBuf>,
    /// Per-call timeout for the tools; `None` uses [`rpctool::DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
}

/// Opens the transport the options ask for: the fake directory when given, else the
/// backdoor (if this is a VMware CPU and the probe succeeds) with the tools for the rest,
/// else the tools alone.
pub(crate) fn open(opts: &TransportOptions) -> Box<dyn GuestRpc> {
    if let Some(dir) = &opts.guestinfo_dir {
        return Box::new(guestinfo_dir::GuestinfoDir::new(dir));
    }
    let mut tools = rpctool::RpcTool::from_env();
    if let Some(t) = opts.timeout {
        tools = tools.with_timeout(t);
    }
    match backdoor::Backdoor::open(tools.clone()) {
        Ok(b) => Box::new(b),
        Err(e) => {
            tracing::debug!("backdoor not used: {e}");
            Box::new(tools)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_rpc_texts() {
        assert_eq!(guestinfo_key("metadata"), "guestinfo.metadata");
        assert_eq!(guestinfo_key("guestinfo.metadata"), "guestinfo.metadata");
        assert_eq!(
            info_get("guestinfo.metadata").unwrap(),
            "info-get guestinfo.metadata"
        );
        assert_eq!(
            info_set("guestinfo.x", "").unwrap(),
            "info-set guestinfo.x  "
        );
        assert_eq!(
            info_set("guestinfo.x", "a b").unwrap(),
            "info-set guestinfo.x a b"
        );
        for bad in ["", "a b", "a\nb", "a\tb"] {
            assert!(matches!(info_get(bad), Err(RpcError::InvalidKey(_))));
        }
        let big = "x".repeat(MAX_MESSAGE_LEN);
        assert!(matches!(
            info_set("guestinfo.x", &big),
            Err(RpcError::TooLarge { .. })
        ));
    }

    #[test]
    fn describe_hides_values() {
        assert_eq!(
            describe("info-set guestinfo.pw secret"),
            "info-set guestinfo.pw"
        );
        assert_eq!(
            describe("deployPkg.update.state 4 103 /log@nics"),
            "deployPkg.update.state 4"
        );
        assert_eq!(describe("log"), "log");
    }
}
