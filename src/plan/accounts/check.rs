//! The sudoers drop-in is checked before it is installed: staged in a private temporary
//! directory on the machine running vmcust and read by `visudo -cf`, through
//! [`crate::process`]. The root's own `visudo` when the root is `/`; for another root,
//! the running machine's `visudo` (a root's program would have to run chrooted, which
//! needs root and mounts for a syntax check) — and only when that root has sudo at all.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::sudoers::DROP_IN;
use crate::plan::Action;
use crate::process::{self, Cmd, Output};
use crate::root::Root;

/// Where `visudo` lives.
pub const VISUDO: &str = "/usr/sbin/visudo";

/// Why the drop-in is not installed.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// visudo refused it.
    #[error(
        "users[].sudo: visudo -cf refused the sudoers drop-in {DROP_IN}: {0}; fix the sudo rules"
    )]
    Refused(String),
    /// The root has sudo but this machine has no visudo to check with.
    #[error("users[].sudo: the target root has sudo but this machine has no {VISUDO} to check the drop-in with; install the sudo package")]
    NoVisudo,
    /// visudo could not be run.
    #[error("users[].sudo: running visudo: {0}")]
    Run(String),
}

/// Checks every sudoers drop-in of `actions` for `root`; the notes say what was not
/// checked and why.
pub fn check(root: &Root, actions: &[Action]) -> Result<Vec<String>, CheckError> {
    check_with(root, actions, Path::new(VISUDO))
}

/// [`check`] with the machine's `visudo` at `visudo` (tests point it elsewhere).
pub fn check_with(
    root: &Root,
    actions: &[Action],
    visudo: &Path,
) -> Result<Vec<String>, CheckError> {
    let mut notes = Vec::new();
    for a in actions {
        let Action::WriteFile { path, contents, .. } = a else {
            continue;
        };
        if path != Path::new(DROP_IN) {
            continue;
        }
        if !root.is_file(Path::new(VISUDO)) {
            notes.push(format!(
                "{DROP_IN}: the target root has no {VISUDO} (no sudo installed); the drop-in is written unchecked"
            ));
            continue;
        }
        if !visudo.is_file() {
            return Err(CheckError::NoVisudo);
        }
        let dir = tempfile::tempdir().map_err(|e| CheckError::Run(e.to_string()))?;
        let staged = dir.path().join("90-cloud-init-users");
        let mut f = std::fs::File::create(&staged).map_err(|e| CheckError::Run(e.to_string()))?;
        f.write_all(contents.bytes())
            .and_then(|()| f.set_permissions(std::fs::Permissions::from_mode(0o440)))
            .map_err(|e| CheckError::Run(e.to_string()))?;
        let staged_s = staged.to_string_lossy().into_owned();
        let cmd = Cmd::new(visudo, &["-cf", &staged_s], Duration::from_secs(30));
        let done = process::run(&cmd, Output::Bytes(8192), &AtomicBool::new(false))
            .map_err(|e| CheckError::Run(e.to_string()))?;
        if !done.success() {
            let text = String::from_utf8_lossy(&done.stdout).into_owned()
                + &String::from_utf8_lossy(&done.stderr);
            // visudo names the staged file; the message names the real one.
            let text = text.replace(&staged_s, DROP_IN);
            return Err(CheckError::Refused(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join(" / "),
            ));
        }
    }
    Ok(notes)
}
