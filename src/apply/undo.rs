//! Undo records: what a path held before an action changed it, so that a failure later in
//! the plan can put every file back exactly (contents, mode, owner, symlink target,
//! SELinux label) and remove every file and directory the plan created.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Permissions};
use std::io::{self, Write as _};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

use crate::selinux::xattr::{self, Label};

/// What was at a path before. `label` is its `security.selinux` attribute, if any.
#[derive(Debug)]
enum Before {
    Missing,
    File {
        contents: Vec<u8>,
        mode: u32,
        owner: (u32, u32),
        label: Option<Label>,
    },
    Symlink {
        target: PathBuf,
        owner: (u32, u32),
        label: Option<Label>,
    },
    Dir {
        mode: u32,
        owner: (u32, u32),
        label: Option<Label>,
    },
    /// A device, socket or the like: never written by a plan, left alone.
    Other,
}

/// The state of one real path (on the host) before an action, and the directories the
/// action may create above it.
#[derive(Debug)]
pub(super) struct Saved {
    real: PathBuf,
    /// The root directory on the host, where [`open_dir`] starts.
    top: PathBuf,
    before: Before,
    missing_dirs: Vec<PathBuf>,
}

/// How directories are opened to put things back: never through a link.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Opens `dir` (a host path at or below `top`) one component at a time from `top` with
/// `O_NOFOLLOW`, so that what is put back lands in the directory that was saved, not
/// wherever a link swapped in since points (docs/security.md, "Links").
fn open_dir(top: &Path, dir: &Path) -> io::Result<File> {
    let below = dir
        .strip_prefix(top)
        .map_err(|_| io::Error::other(format!("{} is outside the root", dir.display())))?;
    let mut fd = File::from(rustix::fs::open(top, DIR_FLAGS, Mode::empty())?);
    for c in below.components() {
        let Component::Normal(name) = c else {
            return Err(io::Error::other(format!(
                "{} is not a plain path",
                dir.display()
            )));
        };
        let next = rustix::fs::openat(&fd, name, DIR_FLAGS, Mode::empty()).map_err(|e| {
            // O_DIRECTORY | O_NOFOLLOW on a link fails with ENOTDIR or ELOOP.
            let link = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|s| {
                rustix::fs::FileType::from_raw_mode(s.st_mode) == rustix::fs::FileType::Symlink
            });
            if link {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{} is a symbolic link now; nothing is put back through it",
                        dir.display()
                    ),
                )
            } else {
                e.into()
            }
        })?;
        fd = File::from(next);
    }
    Ok(fd)
}

/// The directory holding `real`, open ([`open_dir`]), and `real`'s name in it.
fn open_parent<'p>(top: &Path, real: &'p Path) -> io::Result<(File, &'p OsStr)> {
    match (real.parent(), real.file_name()) {
        (Some(dir), Some(name)) => Ok((open_dir(top, dir)?, name)),
        _ => Err(io::Error::other(format!(
            "cannot put back {}",
            real.display()
        ))),
    }
}

