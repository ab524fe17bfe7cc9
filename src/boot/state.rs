//! Where the boot engine keeps its state under the root, and the small records in it.
//!
//! ```text
//! /var/run/vmware-imc/           what open-vm-tools hands over (removed once ingested)
//! /var/lib/vmcust/pending/       the ingested copy (0700, files 0600) + journal, until done
//! /var/lib/vmcust/instances/ID/  result.json, post-script and user-data flags per instance
//! /var/lib/vmcust/.markerfile-M.txt  the MARKER-ID marker (password and scripts once)
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::model::InstanceId;
use crate::root::Root;

/// Directory open-vm-tools copies the customization into.
pub const IMC_DIR: &str = "/var/run/vmware-imc";
/// The spec file whose appearance means the hand-over is complete.
pub const CUST_CFG: &str = "cust.cfg";
/// NIC ordinals to reconnect, next to `cust.cfg`.
pub const NICS_TXT: &str = "nics.txt";
/// vmcust's state directory.
pub const STATE_DIR: &str = "/var/lib/vmcust";
/// The ingested customization in progress.
pub const PENDING_DIR: &str = "/var/lib/vmcust/pending";
/// Per-instance records.
pub const INSTANCES_DIR: &str = "/var/lib/vmcust/instances";
/// Largest file accepted from the hand-over directory (cust.cfg, scripts, user-data).
pub const MAX_HANDOVER_FILE: u64 = 16 * 1024 * 1024;

/// How a customization ended, as recorded for `vmcust status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceResult {
    /// The instance id.
    pub instance_id: InstanceId,
    /// `done` or `failed`.
    pub outcome: String,
    /// The code sent to the host (0 on success).
    pub code: u16,
    /// The reason of a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Seconds since the epoch when it ended.
    pub finished: u64,
    /// Steps completed, in order.
    pub steps: Vec<String>,
    /// Which source each field came from, when several sources were merged (the
    /// user-data's source under `user-data`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub origins: std::collections::BTreeMap<String, String>,
}

/// The instance's record directory; different ids never share one
/// ([`InstanceId::file_name`]).
pub fn instance_dir(id: &InstanceId) -> PathBuf {
    Path::new(INSTANCES_DIR).join(id.file_name())
}

/// Copies every regular file of the hand-over directory into a fresh pending directory
/// (0700, files 0600: the spec may hold a password), then removes the hand-over
/// directory. Symlinks and oversized files in the hand-over directory are skipped.
pub fn ingest(root: &Root) -> Result<()> {
    let from = root.resolve(Path::new(IMC_DIR), true)?;
    let pending = root.resolve(Path::new(PENDING_DIR), false)?;
    if pending.exists() {
        tracing::warn!("a new customization replaces the unfinished one in {PENDING_DIR}");
        fs::remove_dir_all(&pending).with_context(|| format!("removing {PENDING_DIR}"))?;
    }
    for name in root.list_dir(Path::new(IMC_DIR))? {
        let src = from.join(&name);
        let meta = fs::symlink_metadata(&src)?;
        if !meta.is_file() || name.ends_with(".tmp") {
            continue;
        }
        if meta.len() > MAX_HANDOVER_FILE {
            tracing::warn!(
                "skipping {IMC_DIR}/{name}: {} bytes is too large",
                meta.len()
            );
            continue;
        }
        let bytes = fs::read(&src).with_context(|| format!("reading {IMC_DIR}/{name}"))?;
        root.write_file(&Path::new(PENDING_DIR).join(&name), &bytes, 0o600)
            .with_context(|| format!("copying {name} into {PENDING_DIR}"))?;
    }
    fs::set_permissions(
        &pending,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )?;
    remove_handover(root)
}

/// Removes `/var/run/vmware-imc` (whatever the outcome, the hand-over is consumed).
pub fn remove_handover(root: &Root) -> Result<()> {
    remove_tree(root, IMC_DIR)
}

/// Removes the pending directory: the copies of the spec (and any password) go with it.
pub fn remove_pending(root: &Root) -> Result<()> {
    remove_tree(root, PENDING_DIR)
}

/// Removes a directory tree inside the root; already gone is fine.
fn remove_tree(root: &Root, path: &str) -> Result<()> {
    let dir = root.resolve(Path::new(path), false)?;
    match fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {path}"))
        }
        _ => Ok(()),
    }
}

/// Writes an instance's result record.
pub fn write_result(root: &Root, result: &InstanceResult) -> Result<()> {
    let path = instance_dir(&result.instance_id).join("result.json");
    let text = serde_json::to_string_pretty(result)? + "\n";
    root.write_file(&path, text.as_bytes(), 0o644)
        .with_context(|| format!("writing {}", path.display()))
}

/// Every recorded instance result, newest first.
pub fn read_results(root: &Root) -> Result<Vec<InstanceResult>> {
    let mut out = Vec::new();
    for id in root.list_dir(Path::new(INSTANCES_DIR))? {
        let path = Path::new(INSTANCES_DIR).join(&id).join("result.json");
        if let Some(text) = root.read_text(&path)? {
            match serde_json::from_str::<InstanceResult>(&text) {
                Ok(r) => out.push(r),
                Err(e) => tracing::warn!("ignoring {}: {e}", path.display()),
            }
        }
    }
    out.sort_by_key(|r| std::cmp::Reverse(r.finished));
    Ok(out)
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ingest_copies_private_and_removes_the_handover() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        let imc = d.path().join("var/run/vmware-imc");
        fs::create_dir_all(&imc).unwrap();
        fs::write(imc.join("cust.cfg"), "[MISC]\n").unwrap();
        fs::write(imc.join("nics.txt"), "0\n").unwrap();
        fs::write(imc.join("metadata.tmp"), "partial").unwrap();
        std::os::unix::fs::symlink("/etc/shadow", imc.join("evil")).unwrap();
        ingest(&root).unwrap();
        assert!(!imc.exists());
        let pending = d.path().join("var/lib/vmcust/pending");
        let mut names = root.list_dir(Path::new(PENDING_DIR)).unwrap();
        names.sort();
        assert_eq!(names, ["cust.cfg", "nics.txt"]);
        use std::os::unix::fs::MetadataExt;
        assert_eq!(fs::metadata(&pending).unwrap().mode() & 0o777, 0o700);
        assert_eq!(
            fs::metadata(pending.join("cust.cfg")).unwrap().mode() & 0o777,
            0o600
        );
    }
}
