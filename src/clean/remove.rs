//! Removing what `clean` means to remove without ever following a symbolic link out of it.
//!
//! The parents of a path are resolved inside the root ([`Root::resolve`]: a link there
//! stays within the root, as it would at boot); the path itself is looked at with
//! `lstat`. A symlink is removed as a link. A directory tree is removed by
//! [`std::fs::remove_dir_all`], which walks it with `openat`/`unlinkat` and
//! `O_NOFOLLOW`, so a link inside the tree is unlinked and never traversed.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::root::Root;

/// What is at a path, without following a link in its last component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Nothing.
    Missing,
    /// A symbolic link (whatever it points at).
    Symlink,
    /// A real directory.
    Dir,
    /// A regular file, device, socket or FIFO.
    Other,
}

/// The host path of `path` (its last component not followed) and what is there.
pub(super) fn look(root: &Root, path: &Path) -> Result<(PathBuf, Kind)> {
    let host = root
        .resolve(path, false)
        .with_context(|| format!("resolving {}", path.display()))?;
    let kind = match fs::symlink_metadata(&host) {
        Ok(m) if m.file_type().is_symlink() => Kind::Symlink,
        Ok(m) if m.is_dir() => Kind::Dir,
        Ok(_) => Kind::Other,
        // A parent that is a file (RHEL's /etc/sysconfig/network) holds nothing.
        Err(e)
            if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            Kind::Missing
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    Ok((host, kind))
}

/// The names in the real directory at `path`; empty when it is missing, a symlink (never
/// listed through) or not a directory.
pub(super) fn names_in(root: &Root, path: &Path) -> Result<Vec<String>> {
    let (host, kind) = look(root, path)?;
    if kind != Kind::Dir {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    for entry in fs::read_dir(&host).with_context(|| format!("listing {}", path.display()))? {
        let entry = entry.with_context(|| format!("listing {}", path.display()))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// Removes the file, symlink (as a link) or directory tree at `path` inside the root;
/// `false` if nothing was there. In a dry run only says whether something is there.
pub(super) fn remove(root: &Root, path: &Path, dry_run: bool) -> Result<bool> {
    let (host, kind) = look(root, path)?;
    if kind == Kind::Missing {
        return Ok(false);
    }
    if dry_run {
        return Ok(true);
    }
    match kind {
        // Checked again by remove_dir_all itself, which refuses to start at a link.
        Kind::Dir => fs::remove_dir_all(&host),
        _ => fs::remove_file(&host),
    }
    .with_context(|| format!("removing {}", path.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_removed_as_a_link_and_a_tree_without_following_links_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        root.write_file(Path::new("/keep/file"), b"mine", 0o644)
            .unwrap();
        root.symlink(Path::new("/state"), Path::new("/keep"))
            .unwrap();
        root.symlink(Path::new("/tree/sub/link"), Path::new("/keep"))
            .unwrap();
        assert_eq!(look(&root, Path::new("/state")).unwrap().1, Kind::Symlink);
        assert!(names_in(&root, Path::new("/state")).unwrap().is_empty());
        assert!(remove(&root, Path::new("/state"), false).unwrap());
        assert!(remove(&root, Path::new("/tree"), false).unwrap());
        assert!(!remove(&root, Path::new("/tree"), false).unwrap());
        assert_eq!(
            fs::read(dir.path().join("keep/file")).unwrap(),
            b"mine".to_vec()
        );
    }
}