impl Saved {
    /// Records what is at `real` (not following a final symlink) and which of its
    /// ancestors up to `top` do not exist yet.
    pub(super) fn take(real: &Path, top: &Path) -> io::Result<Saved> {
        let before = match fs::symlink_metadata(real) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Before::Missing,
            Err(e) => return Err(e),
            Ok(m) => {
                let owner = (m.uid(), m.gid());
                let mode = m.mode() & 0o7777;
                if m.file_type().is_symlink() {
                    Before::Symlink {
                        target: fs::read_link(real)?,
                        owner,
                        label: xattr::get_path(real)?,
                    }
                } else if m.is_file() {
                    Before::File {
                        contents: fs::read(real)?,
                        mode,
                        owner,
                        label: xattr::get_path(real)?,
                    }
                } else if m.is_dir() {
                    Before::Dir {
                        mode,
                        owner,
                        label: xattr::get_path(real)?,
                    }
                } else {
                    Before::Other
                }
            }
        };
        let mut missing_dirs = Vec::new();
        let mut dir = real.parent();
        while let Some(d) = dir {
            if !d.starts_with(top) || d == top || fs::symlink_metadata(d).is_ok() {
                break;
            }
            missing_dirs.push(d.to_path_buf());
            dir = d.parent();
        }
        Ok(Saved {
            real: real.to_path_buf(),
            top: top.to_path_buf(),
            before,
            missing_dirs,
        })
    }

    /// Whether something other than a file, a link or a directory was there.
    pub(super) fn was_other(&self) -> bool {
        matches!(self.before, Before::Other)
    }

    /// Whether the path is (still) as it was, so that nothing needs writing.
    fn unchanged(&self) -> bool {
        let Ok(m) = fs::symlink_metadata(&self.real) else {
            return matches!(self.before, Before::Missing);
        };
        let owner = (m.uid(), m.gid());
        let mode = m.mode() & 0o7777;
        let same_label = |was: &Option<Label>| xattr::get_path(&self.real).is_ok_and(|l| l == *was);
        match &self.before {
            Before::File {
                contents,
                mode: was_mode,
                owner: was_owner,
                label,
            } => {
                m.is_file()
                    && mode == *was_mode
                    && owner == *was_owner
                    && same_label(label)
                    && fs::read(&self.real).is_ok_and(|c| c == *contents)
            }
            Before::Symlink {
                target,
                owner: was_owner,
                label,
            } => {
                m.file_type().is_symlink()
                    && owner == *was_owner
                    && same_label(label)
                    && fs::read_link(&self.real).is_ok_and(|t| t == *target)
            }
            Before::Dir {
                mode: was_mode,
                owner: was_owner,
                label,
            } => m.is_dir() && mode == *was_mode && owner == *was_owner && same_label(label),
            Before::Missing | Before::Other => false,
        }
    }

    /// Puts the path back as it was and removes the directories created above it, each
    /// change made relative to its directory opened without following a link.
    pub(super) fn restore(&self) -> io::Result<()> {
        if self.unchanged() {
            return self.remove_created_dirs();
        }
        let (dir, name) = match open_parent(&self.top, &self.real) {
            // The directory itself is gone: what was missing still is.
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    && matches!(self.before, Before::Missing) =>
            {
                return self.remove_created_dirs()
            }
            other => other?,
        };
        let now = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) => Some(rustix::fs::FileType::from_raw_mode(s.st_mode)),
            Err(rustix::io::Errno::NOENT) => None,
            Err(e) => return Err(e.into()),
        };
        let is_dir = now == Some(rustix::fs::FileType::Directory);
        match &self.before {
            Before::Missing => match now {
                Some(_) if is_dir => remove_dir_if_empty(&dir, name)?,
                Some(_) => rustix::fs::unlinkat(&dir, name, AtFlags::empty())?,
                None => {}
            },
            Before::File {
                contents,
                mode,
                owner,
                label,
            } => {
                if is_dir {
                    remove_dir_if_empty(&dir, name)?;
                }
                replace_with_file(&dir, &self.real, contents, *mode, *owner, label.as_deref())?
            }
            Before::Symlink {
                target,
                owner,
                label,
            } => {
                let tmp = temp_name(name);
                let _ = rustix::fs::unlinkat(&dir, &tmp, AtFlags::empty());
                rustix::fs::symlinkat(target, &dir, &tmp)?;
                rustix::fs::chownat(
                    &dir,
                    &tmp,
                    Some(rustix::fs::Uid::from_raw(owner.0)),
                    Some(rustix::fs::Gid::from_raw(owner.1)),
                    AtFlags::SYMLINK_NOFOLLOW,
                )?;
                put_label(&self.real.with_file_name(&tmp), label.as_deref())?;
                rustix::fs::renameat(&dir, &tmp, &dir, name)?;
            }
            Before::Dir { mode, owner, label } => {
                let d = File::from(rustix::fs::openat(&dir, name, DIR_FLAGS, Mode::empty())?);
                std::os::unix::fs::fchown(&d, Some(owner.0), Some(owner.1))?;
                d.set_permissions(Permissions::from_mode(*mode))?;
                put_label(&self.real, label.as_deref())?;
            }
            Before::Other => {}
        }
        let _ = dir.sync_all();
        self.remove_created_dirs()
    }

    fn remove_created_dirs(&self) -> io::Result<()> {
        if let Ok((dir, name)) = open_parent(&self.top, &self.real) {
            let _ = rustix::fs::unlinkat(&dir, temp_name(name), AtFlags::empty());
        }
        for created in &self.missing_dirs {
            match open_parent(&self.top, created) {
                Ok((dir, name)) => remove_dir_if_empty(&dir, name)?,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

fn remove_dir_if_empty(dir: &File, name: &OsStr) -> io::Result<()> {
    match rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR) {
        Err(rustix::io::Errno::NOENT) => Ok(()),
        other => Ok(other?),
    }
}

/// Gives `path` (not following a final symlink) the label it had, or none if it had none.
fn put_label(path: &Path, label: Option<&[u8]>) -> io::Result<()> {
    let now = xattr::get_path(path)?;
    match label {
        _ if now.as_deref() == label => Ok(()),
        Some(label) => xattr::set_path(path, label),
        None => xattr::remove_path(path),
    }
}

/// Puts a regular file back at `real` (in `dir`, open) with its contents, mode, owner and
/// label: a temp file made and renamed relative to `dir`.
fn replace_with_file(
    dir: &File,
    real: &Path,
    contents: &[u8],
    mode: u32,
    owner: (u32, u32),
    label: Option<&[u8]>,
) -> io::Result<()> {
    let name = real.file_name().unwrap_or_default();
    let tmp = temp_name(name);
    let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
    let result = (|| {
        let mut f = File::from(rustix::fs::openat(
            dir,
            &tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )?);
        f.set_permissions(Permissions::from_mode(mode))?;
        std::os::unix::fs::fchown(&f, Some(owner.0), Some(owner.1))?;
        // chown may clear set-id bits: the mode is set once more.
        f.set_permissions(Permissions::from_mode(mode))?;
        match label {
            Some(label) => xattr::set_fd(&f, label)?,
            // A file that had no label gets none (a new file may have inherited one).
            None => xattr::remove_path(&real.with_file_name(&tmp))?,
        }
        f.write_all(contents)?;
        f.sync_all()?;
        Ok(rustix::fs::renameat(dir, &tmp, dir, name)?)
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
    }
    result
}

fn temp_name(name: &OsStr) -> OsString {
    let mut t = OsString::from(".");
    t.push(name);
    t.push(".vmcust-undo");
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory swapped for a link between the save and the undo (a user who owns the
    /// directory above could do it) is not written through: the undo fails, saying so,
    /// and the link's target is untouched.
    #[test]
    fn an_undo_puts_nothing_back_through_a_link_swapped_in() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().canonicalize().unwrap();
        fs::create_dir_all(top.join("home/alice/d")).unwrap();
        fs::create_dir_all(top.join("etc")).unwrap();
        fs::write(top.join("home/alice/d/f"), "old").unwrap();
        fs::write(top.join("etc/f"), "victim").unwrap();
        for real in ["home/alice/d/f", "home/alice/d/new"] {
            let saved = Saved::take(&top.join(real), &top).unwrap();
            fs::write(top.join(real), "changed").unwrap();
            fs::rename(top.join("home/alice/d"), top.join("home/alice/moved")).unwrap();
            std::os::unix::fs::symlink("../../etc", top.join("home/alice/d")).unwrap();
            fs::write(top.join("etc/new"), "victim").unwrap();
            let e = saved.restore().unwrap_err();
            assert!(e.to_string().contains("symbolic link"), "{e}");
            assert_eq!(fs::read_to_string(top.join("etc/f")).unwrap(), "victim");
            assert_eq!(fs::read_to_string(top.join("etc/new")).unwrap(), "victim");
            fs::remove_file(top.join("home/alice/d")).unwrap();
            fs::rename(top.join("home/alice/moved"), top.join("home/alice/d")).unwrap();
            // Without the swap, the same record puts the file back.
            saved.restore().unwrap();
        }
        assert_eq!(
            fs::read_to_string(top.join("home/alice/d/f")).unwrap(),
            "old"
        );
        assert!(!top.join("home/alice/d/new").exists());
    }
}
