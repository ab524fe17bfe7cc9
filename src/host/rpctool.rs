//! Guest RPC through the open-vm-tools command-line tools: `vmware-rpctool '<rpc>'`, with
//! `vmtoolsd --cmd '<rpc>'` as the fallback.
//!
//! Contract (open-vm-tools reference §4.1): the reply and a newline go to stdout with exit
//! 0 on success, to stderr with exit 1 on failure (`No value found` for a missing key);
//! exit 255 means "not in a VMware VM". Every call runs in its own process group with a
//! timeout, and the whole group is killed when it expires (`vmtoolsd --cmd` is known to
//! hang when called in quick succession).
//!
//! Each call is a process, which costs tens of milliseconds on an emulated guest's boot:
//! [`GuestRpc::prefetch`] starts several `info-get`s at once, each `vmware-rpctool` in its
//! own thread, and the reads that follow take their answers.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, Receiver};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{describe, info_get, info_set, short_reply, GuestRpc, RpcError, NO_VALUE_FOUND};
use crate::process::{find_on_path, run, Cmd, Ended, Output};

/// Per-call timeout used unless another is set.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// File name of the preferred tool.
pub(crate) const RPCTOOL: &str = "vmware-rpctool";
/// File name of the fallback tool.
pub(crate) const VMTOOLSD: &str = "vmtoolsd";

/// Largest reply read from a tool; more is cut off (the host never sends more than this).
const MAX_OUTPUT: u64 = 16 * 1024 * 1024;

/// The command-line tools transport.
#[derive(Debug, Clone)]
pub struct RpcTool {
    rpctool: Option<PathBuf>,
    vmtoolsd: Option<PathBuf>,
    timeout: Duration,
    /// Set once `vmware-rpctool` failed and `vmtoolsd` worked: later calls go to
    /// `vmtoolsd` directly (as cloud-init does).
    prefer_vmtoolsd: bool,
    /// Calls started ahead ([`GuestRpc::prefetch`], [`GuestRpc::set_many`]).
    pending: Pending,
}

/// Calls running in threads of their own: each key's answer to come, and the threads, so
/// that no tool outlives the transport. A clone of the transport starts with none (an
/// answer is taken once, by the transport that started the call).
#[derive(Default)]
struct Pending {
    answers: BTreeMap<String, Answer>,
    workers: Vec<JoinHandle<()>>,
}

/// A read made right after another when that one's value passes the test.
type FollowUp<'a> = (&'a str, fn(&[u8]) -> bool);

/// Where a call started ahead sends its outcome; closed without one when the call was not
/// made after all (a follow-up read whose first read found nothing).
type Answer = Receiver<Result<Outcome, RpcError>>;

impl Clone for Pending {
    fn clone(&self) -> Pending {
        Pending::default()
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.answers.keys()).finish()
    }
}

impl Drop for Pending {
    /// Waits for the calls nobody took (each is bounded by the call timeout).
    fn drop(&mut self) {
        for worker in std::mem::take(&mut self.workers) {
            let _ = worker.join();
        }
    }
}

/// How one tool run ended.
enum Outcome {
    /// Exit 0: the reply (one trailing newline removed).
    Reply(Vec<u8>),
    /// Exit 1 with `No value found` on stderr.
    NoValue,
}

impl RpcTool {
    /// Finds the tools on the process's `PATH`.
    pub fn from_env() -> Self {
        Self::from_search_path(&std::env::var_os("PATH").unwrap_or_default())
    }

    /// Finds the tools on the given `PATH`-style list of directories.
    pub fn from_search_path(path: &OsStr) -> Self {
        Self::with_tools(find_on_path(RPCTOOL, path), find_on_path(VMTOOLSD, path))
    }

    /// Uses exactly these tool paths (`None` = not installed).
    pub fn with_tools(rpctool: Option<PathBuf>, vmtoolsd: Option<PathBuf>) -> Self {
        RpcTool {
            rpctool,
            vmtoolsd,
            timeout: DEFAULT_TIMEOUT,
            prefer_vmtoolsd: false,
            pending: Pending::default(),
        }
    }

    /// Sets the per-call timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Path of `vmware-rpctool`, if found.
    pub fn rpctool(&self) -> Option<&Path> {
        self.rpctool.as_deref()
    }

    /// Path of `vmtoolsd`, if found.
    pub fn vmtoolsd(&self) -> Option<&Path> {
        self.vmtoolsd.as_deref()
    }

    /// Whether any tool was found.
    pub fn available(&self) -> bool {
        self.rpctool.is_some() || self.vmtoolsd.is_some()
    }

    /// Runs one RPC: `vmware-rpctool` first, `vmtoolsd --cmd` when rpctool is missing or
    /// fails for any reason other than "No value found".
    fn call(&mut self, rpc: &str) -> Result<Outcome, RpcError> {
        let rpctool = if self.prefer_vmtoolsd {
            None
        } else {
            self.rpctool.clone()
        };
        match rpctool {
            Some(tool) => match run_tool(&tool, &[], rpc, self.timeout) {
                Ok(out) => Ok(out),
                Err(e) => self.fall_back(rpc, e),
            },
            None => match self.vmtoolsd.clone() {
                Some(tool) => run_tool(&tool, &["--cmd"], rpc, self.timeout),
                None => Err(RpcError::NoTransport),
            },
        }
    }

