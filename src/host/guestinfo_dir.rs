//! A guestinfo directory (`--guestinfo-dir`): the host played by a directory of guestinfo
//! key files, for tests, dry runs and image builds; with a log of every
//! RPC, and a scripted responder.
//!
//! Layout of the directory:
//! - `<dir>/<key>` (e.g. `guestinfo.metadata`): the key's value, byte for byte. No file
//!   means the host has no value (`No value found`). `info-set` writes the file.
//! - `<dir>/rpc.log`: every RPC sent, one per line (newlines inside an RPC are written as
//!   `\n`), appended in order; `log <msg>` calls are recorded too.
//! - `<dir>/replies` (optional): how the host answers other RPCs. One rule per line,
//!   `PREFIX => REPLY [| REPLY …]`; `#` starts a comment line. The first rule whose prefix
//!   starts the RPC applies. The n-th matching RPC (counted in `rpc.log`, so the count
//!   survives separate processes) gets the n-th reply, the last one repeating. A reply
//!   `!TEXT` makes the RPC fail with `TEXT` as the host's reply (as `0 TEXT` from the VMX).
//!   Without a matching rule the reply is empty (success). Example, for the NIC handshake:
//!
//! ```text
//! deployPkg.update.state 4 103 => queryNicsSupported
//! deployPkg.update.state 4 104 => disconnected | disconnected | connected
//! ```

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use super::{check_key, describe, info_set, GuestRpc, RpcError, NO_VALUE_FOUND};

/// File in the fake directory that records every RPC.
pub(crate) const RPC_LOG: &str = "rpc.log";
/// File in the fake directory that scripts the replies.
pub(crate) const REPLIES: &str = "replies";

const TOOL: &str = "fake";

/// The fake host: a directory (see the module documentation).
#[derive(Debug, Clone)]
pub struct GuestinfoDir {
    dir: PathBuf,
}

impl GuestinfoDir {
    /// Uses `dir` as the host's guestinfo store. The directory is not created.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        GuestinfoDir { dir: dir.into() }
    }

    /// The directory behind this fake.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The RPCs recorded so far, in order.
    pub fn recorded(&self) -> Result<Vec<String>, RpcError> {
        match fs::read_to_string(self.dir.join(RPC_LOG)) {
            Ok(s) => Ok(s.lines().map(str::to_string).collect()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io(e)),
        }
    }

    fn record(&self, rpc: &str) -> Result<(), RpcError> {
        let line = rpc.replace('\\', "\\\\").replace('\n', "\\n");
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(RPC_LOG))
            .map_err(io)?;
        writeln!(f, "{line}").map_err(io)
    }

    fn key_path(&self, key: &str) -> Result<PathBuf, RpcError> {
        check_key(key)?;
        if key.contains('/') || key == "." || key == ".." || key == RPC_LOG || key == REPLIES {
            return Err(RpcError::InvalidKey(key.to_string()));
        }
        Ok(self.dir.join(key))
    }

    fn read_key(&self, key: &str) -> Result<Option<Vec<u8>>, RpcError> {
        match fs::read(self.key_path(key)?) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(e)),
        }
    }

    fn write_key(&self, key: &str, value: &str) -> Result<(), RpcError> {
        fs::write(self.key_path(key)?, value).map_err(io)
    }

    /// The scripted reply to an RPC that was just recorded.
    fn scripted_reply(&self, rpc: &str) -> Result<String, RpcError> {
        let script = match fs::read_to_string(self.dir.join(REPLIES)) {
            Ok(s) => s,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(String::new()),
            Err(e) => return Err(io(e)),
        };
        let Some((prefix, replies)) = script
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(|l| l.split_once("=>"))
            .map(|(p, r)| (p.trim(), r))
            .find(|(p, _)| rpc.starts_with(p))
        else {
            return Ok(String::new());
        };
        let replies: Vec<&str> = replies.split('|').map(str::trim).collect();
        // This RPC is already in the log, so the count is at least one.
        let seen = self
            .recorded()?
            .iter()
            .filter(|r| r.starts_with(prefix))
            .count();
        let reply = replies[seen.saturating_sub(1).min(replies.len() - 1)];
        match reply.strip_prefix('!') {
            Some(failure) => Err(RpcError::Failed {
                tool: TOOL.to_string(),
                rpc: describe(rpc),
                reply: failure.to_string(),
            }),
            None => Ok(reply.to_string()),
        }
    }
}

