//! Reading and writing a file's SELinux label: the `security.selinux` extended attribute.

use std::io;
use std::os::fd::AsFd;
use std::path::Path;

use rustix::fs::XattrFlags;

/// The attribute that holds the label.
pub(crate) const NAME: &str = "security.selinux";
/// A label longer than this is refused (contexts are well under 256 bytes in practice).
const MAX_LABEL_BYTES: usize = 4096;

/// A label as the filesystem stores it (usually NUL-terminated context text).
pub(crate) type Label = Vec<u8>;

/// `get` into a buffer that is not zeroed first (this runs once per written file on
/// every boot); `None` when there is no label.
fn read_label(
    get: impl FnOnce(rustix::buffer::SpareCapacity<'_, u8>) -> rustix::io::Result<usize>,
) -> io::Result<Option<Label>> {
    let mut buf = Vec::with_capacity(MAX_LABEL_BYTES);
    match get(rustix::buffer::spare_capacity(&mut buf)) {
        Ok(_) => Ok(Some(buf)),
        // No label, or a filesystem without extended attributes.
        Err(rustix::io::Errno::NODATA | rustix::io::Errno::OPNOTSUPP) => Ok(None),
        Err(rustix::io::Errno::RANGE) => Err(io::Error::other(format!(
            "{NAME} is longer than {MAX_LABEL_BYTES} bytes"
        ))),
        Err(e) => Err(e.into()),
    }
}

/// The label of what is at `path`, not following a final symlink; `None` if it has none.
pub fn get_path(path: &Path) -> io::Result<Option<Label>> {
    read_label(|buf| rustix::fs::lgetxattr(path, NAME, buf))
}

/// Labels an open file.
pub(crate) fn set_fd(fd: impl AsFd, label: &[u8]) -> io::Result<()> {
    rustix::fs::fsetxattr(fd, NAME, label, XattrFlags::empty()).map_err(|e| with_name(e, None))
}

/// Labels what is at `path`, not following a final symlink (so a symlink itself).
pub fn set_path(path: &Path, label: &[u8]) -> io::Result<()> {
    rustix::fs::lsetxattr(path, NAME, label, XattrFlags::empty())
        .map_err(|e| with_name(e, Some(path)))
}

/// Removes the label of what is at `path` (not following a final symlink); having
/// none already is not an error.
pub(crate) fn remove_path(path: &Path) -> io::Result<()> {
    match rustix::fs::lremovexattr(path, NAME) {
        Ok(()) | Err(rustix::io::Errno::NODATA | rustix::io::Errno::OPNOTSUPP) => Ok(()),
        Err(e) => Err(with_name(e, Some(path))),
    }
}

fn with_name(e: rustix::io::Errno, path: Option<&Path>) -> io::Error {
    let e = io::Error::from(e);
    let what = match path {
        Some(p) => format!("setting {NAME} on {}", p.display()),
        None => format!("setting {NAME}"),
    };
    io::Error::new(e.kind(), format!("{what}: {e}"))
}