    /// After `vmware-rpctool` failed with `first_err`: the RPC again through `vmtoolsd
    /// --cmd`, which later calls then use directly; `first_err` when there is none.
    fn fall_back(&mut self, rpc: &str, first_err: RpcError) -> Result<Outcome, RpcError> {
        let Some(vmtoolsd) = self.vmtoolsd.clone() else {
            return Err(first_err);
        };
        tracing::debug!("{first_err}; trying {VMTOOLSD}");
        let out = run_tool(&vmtoolsd, &["--cmd"], rpc, self.timeout)?;
        self.prefer_vmtoolsd = true;
        Ok(out)
    }

    /// The tool and timeout of calls that may run at once: `vmware-rpctool`, not
    /// `vmtoolsd --cmd`, which hangs when called in quick succession (its calls stay one
    /// by one).
    fn concurrent_tool(&self) -> Option<(PathBuf, Duration)> {
        let tool = self.rpctool.clone().filter(|_| !self.prefer_vmtoolsd)?;
        Some((tool, self.timeout))
    }

    /// Starts `info-get KEY` in a thread of its own and, when the value it gets is one
    /// `follow`'s test accepts, `info-get` of `follow`'s key right after it in the same
    /// thread. `false` when calls cannot run at once.
    fn start_reads(&mut self, key: &str, follow: Option<FollowUp>) -> bool {
        let Some((tool, timeout)) = self.concurrent_tool() else {
            return false;
        };
        let mut ask = |key: &str| {
            // A key that cannot be sent, or one already asked, is left to get_guestinfo.
            let rpc = info_get(key)
                .ok()
                .filter(|_| !self.pending.answers.contains_key(key))?;
            let (tx, rx) = channel();
            self.pending.answers.insert(key.to_string(), rx);
            Some((rpc, tx))
        };
        let first = ask(key);
        let then = follow.and_then(|(k, wanted)| Some((ask(k)?, wanted)));
        if first.is_none() && then.is_none() {
            return true;
        }
        let worker = std::thread::spawn(move || {
            let mut value = None;
            if let Some((rpc, tx)) = first {
                let outcome = run_tool(&tool, &[], &rpc, timeout);
                if let Ok(Outcome::Reply(v)) = &outcome {
                    value = Some(v.clone());
                }
                let _ = tx.send(outcome);
            }
            if let Some(((rpc, tx), wanted)) = then {
                if value.as_deref().is_some_and(wanted) {
                    let _ = tx.send(run_tool(&tool, &[], &rpc, timeout));
                }
            }
        });
        self.pending.workers.push(worker);
        true
    }

    /// The outcome of the call started ahead for `key`, if there is one, falling back to
    /// `vmtoolsd` as [`call`](RpcTool::call) does; a call made here when none was.
    fn take(&mut self, key: &str, rpc: &str) -> Result<Outcome, RpcError> {
        let answer = self.pending.answers.remove(key);
        self.outcome(rpc, answer)
    }

    /// The outcome `answer` brings, falling back to `vmtoolsd` as [`call`](RpcTool::call)
    /// does; without an answer (none started, not made after all, the thread panicked),
    /// the call made here.
    fn outcome(&mut self, rpc: &str, answer: Option<Answer>) -> Result<Outcome, RpcError> {
        match answer.map(|a| a.recv()) {
            Some(Ok(Ok(out))) => Ok(out),
            Some(Ok(Err(e))) => self.fall_back(rpc, e),
            Some(Err(_)) | None => self.call(rpc),
        }
    }

    /// The reply text of an RPC that is not a read: "No value found" is a failure.
    fn reply(&self, rpc: &str, outcome: Outcome) -> Result<String, RpcError> {
        match outcome {
            Outcome::Reply(v) => Ok(String::from_utf8_lossy(&v).into_owned()),
            Outcome::NoValue => Err(RpcError::Failed {
                tool: self.name().to_string(),
                rpc: describe(rpc),
                reply: NO_VALUE_FOUND.to_string(),
            }),
        }
    }
}

