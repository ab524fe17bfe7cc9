//! Staging the custom script: `<package>/<SCRIPT-NAME>` is copied to
//! `/root/.customization/customize.sh` in the root with every carriage return removed.
//!
//! Copied rather than run in place because `/var/run` may be mounted `noexec` (open-vm-tools
//! issue #381). Directory and script are 0700: only root may read a script that often holds
//! credentials (cloud-init's 0544 lets every local user read it); the owner needs `x` to run it.

use std::fs::{self, DirBuilder, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::root::Root;

/// The staging directory inside the root.
pub(crate) const STAGING_DIR: &str = "/root/.customization";
/// The staged script's file name.
pub(crate) const STAGED_NAME: &str = "customize.sh";
/// Mode of the staging directory.
pub(crate) const STAGING_DIR_MODE: u32 = 0o700;
/// Largest custom script staged: 4 MiB (vCenter's own script field holds a few kilobytes).
pub const MAX_SCRIPT_BYTES: u64 = 4 * 1024 * 1024;
/// Mode of the staged script.
pub(crate) const SCRIPT_MODE: u32 = 0o700;

/// Why the script cannot be staged.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// `SCRIPT-NAME` is not a plain file name.
    #[error(
        "custom script name {name:?} is not a plain file name; \
         CUSTOM-SCRIPT|SCRIPT-NAME must name a file in the customization package"
    )]
    BadName {
        /// The name from the spec.
        name: String,
    },
    /// The package does not contain the script.
    #[error(
        "custom script {path} not found; the spec names it in CUSTOM-SCRIPT|SCRIPT-NAME \
         but the customization package does not contain it"
    )]
    NotFound {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The script is a symlink, directory or other non-file.
    #[error("custom script {path} is not a regular file; ship the script itself in the package")]
    NotRegular {
        /// The offending path.
        path: PathBuf,
    },
    /// The script is larger than [`MAX_SCRIPT_BYTES`].
    #[error("custom script {path} is larger than {max} bytes; a customization script is small, ship larger tools in the template instead")]
    TooLarge {
        /// The script.
        path: PathBuf,
        /// The cap.
        max: u64,
    },
    /// Reading the script failed.
    #[error("reading custom script {path}: {source}")]
    Read {
        /// The script.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The staging directory is a symlink or not a directory.
    #[error("{path} in the target root is {what}; remove it so the custom script can be staged")]
    BadStagingDir {
        /// The staging directory inside the root.
        path: &'static str,
        /// What was found there.
        what: &'static str,
    },
    /// Writing the staged copy failed.
    #[error("staging custom script into {path} in {root}: {source}")]
    Write {
        /// The staged path inside the root.
        path: PathBuf,
        /// The root.
        root: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
}

/// A staged script, as paths on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staged {
    /// The staging directory (the script's working directory).
    pub dir: PathBuf,
    /// The staged `customize.sh`.
    pub script: PathBuf,
}

/// Copies `package_dir/script_name` (a host path, usually `/var/run/vmware-imc`) to
/// [`STAGING_DIR`]`/`[`STAGED_NAME`] in `root`, without carriage returns.
pub fn stage_script(
    root: &Root,
    package_dir: &Path,
    script_name: &str,
) -> Result<Staged, StageError> {
    let plain = !script_name.is_empty()
        && !script_name.contains('/')
        && script_name != "."
        && script_name != "..";
    if !plain {
        return Err(StageError::BadName {
            name: script_name.to_string(),
        });
    }
    let source = package_dir.join(script_name);
    let mut script = read_script(&source)?;
    script.retain(|&b| b != b'\r');

    let dir = staging_dir(root)?;
    let target = Path::new(STAGING_DIR).join(STAGED_NAME);
    let write_err = |source| StageError::Write {
        path: target.clone(),
        root: root.path().to_path_buf(),
        source,
    };
    root.write_file(&target, &script, SCRIPT_MODE)
        .map_err(write_err)?;
    Ok(Staged {
        script: dir.join(STAGED_NAME),
        dir,
    })
}

/// Removes the staging directory and everything in it (the script may hold secrets).
/// A symlink there is removed, not followed; nothing there is fine.
pub fn unstage(root: &Root) -> io::Result<()> {
    let real = root.resolve(Path::new(STAGING_DIR), false)?;
    match fs::symlink_metadata(&real) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => fs::remove_dir_all(&real),
        Ok(_) => fs::remove_file(&real),
    }
}

fn read_script(path: &Path) -> Result<Vec<u8>, StageError> {
    // O_NOFOLLOW: a symlink in the package is refused rather than read wherever it points.
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(StageError::NotFound {
                path: path.to_path_buf(),
            })
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(StageError::NotRegular {
                path: path.to_path_buf(),
            })
        }
        Err(source) => {
            return Err(StageError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let read_err = |source| StageError::Read {
        path: path.to_path_buf(),
        source,
    };
    if !file.metadata().map_err(read_err)?.is_file() {
        return Err(StageError::NotRegular {
            path: path.to_path_buf(),
        });
    }
    // A huge file is refused without being read whole.
    let read = vmcust_imc::read_at_most(file, MAX_SCRIPT_BYTES, 0).map_err(read_err)?;
    if read.cut {
        return Err(StageError::TooLarge {
            path: path.to_path_buf(),
            max: MAX_SCRIPT_BYTES,
        });
    }
    Ok(read.bytes)
}

/// Makes sure [`STAGING_DIR`] is a real directory with mode 0700; returns its host path.
fn staging_dir(root: &Root) -> Result<PathBuf, StageError> {
    let err = |source| StageError::Write {
        path: PathBuf::from(STAGING_DIR),
        root: root.path().to_path_buf(),
        source,
    };
    let real = root.resolve(Path::new(STAGING_DIR), false).map_err(err)?;
    match fs::symlink_metadata(&real) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(StageError::BadStagingDir {
                path: STAGING_DIR,
                what: "a symbolic link",
            })
        }
        Ok(m) if !m.is_dir() => {
            return Err(StageError::BadStagingDir {
                path: STAGING_DIR,
                what: "not a directory",
            })
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // /root itself is private too; create it that way on a bare image.
            DirBuilder::new()
                .recursive(true)
                .mode(STAGING_DIR_MODE)
                .create(&real)
                .map_err(err)?;
        }
        Err(e) => return Err(err(e)),
    }
    let dir: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
        .open(&real)
        .map_err(err)?;
    dir.set_permissions(Permissions::from_mode(STAGING_DIR_MODE))
        .map_err(err)?;
    Ok(real)
}
