//! `vmcust cloud-init-link` (hidden): keeps the `cloud-init` stand-in in step with the
//! system. Where no real cloud-init is installed, `/usr/bin/cloud-init -> vmcust` and the
//! cloud.cfg.d drop-in that makes open-vm-tools hand the customization over; where a real
//! one is, neither (the drop-in would switch on the real cloud-init's VMware customization
//! behind the administrator's back).
//!
//! The packages' install scripts run `sync` on install and upgrade, the deb again from
//! its trigger on /usr/bin/cloud-init (a cloud-init package installed or removed later),
//! and `remove` on removal; docs/packaging.md.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::{Args, ValueEnum};

use crate::cloud_init::coexist::{self, CLOUD_INIT_BIN};
use crate::root::{Existing, Root};

/// The drop-in that tells open-vm-tools to hand VMware customization to "cloud-init".
pub const DROP_IN: &str = "/etc/cloud/cloud.cfg.d/99-vmcust.cfg";
/// The drop-in's text; its first line carries the mark that makes it ours.
pub const DROP_IN_TEXT: &str = include_str!("../../systemd/99-vmcust.cfg");
/// What marks the drop-in as written by vmcust.
const OURS: &str = "Installed by vmcust";

/// Arguments of `vmcust cloud-init-link`.
#[derive(Debug, Args)]
pub struct LinkArgs {
    /// What to do.
    #[arg(value_enum)]
    pub action: Action,
    /// Root directory of the system.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
}

/// The two actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Action {
    /// Install the stand-in and drop-in when no real cloud-init is there, remove the
    /// drop-in when one is.
    Sync,
    /// Remove the stand-in and the drop-in (package removal).
    Remove,
}

/// Runs `vmcust cloud-init-link`.
pub fn run(args: LinkArgs) -> Result<()> {
    let root =
        Root::new(&args.root).with_context(|| format!("opening root {}", args.root.display()))?;
    for line in apply(&root, args.action)? {
        println!("{line}");
    }
    Ok(())
}

fn drop_in_is_ours(root: &Root) -> bool {
    root.read_text(Path::new(DROP_IN))
        .ok()
        .flatten()
        .is_some_and(|t| t.contains(OURS))
}

fn remove(root: &Root, path: &str) -> Result<()> {
    let host = root.resolve(Path::new(path), false)?;
    std::fs::remove_file(&host).with_context(|| format!("removing {path}"))
}

/// Carries out `action` in `root`; returns what was done, one line each.
pub fn apply(root: &Root, action: Action) -> Result<Vec<String>> {
    let mut did = Vec::new();
    let real = coexist::real_cloud_init(root).is_some();
    if action == Action::Remove || real {
        if action == Action::Remove && coexist::is_vmcust_persona(root) {
            remove(root, CLOUD_INIT_BIN)?;
            did.push(format!("removed {CLOUD_INIT_BIN} (vmcust's stand-in)"));
        }
        if drop_in_is_ours(root) {
            remove(root, DROP_IN)?;
            did.push(format!("removed {DROP_IN}"));
        }
        if real && action == Action::Sync {
            did.push(format!(
                "a real cloud-init is installed at {CLOUD_INIT_BIN}: vmcust does not stand in for it"
            ));
        }
        return Ok(did);
    }
    if root.existing(Path::new(CLOUD_INIT_BIN))? == Existing::Missing {
        std::fs::create_dir_all(root.resolve(Path::new("/usr/bin"), true)?)
            .context("creating /usr/bin")?;
        root.symlink(Path::new(CLOUD_INIT_BIN), Path::new("vmcust"))
            .with_context(|| format!("linking {CLOUD_INIT_BIN} to vmcust"))?;
        did.push(format!("linked {CLOUD_INIT_BIN} -> vmcust"));
    }
    if root.existing(Path::new(DROP_IN))? == Existing::Missing {
        root.write_file(Path::new(DROP_IN), DROP_IN_TEXT.as_bytes(), 0o644)
            .with_context(|| format!("writing {DROP_IN}"))?;
        did.push(format!("wrote {DROP_IN}"));
    }
    Ok(did)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stand_in_comes_and_goes_with_a_real_cloud_init() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        root.write_file(Path::new("/usr/bin/vmcust"), b"binary", 0o755)
            .unwrap();
        assert_eq!(apply(&root, Action::Sync).unwrap().len(), 2);
        assert!(coexist::is_vmcust_persona(&root));
        assert!(drop_in_is_ours(&root));
        // Idempotent.
        assert!(apply(&root, Action::Sync).unwrap().is_empty());
        // A cloud-init package replaces the link with its own program.
        root.write_file(Path::new(CLOUD_INIT_BIN), b"#!/usr/bin/python3\n", 0o755)
            .unwrap();
        apply(&root, Action::Sync).unwrap();
        assert!(!root.is_file(Path::new(DROP_IN)));
        // Package removal leaves the real cloud-init alone.
        apply(&root, Action::Remove).unwrap();
        assert!(root.is_file(Path::new(CLOUD_INIT_BIN)));
        // Without it again: the stand-in is back, and removal takes it away.
        remove(&root, CLOUD_INIT_BIN).unwrap();
        apply(&root, Action::Sync).unwrap();
        assert!(coexist::is_vmcust_persona(&root));
        apply(&root, Action::Remove).unwrap();
        assert_eq!(
            root.existing(Path::new(CLOUD_INIT_BIN)).unwrap(),
            Existing::Missing
        );
        assert_eq!(
            root.existing(Path::new(DROP_IN)).unwrap(),
            Existing::Missing
        );
    }
}
