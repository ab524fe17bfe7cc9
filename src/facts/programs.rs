//! Which programs the root has: a name on the fixed `PATH`, as a shell would find it, or
//! `systemd-timesyncd` where systemd keeps it.

use std::path::Path;

use crate::process::PATH;
use crate::root::Root;

/// Where systemd keeps `systemd-timesyncd` (it is not on `PATH`).
pub(crate) const TIMESYNCD: &[&str] = &[
    "/lib/systemd/systemd-timesyncd",
    "/usr/lib/systemd/systemd-timesyncd",
];

/// The path inside the root of `name` on the fixed `PATH`, as a shell would find it.
pub(crate) fn which(root: &Root, name: &str) -> Option<String> {
    PATH.split(':')
        .map(|dir| format!("{dir}/{name}"))
        .find(|p| root.is_file(Path::new(p)))
}

/// The path inside the root of program `name`: `systemd-timesyncd` in [`TIMESYNCD`],
/// anything else by [`which`].
pub(crate) fn find(root: &Root, name: &str) -> Option<String> {
    if name == "systemd-timesyncd" {
        return TIMESYNCD
            .iter()
            .find(|p| root.is_file(Path::new(p)))
            .map(|p| p.to_string());
    }
    which(root, name)
}
