//! open-vm-tools' deployPkg as it talks to cloud-init, for the tests (reference
//! open-vm-tools.md §2.5 step 7, §2.7, §2.9; fleet-contracts.md §8): the fixed path
//! `/usr/bin/cloud-init` (here a link to vmcust named `cloud-init`), `cloud-init -v` read
//! from its first digit as `<major>[-.]<minor>` (21.1 at least for raw data), the
//! hand-over of a raw-data spec (files copied as `.tmp` and renamed, `cust.cfg` last; no
//! reboot, no final state: both are cloud-init's), and `WaitForCloudinitDone`: a tick a
//! second, `cloud-init status` (no options) when the elapsed seconds are a multiple of 5,
//! until the answer is neither "not run" nor "running" or `wait-cloudinit-timeout` runs
//! out. Exit 1 is an error; releases before 13.0.10 read every other non-zero exit as
//! UNKNOWN (issue #768), later ones read the text. The tick is shortened for tests.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// How a tools release reads `cloud-init status`'s exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// 12.1.5 … 13.0.9: any exit but 0 and 1 is UNKNOWN, which ends the wait.
    Before13010,
    /// 13.0.10, 13.1.0 and later: exit 2 is parsed as text like exit 0.
    From13010,
}

/// tools' `cloud-init status` states (`WaitForCloudinitDone`'s enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CiStatus {
    NotRun,
    Running,
    Done,
    Error,
    Disabled,
    Unknown,
}

/// One `cloud-init status` call as tools saw it.
#[derive(Debug, Clone)]
pub struct Poll {
    /// tools' elapsed seconds when it asked.
    pub second: u32,
    /// The exit code.
    pub code: Option<i32>,
    /// What tools made of the answer.
    pub status: CiStatus,
}

/// open-vm-tools' side of one VM.
pub struct Tools {
    /// Which reading of exit codes.
    pub release: Release,
    /// The VM's root (what `VMCUST_ROOT` names for the stand-in).
    pub root: PathBuf,
    /// `/usr/bin/cloud-init`: a link named `cloud-init` to the vmcust binary.
    pub cloud_init: PathBuf,
    /// One tools second.
    pub tick: Duration,
    /// `[deployPkg] wait-cloudinit-timeout`, in seconds (tools' default 30).
    pub wait_timeout: u32,
    /// What tools itself sent to the host (`deployPkg.update.state …`).
    pub sent: Vec<String>,
    /// Whether tools rebooted the VM.
    pub rebooted: bool,
}

/// tools' log path in its state messages.
pub const TOOLS_LOG: &str = "/var/log/vmware-imc/toolsDeployPkg.log";

impl Tools {
    /// tools on the VM at `root`, with the stand-in linked in `bin`.
    pub fn new(release: Release, root: &Path, bin: &Path) -> Tools {
        fs::create_dir_all(bin).unwrap();
        let cloud_init = bin.join("cloud-init");
        if !cloud_init.exists() {
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), &cloud_init).unwrap();
        }
        Tools {
            release,
            root: root.to_path_buf(),
            cloud_init,
            tick: Duration::from_millis(20),
            wait_timeout: 30,
            sent: Vec::new(),
            rebooted: false,
        }
    }

    fn cloud_init(&self, args: &[&str]) -> Output {
        Command::new(&self.cloud_init)
            .args(args)
            .env("VMCUST_ROOT", &self.root)
            .output()
            .unwrap()
    }

    /// `cloud-init -v`: `None` when it fails (NOT_INSTALLED), else the version tools
    /// reads: from the first digit, `<major>[-.]<minor>`.
    pub fn version(&self) -> Option<(u32, u32)> {
        let out = self.cloud_init(&["-v"]);
        if out.status.code() != Some(0) {
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let rest = &text[text.find(|c: char| c.is_ascii_digit())?..];
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major = rest[..end].parse().ok()?;
        let rest = rest[end..].strip_prefix(['-', '.'])?;
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        Some((major, rest[..end].parse().ok()?))
    }

    /// A raw cloud-init data spec: `UseCloudInitWorkflow` says OK when `-v` succeeds with
    /// 21.1 or later; tools then sends `4 0`, copies the files into
    /// `/var/run/vmware-imc` (`.tmp`, renamed, `cust.cfg` last) and stops: no final
    /// state, no reboot. Returns false (and sends the failure) when it would not hand over.
    pub fn deploy_raw_data(&mut self, cust_cfg: &str, files: &[(&str, &str)]) -> bool {
        self.sent
            .push(format!("deployPkg.update.state 4 0 {TOOLS_LOG}"));
        match self.version() {
            Some(v) if v >= (21, 1) => {}
            Some(_) => {
                self.sent.push(format!(
                    "deployPkg.update.state 4 8 {TOOLS_LOG}@Deployment failed"
                ));
                return false;
            }
            // NOT_INSTALLED: the traditional workflow, not modelled here.
            None => return false,
        }
        let dir = self.root.join("var/run/vmware-imc");
        fs::create_dir_all(&dir).unwrap();
        let all = files
            .iter()
            .copied()
            .chain(std::iter::once(("cust.cfg", cust_cfg)));
        for (name, content) in all {
            let tmp = dir.join(format!("{name}.tmp"));
            fs::write(&tmp, content).unwrap();
            fs::rename(&tmp, dir.join(name)).unwrap();
        }
        true
    }

    /// How this release reads one `cloud-init status` answer.
    pub fn read(&self, out: &Output) -> CiStatus {
        match (out.status.code(), self.release) {
            (Some(1), _) => return CiStatus::Error,
            (Some(0), _) | (Some(_), Release::From13010) => {}
            _ => return CiStatus::Unknown,
        }
        let text = String::from_utf8_lossy(&out.stdout);
        for (needle, status) in [
            ("not run", CiStatus::NotRun),
            ("not started", CiStatus::NotRun),
            ("running", CiStatus::Running),
            ("done", CiStatus::Done),
            ("error", CiStatus::Error),
            ("disabled", CiStatus::Disabled),
        ] {
            if text.contains(needle) {
                return status;
            }
        }
        CiStatus::Unknown
    }

    /// `WaitForCloudinitDone` after a successful traditional customization, then the
    /// reboot. Returns every poll, and whether the wait timed out. `before_each` runs
    /// before each poll (the tests check the VM there).
    pub fn wait_then_reboot(&mut self, mut before_each: impl FnMut(u32)) -> (Vec<Poll>, bool) {
        let mut polls = Vec::new();
        let mut elapsed = 0;
        let timed_out = loop {
            if elapsed % 5 == 0 {
                before_each(elapsed);
                let out = self.cloud_init(&["status"]);
                let status = self.read(&out);
                polls.push(Poll {
                    second: elapsed,
                    code: out.status.code(),
                    status,
                });
                if !matches!(status, CiStatus::NotRun | CiStatus::Running) {
                    break false;
                }
            }
            if elapsed >= self.wait_timeout {
                break true;
            }
            std::thread::sleep(self.tick);
            elapsed += 1;
        };
        self.rebooted = true;
        (polls, timed_out)
    }
}
