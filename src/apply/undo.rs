//! Undo records: what a path held before an action changed it, so that a failure later in
//! the plan can put every file back exactly (contents, mode, owner, symlink target,
//! SELinux label) and remove every file and directory the plan created.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write as _};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

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
pub struct Saved {
    real: PathBuf,
    before: Before,
    missing_dirs: Vec<PathBuf>,
}

impl Saved {
    /// Records what is at `real` (not following a final symlink) and which of its
    /// ancestors up to `top` do not exist yet.
    pub fn take(real: &Path, top: &Path) -> io::Result<Saved> {
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
            before,
            missing_dirs,
        })
    }

    /// Whether something other than a file, a link or a directory was there.
    pub fn was_other(&self) -> bool {
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

    /// Puts the path back as it was and removes the directories created above it.
    pub fn restore(&self) -> io::Result<()> {
        if self.unchanged() {
            return self.remove_created_dirs();
        }
        match &self.before {
            Before::Missing => match fs::symlink_metadata(&self.real) {
                Ok(m) if m.is_dir() => remove_dir_if_empty(&self.real)?,
                Ok(_) => fs::remove_file(&self.real)?,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            },
            Before::File {
                contents,
                mode,
                owner,
                label,
            } => replace_with_file(&self.real, contents, *mode, *owner, label.as_deref())?,
            Before::Symlink {
                target,
                owner,
                label,
            } => {
                let tmp = temp_name(&self.real);
                let _ = fs::remove_file(&tmp);
                std::os::unix::fs::symlink(target, &tmp)?;
                std::os::unix::fs::lchown(&tmp, Some(owner.0), Some(owner.1))?;
                put_label(&tmp, label.as_deref())?;
                fs::rename(&tmp, &self.real)?;
            }
            Before::Dir { mode, owner, label } => {
                std::os::unix::fs::lchown(&self.real, Some(owner.0), Some(owner.1))?;
                fs::set_permissions(&self.real, Permissions::from_mode(*mode))?;
                put_label(&self.real, label.as_deref())?;
            }
            Before::Other => {}
        }
        if let Some(parent) = self.real.parent() {
            sync_dir(parent);
        }
        self.remove_created_dirs()
    }

    fn remove_created_dirs(&self) -> io::Result<()> {
        let _ = fs::remove_file(temp_name(&self.real));
        for dir in &self.missing_dirs {
            remove_dir_if_empty(dir)?;
        }
        Ok(())
    }
}

fn remove_dir_if_empty(dir: &Path) -> io::Result<()> {
    match fs::remove_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
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

fn replace_with_file(
    real: &Path,
    contents: &[u8],
    mode: u32,
    owner: (u32, u32),
    label: Option<&[u8]>,
) -> io::Result<()> {
    if fs::symlink_metadata(real).is_ok_and(|m| m.is_dir()) {
        remove_dir_if_empty(real)?;
    }
    let tmp = temp_name(real);
    let _ = fs::remove_file(&tmp);
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        f.set_permissions(Permissions::from_mode(mode))?;
        std::os::unix::fs::fchown(&f, Some(owner.0), Some(owner.1))?;
        // chown may clear set-id bits: the mode is set once more.
        f.set_permissions(Permissions::from_mode(mode))?;
        match label {
            Some(label) => xattr::set_fd(&f, label)?,
            // A file that had no label gets none (a new file may have inherited one).
            None => xattr::remove_path(&tmp)?,
        }
        f.write_all(contents)?;
        f.sync_all()?;
        fs::rename(&tmp, real)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

fn temp_name(real: &Path) -> PathBuf {
    let name = real.file_name().unwrap_or_default().to_string_lossy();
    real.with_file_name(format!(".{name}.vmcust-undo"))
}