impl GuestRpc for GuestinfoDir {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn get_guestinfo(&mut self, key: &str) -> Result<Option<Vec<u8>>, RpcError> {
        let rpc = super::info_get(key)?;
        self.record(&rpc)?;
        self.read_key(key)
    }

    fn set_guestinfo(&mut self, key: &str, value: &str) -> Result<(), RpcError> {
        let rpc = info_set(key, value)?;
        self.send(&rpc).map(drop)
    }

    fn send(&mut self, rpc: &str) -> Result<String, RpcError> {
        self.record(rpc)?;
        if let Some(rest) = rpc.strip_prefix("info-get ") {
            return match self.read_key(rest)? {
                Some(v) => Ok(String::from_utf8_lossy(&v).into_owned()),
                None => Err(RpcError::Failed {
                    tool: TOOL.to_string(),
                    rpc: describe(rpc),
                    reply: NO_VALUE_FOUND.to_string(),
                }),
            };
        }
        if let Some(rest) = rpc.strip_prefix("info-set ") {
            // The value is everything after the first space following the key.
            let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
            self.write_key(key, value)?;
            return Ok(String::new());
        }
        self.scripted_reply(rpc)
    }

    fn log(&mut self, msg: &str) {
        if let Err(e) = self.record(&format!("log {msg}")) {
            tracing::debug!("fake host log failed: {e}");
        }
    }
}

fn io(source: std::io::Error) -> RpcError {
    RpcError::Io {
        tool: TOOL.to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_files_and_every_rpc_is_recorded() {
        let d = tempfile::tempdir().unwrap();
        let mut h = GuestinfoDir::new(d.path());
        assert_eq!(h.get_guestinfo("guestinfo.metadata").unwrap(), None);
        fs::write(d.path().join("guestinfo.metadata"), "a: b\n").unwrap();
        assert_eq!(
            h.get_guestinfo("guestinfo.metadata").unwrap().as_deref(),
            Some(&b"a: b\n"[..])
        );
        h.set_guestinfo("guestinfo.x.encoding", "").unwrap();
        assert_eq!(
            fs::read_to_string(d.path().join("guestinfo.x.encoding")).unwrap(),
            " "
        );
        h.log("hello");
        assert_eq!(
            h.recorded().unwrap(),
            [
                "info-get guestinfo.metadata",
                "info-get guestinfo.metadata",
                "info-set guestinfo.x.encoding  ",
                "log hello",
            ]
        );
        assert!(h.get_guestinfo("../etc").is_err());
        assert!(h.get_guestinfo(RPC_LOG).is_err());
    }

    #[test]
    fn replies_follow_the_script() {
        let d = tempfile::tempdir().unwrap();
        fs::write(
            d.path().join(REPLIES),
            "# nic handshake\n\
             deployPkg.update.state 4 103 => queryNicsSupported\n\
             deployPkg.update.state 4 104 => disconnected | disconnected | connected\n\
             bad => !Unknown command\n",
        )
        .unwrap();
        let mut h = GuestinfoDir::new(d.path());
        assert_eq!(
            h.send("deployPkg.update.state 4 103 /l@nics").unwrap(),
            "queryNicsSupported"
        );
        let polls: Vec<String> = (0..4)
            .map(|_| h.send("deployPkg.update.state 4 104 /l@nics").unwrap())
            .collect();
        assert_eq!(
            polls,
            ["disconnected", "disconnected", "connected", "connected"]
        );
        assert_eq!(h.send("deployPkg.update.state 5 0 /l").unwrap(), "");
        let e = h.send("bad thing").unwrap_err();
        assert!(e.to_string().contains("Unknown command"), "{e}");
    }
}
