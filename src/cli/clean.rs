//! `vmcust clean`: seal a template so each clone is customized as a new instance.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args;

use crate::clean::{clean, CleanOptions, Cleaned};
use crate::root::Root;

/// Seal a template: remove state, logs, machine-id and SSH host keys so clones start fresh.
///
/// With no part named, the state is cleaned (as `cloud-init clean` does).
#[derive(Debug, Args)]
pub(crate) struct CleanArgs {
    /// Root directory of the template.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Remove vmcust's state: instance records, markers, a pending customization.
    #[arg(long)]
    pub state: bool,
    /// Remove vmcust's log, /var/log/vmcust.log.
    #[arg(long)]
    pub logs: bool,
    /// Empty /etc/machine-id so systemd makes a new one at the next boot.
    #[arg(long)]
    pub machine_id: bool,
    /// Remove the SSH host keys (clones get fresh ones of the same types).
    #[arg(long)]
    pub ssh_host_keys: bool,
    /// Remove the network configuration files vmcust wrote and put back the template's own
    /// that a customization moved aside or rewrote (byte for byte, mode and owner).
    #[arg(long)]
    pub network_configs: bool,
    /// Print what would be removed and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Only record the template's machine-id and SSH host key types, so clones are
    /// recognised; remove nothing (the packages run this on install).
    #[arg(long, conflicts_with_all = ["state", "logs", "machine_id", "ssh_host_keys", "network_configs", "dry_run"])]
    pub record_only: bool,
}

impl CleanArgs {
    /// The options these arguments ask for.
    pub(crate) fn options(&self) -> CleanOptions {
        let any = self.state || self.logs || self.machine_id || self.ssh_host_keys;
        CleanOptions {
            state: self.state || !(any || self.network_configs),
            logs: self.logs,
            machine_id: self.machine_id,
            ssh_host_keys: self.ssh_host_keys,
            network_configs: self.network_configs,
            dry_run: self.dry_run,
        }
    }
}

/// Runs `vmcust clean`.
pub(super) fn run(args: CleanArgs) -> Result<()> {
    let root =
        Root::new(&args.root).with_context(|| format!("opening root {}", args.root.display()))?;
    let done = if args.record_only {
        Cleaned {
            removed: Vec::new(),
            written: crate::hygiene::record_template(&root, &[])?,
            restored: Vec::new(),
        }
    } else {
        clean(&root, &args.options())?
    };
    print!("{}", report(&done, args.dry_run));
    Ok(())
}

/// The lines `clean` prints: one per path.
pub(crate) fn report(done: &Cleaned, dry_run: bool) -> String {
    let mut s = String::new();
    let (removed, written, restored) = if dry_run {
        ("would remove", "would write", "would put back")
    } else {
        ("removed", "wrote", "put back")
    };
    for p in &done.removed {
        s.push_str(&format!("{removed} {}\n", p.display()));
    }
    for (from, to) in &done.restored {
        s.push_str(&format!(
            "{restored} {} (the template's, from {})\n",
            to.display(),
            from.display()
        ));
    }
    for p in &done.written {
        s.push_str(&format!("{written} {}\n", p.display()));
    }
    if done.removed.is_empty() && done.written.is_empty() && done.restored.is_empty() {
        s.push_str("nothing to clean\n");
    }
    s
}
