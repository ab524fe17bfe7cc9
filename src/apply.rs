//! Applying a plan to a root: each action is compared with what is there and performed
//! only if it changes something, so a second apply of the same plan changes nothing.

use std::io;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::plan::{Action, Plan};
use crate::root::{Existing, Root};

/// What an action did (or, in a dry run, would do) to the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// The path did not exist.
    Created,
    /// The path existed with other contents, mode or target.
    Updated,
    /// The path is already as planned.
    Unchanged,
}

/// What applying `action` to `root` would change, without changing anything.
pub fn change_needed(root: &Root, action: &Action) -> io::Result<Change> {
    let existing = root.existing(action.path())?;
    let same = match (action, &existing) {
        (
            Action::WriteFile { contents, mode, .. },
            Existing::File {
                contents: have,
                mode: have_mode,
            },
        ) => contents.bytes() == have.as_slice() && mode == have_mode,
        (
            Action::WriteUserFile {
                contents,
                mode,
                dir_mode,
                uid,
                gid,
                ..
            },
            Existing::File {
                contents: have,
                mode: have_mode,
            },
        ) => {
            let dir = action.path().parent().unwrap_or(action.path());
            contents.bytes() == have.as_slice()
                && mode == have_mode
                && root.owner_and_mode(action.path())?.map(|(u, g, _)| (u, g)) == Some((*uid, *gid))
                && root.owner_and_mode(dir)? == Some((*uid, *gid, *dir_mode))
        }
        (Action::Symlink { target, .. }, Existing::Symlink(have)) => target == have,
        (Action::Rename { .. }, Existing::Missing) => true,
        _ => false,
    };
    Ok(match (same, existing) {
        (true, _) => Change::Unchanged,
        (false, Existing::Missing) => Change::Created,
        (false, _) => Change::Updated,
    })
}

/// The changes `plan` would make, in order, without making them.
pub fn dry_run(root: &Root, plan: &Plan) -> Result<Vec<Change>> {
    plan.actions
        .iter()
        .map(|a| {
            change_needed(root, a).with_context(|| format!("inspecting {}", a.path().display()))
        })
        .collect()
}

/// Performs one action if it changes anything; returns what it changed.
pub fn apply_action(root: &Root, action: &Action) -> Result<Change> {
    let path = action.path();
    let change =
        change_needed(root, action).with_context(|| format!("inspecting {}", path.display()))?;
    if change == Change::Unchanged {
        return Ok(change);
    }
    match action {
        Action::WriteFile { contents, mode, .. } => root.write_file(path, contents.bytes(), *mode),
        Action::WriteUserFile {
            contents,
            mode,
            dir_mode,
            uid,
            gid,
            ..
        } => root.write_user_file(path, contents.bytes(), (*mode, *dir_mode), (*uid, *gid)),
        Action::Symlink { target, .. } => root.symlink(path, target),
        Action::Rename { to, .. } => root.rename(path, to),
    }
    .with_context(|| format!("writing {} in {}", path.display(), root.path().display()))?;
    Ok(change)
}

/// Applies every action of `plan` in order, stopping at the first failure.
pub fn apply(root: &Root, plan: &Plan) -> Result<Vec<Change>> {
    plan.actions.iter().map(|a| apply_action(root, a)).collect()
}
