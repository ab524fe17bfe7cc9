//! Keeping the `cloud-init` stand-in in step with the system. Where no real cloud-init is
//! installed: `/usr/bin/cloud-init -> vmcust` and the cloud.cfg.d drop-in that makes
//! open-vm-tools hand the customization over. Where a real one is: neither (the drop-in
//! would switch on the real cloud-init's VMware customization behind the administrator's
//! back).
//!
//! The packages' install scripts [`sync`] on install and upgrade, the deb again from its
//! trigger on /usr/bin/cloud-init, the early stage at every boot on VMware (an rpm has no
//! trigger for a cloud-init installed later), and [`remove`] runs on package removal;
//! docs/packaging.md.

use std::path::Path;

use anyhow::{Context as _, Result};

use super::coexist::{self, CLOUD_INIT_BIN};
use crate::root::{Existing, Root};

/// The drop-in that tells open-vm-tools to hand VMware customization to "cloud-init".
pub(crate) const DROP_IN: &str = "/etc/cloud/cloud.cfg.d/99-vmcust.cfg";
/// The drop-in's text; its first line carries the mark that makes it ours.
pub(crate) const DROP_IN_TEXT: &str = include_str!("../../systemd/99-vmcust.cfg");
/// Where the packages install vmcust; the stand-in links to it.
const VMCUST_BIN: &str = "/usr/bin/vmcust";
/// What marks the drop-in as written by vmcust.
const OURS: &str = "Installed by vmcust";

fn drop_in_is_ours(root: &Root) -> bool {
    root.read_text(Path::new(DROP_IN))
        .ok()
        .flatten()
        .is_some_and(|t| t.contains(OURS))
}

fn remove_file(root: &Root, path: &str) -> Result<()> {
    let host = root.resolve(Path::new(path), false)?;
    std::fs::remove_file(&host).with_context(|| format!("removing {path}"))
}

/// Removes our drop-in if it is there; returns what was done.
fn remove_drop_in(root: &Root, did: &mut Vec<String>) -> Result<()> {
    if drop_in_is_ours(root) {
        remove_file(root, DROP_IN)?;
        did.push(format!("removed {DROP_IN}"));
    }
    Ok(())
}

/// Installs the stand-in and drop-in when no real cloud-init is there, removes the
/// drop-in when one is. Returns what was done, one line each (nothing when all is in
/// step already).
pub(crate) fn sync(root: &Root) -> Result<Vec<String>> {
    let mut did = Vec::new();
    if coexist::real_cloud_init(root).is_some() {
        remove_drop_in(root, &mut did)?;
        if !did.is_empty() {
            did.push(format!(
                "a real cloud-init is installed at {CLOUD_INIT_BIN}: vmcust does not stand in for it"
            ));
        }
        return Ok(did);
    }
    if !root.is_file(Path::new(VMCUST_BIN)) {
        // Not installed in this root (a development build run on a scratch root): a link
        // would point at nothing.
        return Ok(did);
    }
    if root.existing(Path::new(CLOUD_INIT_BIN))? == Existing::Missing {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(crate::root::DIR_MODE)
            .create(root.resolve(Path::new("/usr/bin"), true)?)
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

/// Removes the stand-in and our drop-in (package removal); a real cloud-init is left
/// alone. Returns what was done, one line each.
pub(crate) fn remove(root: &Root) -> Result<Vec<String>> {
    let mut did = Vec::new();
    if coexist::is_vmcust_stand_in(root) {
        remove_file(root, CLOUD_INIT_BIN)?;
        did.push(format!("removed {CLOUD_INIT_BIN} (vmcust's stand-in)"));
    }
    remove_drop_in(root, &mut did)?;
    Ok(did)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stand_in_comes_and_goes_with_a_real_cloud_init() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        // Without vmcust installed in the root there is nothing to link to.
        assert!(sync(&root).unwrap().is_empty());
        root.write_file(Path::new("/usr/bin/vmcust"), b"binary", 0o755)
            .unwrap();
        assert_eq!(sync(&root).unwrap().len(), 2);
        assert!(coexist::is_vmcust_stand_in(&root));
        assert!(drop_in_is_ours(&root));
        // Idempotent: a boot with everything in step does nothing and says nothing.
        assert!(sync(&root).unwrap().is_empty());
        // A cloud-init package replaces the link with its own program.
        root.write_file(Path::new(CLOUD_INIT_BIN), b"#!/usr/bin/python3\n", 0o755)
            .unwrap();
        assert_eq!(sync(&root).unwrap().len(), 2);
        assert!(!root.is_file(Path::new(DROP_IN)));
        assert!(sync(&root).unwrap().is_empty());
        // Package removal leaves the real cloud-init alone.
        remove(&root).unwrap();
        assert!(root.is_file(Path::new(CLOUD_INIT_BIN)));
        // Without it again: the stand-in is back, and removal takes it away.
        remove_file(&root, CLOUD_INIT_BIN).unwrap();
        sync(&root).unwrap();
        assert!(coexist::is_vmcust_stand_in(&root));
        remove(&root).unwrap();
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
