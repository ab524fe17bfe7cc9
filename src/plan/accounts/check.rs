//! The sudoers drop-in is checked before it is installed: given to the root's own
//! `visudo -c -f -` on its standard input, through [`crate::process`]. For `--root /`
//! that is the running system's; for another root (an image) the root's `visudo` runs
//! sealed inside it ([`process::Sandbox`]), as every program of another root does: never
//! this machine's, whose sudo may be another version reading other rules. A root without
//! `visudo` has no sudo, and the drop-in is written unchecked, with a note.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::sudoers::DROP_IN;
use crate::plan::Action;
use crate::process::{self, Cmd, Output};
use crate::root::Root;

/// Where `visudo` lives.
pub(crate) const VISUDO: &str = "/usr/sbin/visudo";

/// Why the drop-in is not installed.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// visudo refused it.
    #[error(
        "the sudoers drop-in {DROP_IN} ({whose}) is refused by the root's visudo: {said}; \
         fix the sudo rules"
    )]
    Refused {
        /// Whose rules the drop-in holds, as the message names them.
        whose: String,
        /// What visudo said.
        said: String,
    },
    /// visudo could not be run.
    #[error("checking the sudoers drop-in {DROP_IN} ({whose}) with the root's {VISUDO}: {reason}")]
    Run {
        /// Whose rules the drop-in holds.
        whose: String,
        /// Why not.
        reason: String,
    },
}

/// How long visudo may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Checks every sudoers drop-in of `actions` with the root's own `visudo`; the notes say
/// what was not checked and why.
pub fn check(root: &Root, actions: &[Action]) -> Result<Vec<String>, CheckError> {
    let mut notes = Vec::new();
    for a in actions {
        let Action::WriteFile {
            path,
            contents,
            owner: crate::plan::FileOwner::Kept,
            ..
        } = a
        else {
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
        let text = String::from_utf8_lossy(contents.bytes()).into_owned();
        let whose = whose(&text);
        let run_error = |reason: String| CheckError::Run {
            whose: whose.clone(),
            reason,
        };
        let mut cmd = Cmd::new(VISUDO, &["-c", "-f", "-"], TIMEOUT);
        cmd.stdin = contents.bytes().to_vec();
        let stop = AtomicBool::new(false);
        let done = if root.path() == Path::new("/") {
            process::run(&cmd, Output::Bytes(8192), &stop)
        } else {
            let sandbox =
                process::Sandbox::new(root.path()).map_err(|e| run_error(e.to_string()))?;
            process::run_sandboxed(&cmd, &sandbox, Output::Bytes(8192), &stop)
        }
        .map_err(|e| run_error(e.to_string()))?;
        if !done.success() {
            let said = String::from_utf8_lossy(&done.stdout).into_owned()
                + &String::from_utf8_lossy(&done.stderr);
            // visudo names its input `stdin`; the message names the file it becomes.
            let said = said.replace("stdin:", &format!("{DROP_IN}:"));
            return Err(CheckError::Refused {
                whose,
                said: said
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join(" / "),
            });
        }
    }
    Ok(notes)
}

/// Whose rules a drop-in holds, from its `# User rules for NAME` lines: the `sudo` keys
/// of those `users` entries, and (when it held them before) earlier runs'.
fn whose(text: &str) -> String {
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# User rules for "))
        .map(str::trim)
        .collect();
    match names.as_slice() {
        [] => "no user's rules".to_string(),
        names => format!("the `sudo` rules of users {}", names.join(", ")),
    }
}
