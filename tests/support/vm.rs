//! A VM for the boot tests: a template root with VMware DMI, and a fake host directory
//! that answers like the VMX (`queryNicsSupported`, then `connected` after some polls)
//! and records every RPC; `hand_over` plays open-vm-tools' hand-over.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{scratch_root, snapshot};

/// The VMX's answers for a successful NIC handshake after two polls.
pub const NIC_REPLIES: &str = "deployPkg.update.state 4 103 => queryNicsSupported\n\
deployPkg.update.state 4 104 => disconnected | disconnected | connected\n";

/// A VM: a template root with VMware DMI, and a fake host directory.
pub struct Vm {
    /// The VM's root directory.
    pub root: tempfile::TempDir,
    /// The fake host directory.
    pub host: tempfile::TempDir,
}

/// Gives the root at `root` a VMware VM's DMI (vendor, product, a fixed UUID).
pub fn vmware_dmi(root: &Path) {
    let dmi = root.join("sys/class/dmi/id");
    fs::create_dir_all(&dmi).unwrap();
    fs::write(dmi.join("product_name"), "VMware7,1\n").unwrap();
    fs::write(dmi.join("sys_vendor"), "VMware, Inc.\n").unwrap();
    fs::write(
        dmi.join("product_uuid"),
        "4217E0A1-6C2B-9D7E-51A0-3B9F2C1D8E44\n",
    )
    .unwrap();
}

impl Vm {
    pub fn new() -> Vm {
        let root = scratch_root();
        vmware_dmi(root.path());
        // Scripts and user-data run inside the root: it needs a shell, as a real one has.
        super::install_shell(root.path());
        let host = tempfile::tempdir().unwrap();
        fs::write(host.path().join("replies"), NIC_REPLIES).unwrap();
        Vm { root, host }
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.root.path().join(p.trim_start_matches('/'))
    }

    /// What open-vm-tools does: each file copied as `<name>.tmp` then renamed, in tools'
    /// order, `cust.cfg` last.
    pub fn hand_over(&self, spec: &str, extra: &[(&str, &str)]) {
        let dir = self.path("/var/run/vmware-imc");
        fs::create_dir_all(&dir).unwrap();
        let mut files: Vec<(&str, String)> =
            extra.iter().map(|(n, c)| (*n, c.to_string())).collect();
        files.push(("cust.cfg", spec.to_string()));
        for (name, content) in files {
            let tmp = dir.join(format!("{name}.tmp"));
            fs::write(&tmp, content).unwrap();
            fs::rename(&tmp, dir.join(name)).unwrap();
        }
    }

    pub fn command(&self, stage: &str, max_wait: u64) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vmcust"));
        cmd.args(["run", "--stage", stage, "--root"])
            .arg(self.root.path())
            .arg("--guestinfo-dir")
            .arg(self.host.path())
            .args(["--max-wait", &max_wait.to_string(), "--nic-poll-ms", "10"])
            .env("VMCUST_LOG", "info")
            .env_remove(vmcust::test_api::boot::CRASH_AFTER_ENV);
        cmd
    }

    /// `vmcust ARGS --root <root> --guestinfo-dir <host>`: a command about this VM (plan,
    /// detect, …); fails the test unless it exits 0.
    pub fn vmcust(&self, args: &[&str]) -> Output {
        let out = Command::new(env!("CARGO_BIN_EXE_vmcust"))
            .args(args)
            .arg("--root")
            .arg(self.root.path())
            .arg("--guestinfo-dir")
            .arg(self.host.path())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "vmcust {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    pub fn run(&self, stage: &str) -> Output {
        self.command(stage, 0).output().unwrap()
    }

    /// One boot: the early stage, then the late one; fails the test unless both exit 0.
    pub fn boot(&self) -> (Output, Output) {
        let stage = |name| {
            let out = self.run(name);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            out
        };
        (stage("early"), stage("late"))
    }

    /// `vmcust status --root <root>`: its exit status and standard output.
    pub fn status(&self) -> (Option<i32>, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_vmcust"))
            .args(["status", "--root"])
            .arg(self.root.path())
            .output()
            .unwrap();
        (out.status.code(), super::text(&out.stdout))
    }

    pub fn rpcs(&self) -> Vec<String> {
        fs::read_to_string(self.host.path().join("rpc.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The `deployPkg.update.state` RPCs that are not part of the NIC handshake.
    pub fn final_states(&self) -> Vec<String> {
        self.rpcs()
            .into_iter()
            .filter(|r| r.starts_with("deployPkg.update.state"))
            .filter(|r| !r.contains(" 103 ") && !r.contains(" 104 "))
            .collect()
    }

    /// The last of [`Vm::final_states`].
    pub fn final_state(&self) -> Option<String> {
        self.final_states().pop()
    }

    pub fn enable_scripts(&self) {
        let dir = self.path("/etc/vmware-tools");
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("tools.conf"),
            "[deployPkg]\nenable-custom-scripts = true\n",
        )
        .unwrap();
    }

    pub fn settings(&self, text: &str) {
        let dir = self.path("/etc/vmcust");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("vmcust.conf"), text).unwrap();
    }

    /// The customized part of the root, without the records and the log that carry times
    /// (cloud-init's status files among them). (The directories that hold vmcust's
    /// records and the hand-over are left out too.)
    pub fn state(&self) -> std::collections::BTreeMap<PathBuf, String> {
        // `/root` is where custom scripts are staged; every real system has it.
        const RECORD_DIRS: [&str; 6] = ["var", "var/lib", "var/log", "var/run", "run", "root"];
        let mut s = snapshot(self.root.path());
        s.retain(|p, _| {
            let p = p.to_string_lossy();
            let record = p.ends_with("result.json")
                || p.starts_with("run/vmcust")
                || p.starts_with("run/cloud-init")
                || p == "var/lib/cloud"
                || p.starts_with("var/lib/cloud/data")
                || p.starts_with("var/lib/cloud/instance")
                || p == "var/log/vmcust.log"
                || RECORD_DIRS.contains(&p.as_ref())
                || (p.starts_with("var/lib/vmcust") && !p.contains(".markerfile"));
            !record
        });
        s
    }
}
