//! Helpers shared by the integration tests: scratch roots and directory snapshots.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The repository's top directory.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A bundled example spec.
pub fn example(name: &str) -> PathBuf {
    repo().join("examples/specs").join(name)
}

/// A cloud-init test input from the shared test data.
pub fn cloud_init_imc(name: &str) -> PathBuf {
    repo().join("../shared/testdata/cloud-init/imc").join(name)
}

/// A scratch copy of the bundled template root.
pub fn scratch_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/root"), dir.path());
    // As on a real system (Debian's 0640 root:shadow); git keeps no modes but the
    // executable bit, so the copy sets it.
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(
        dir.path().join("etc/shadow"),
        fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    dir
}

/// Copies a directory tree, symlinks as symlinks.
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let ty = entry.file_type().unwrap();
        if ty.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if ty.is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Every path under `dir` with what it is: file contents and mode, or link target.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn walk(top: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let rel = path.strip_prefix(top).unwrap().to_path_buf();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            out.insert(
                rel,
                format!("-> {}", fs::read_link(&path).unwrap().display()),
            );
        } else if meta.is_dir() {
            walk(top, &path, out);
        } else {
            let bytes = fs::read(&path).unwrap();
            out.insert(
                rel,
                format!(
                    "{:o} {}",
                    meta.mode() & 0o7777,
                    String::from_utf8_lossy(&bytes)
                ),
            );
        }
    }
}