/// Runs `tool [args…] rpc` with the timeout and interprets its exit.
fn run_tool(tool: &Path, args: &[&str], rpc: &str, timeout: Duration) -> Result<Outcome, RpcError> {
    let name = tool
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| tool.display().to_string());
    let io = |source| RpcError::Io {
        tool: name.clone(),
        source,
    };
    let cmd = Cmd {
        program: tool.to_path_buf(),
        args: args
            .iter()
            .map(|a| a.to_string())
            .chain([rpc.to_string()])
            .collect(),
        cwd: None,
        env: Vec::new(),
        timeout,
        grace: Duration::ZERO,
        stdin: Vec::new(),
    };
    let never = AtomicBool::new(false);
    let finished = run(&cmd, Output::Bytes(MAX_OUTPUT as usize), &never).map_err(io)?;
    let (mut out, err) = (finished.stdout, finished.stderr);
    let code = match finished.ended {
        Ended::Exited(code) => Some(code),
        Ended::TimedOut | Ended::Stopped => {
            return Err(RpcError::Timeout {
                tool: name,
                rpc: describe(rpc),
                timeout,
            })
        }
        Ended::Signalled(_) => None,
    };
    match code {
        Some(0) => {
            if out.last() == Some(&b'\n') {
                out.pop();
            }
            Ok(Outcome::Reply(out))
        }
        Some(1) => {
            let text = String::from_utf8_lossy(&err);
            let text = text.trim_end_matches(['\n', '\r']);
            if text == NO_VALUE_FOUND {
                Ok(Outcome::NoValue)
            } else {
                Err(RpcError::Failed {
                    tool: name,
                    rpc: describe(rpc),
                    reply: short_reply(text),
                })
            }
        }
        Some(255) => Err(RpcError::NotVmware { tool: name }),
        code => {
            let text = String::from_utf8_lossy(&err);
            let how = match code {
                Some(c) => format!("exit status {c}"),
                None => "killed by a signal".to_string(),
            };
            Err(RpcError::Failed {
                tool: name,
                rpc: describe(rpc),
                reply: format!("{how}: {}", short_reply(&text)),
            })
        }
    }
}

impl GuestRpc for RpcTool {
    fn name(&self) -> &'static str {
        if self.prefer_vmtoolsd || self.rpctool.is_none() {
            VMTOOLSD
        } else {
            RPCTOOL
        }
    }

    fn get_guestinfo(&mut self, key: &str) -> Result<Option<Vec<u8>>, RpcError> {
        let rpc = info_get(key)?;
        match self.take(key, &rpc)? {
            Outcome::Reply(v) => Ok(Some(v)),
            Outcome::NoValue => Ok(None),
        }
    }

    /// Starts `vmware-rpctool info-get KEY` for each key at once, each in a thread of
    /// its own.
    fn prefetch(&mut self, keys: &[&str]) {
        for key in keys {
            if !self.start_reads(key, None) {
                return;
            }
        }
    }

    fn prefetch_then(&mut self, key: &str, then: &str, wanted: fn(&[u8]) -> bool) {
        self.start_reads(key, Some((then, wanted)));
    }

    fn set_guestinfo(&mut self, key: &str, value: &str) -> Result<(), RpcError> {
        let rpc = info_set(key, value)?;
        self.send(&rpc).map(drop)
    }

    /// Runs the `info-set`s at once, each `vmware-rpctool` in a thread of its own.
    fn set_many(&mut self, pairs: &[(&str, &str)]) -> Vec<Result<(), RpcError>> {
        let calls: Vec<_> = pairs
            .iter()
            .map(|(key, value)| {
                let rpc = info_set(key, value)?;
                let answer = self.concurrent_tool().map(|(tool, timeout)| {
                    let (tx, rx) = channel();
                    let call = rpc.clone();
                    self.pending.workers.push(std::thread::spawn(move || {
                        let _ = tx.send(run_tool(&tool, &[], &call, timeout));
                    }));
                    rx
                });
                Ok((rpc, answer))
            })
            .collect();
        calls
            .into_iter()
            .map(|call| {
                let (rpc, answer) = call?;
                let outcome = self.outcome(&rpc, answer)?;
                self.reply(&rpc, outcome).map(drop)
            })
            .collect()
    }

    fn send(&mut self, rpc: &str) -> Result<String, RpcError> {
        let outcome = self.call(rpc)?;
        self.reply(rpc, outcome)
    }

    fn log(&mut self, msg: &str) {
        let line: String = msg
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(super::MAX_MESSAGE_LEN - 8)
            .collect();
        if let Err(e) = self.send(&format!("log {line}")) {
            tracing::debug!("host log failed: {e}");
        }
    }
}

/// A `PATH` value made of the given directories, for tests and callers that inject one.
pub fn search_path<I, P>(dirs: I) -> OsString
where
    I: IntoIterator<Item = P>,
    P: AsRef<Path>,
{
    std::env::join_paths(dirs.into_iter().map(|d| d.as_ref().to_path_buf())).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn finds_tools_on_path_and_ignores_non_executables() {
        let d = tempfile::tempdir().unwrap();
        script(d.path(), RPCTOOL, "exit 0");
        std::fs::write(d.path().join(VMTOOLSD), "not executable").unwrap();
        let t = RpcTool::from_search_path(&search_path([d.path()]));
        assert!(t.rpctool().is_some());
        assert!(t.vmtoolsd().is_none());
        let none = RpcTool::from_search_path(OsStr::new(""));
        assert!(!none.available());
    }

    #[test]
    fn no_tools_is_no_transport() {
        let mut t = RpcTool::with_tools(None, None);
        assert!(matches!(
            t.get_guestinfo("guestinfo.x"),
            Err(RpcError::NoTransport)
        ));
    }
}
