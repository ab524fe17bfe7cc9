//! Applying a plan to a root, all or nothing: each action is compared with what is there
//! and performed only if it changes something (so a second apply changes nothing), and
//! when one fails every earlier change is put back before the error is returned.

mod undo;

use std::io;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::plan::{Action, FileOwner, Plan};
use crate::root::{Existing, Root};
use undo::Saved;

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
    /// Not done on this root (the live host name of a root that is not `/`).
    Skipped,
}

impl Change {
    /// The word for a change, planned (`create`) or done (`created`).
    pub fn word(self, planned: bool) -> &'static str {
        match (self, planned) {
            (Change::Created, true) => "create",
            (Change::Updated, true) => "update",
            (Change::Created, false) => "created",
            (Change::Updated, false) => "updated",
            (Change::Unchanged, _) => "unchanged",
            (Change::Skipped, _) => "skip",
        }
    }
}

/// The word for what was done to `action`'s path: `change`'s word, except that a file
/// moved aside (an `Action::Rename` that happened) is `moved aside`, not `updated`.
pub(crate) fn done_word(action: &Action, change: Change) -> &'static str {
    match (action, change) {
        (Action::Rename { .. }, Change::Created | Change::Updated) => "moved aside",
        _ => change.word(false),
    }
}

/// Environment variable naming an action index at which `apply` fails as if the write had
/// failed: the tests' way to prove that a failure anywhere puts everything back.
pub const FAIL_AT_ENV: &str = "VMCUST_TEST_FAIL_AT_ACTION";

/// Whether the root is the running system.
fn is_live(root: &Root) -> bool {
    root.path() == Path::new("/")
}

fn live_hostname() -> io::Result<String> {
    Ok(nix::unistd::gethostname()?.to_string_lossy().into_owned())
}

/// What applying `action` to `root` would change, without changing anything.
pub(crate) fn change_needed(root: &Root, action: &Action) -> io::Result<Change> {
    if let Action::SetHostname { name } = action {
        return Ok(match is_live(root) {
            false => Change::Skipped,
            true if live_hostname()? == *name => Change::Unchanged,
            true => Change::Updated,
        });
    }
    // A write that would follow a link another user could have placed is refused here
    // already, so `plan` shows the refusal `apply` would meet.
    if let Action::Rename { to, .. } = action {
        root.resolve_for_write(to)?;
    }
    let existing = root.existing_for_write(action.path())?;
    let same = match (action, &existing) {
        (
            Action::WriteFile {
                contents,
                mode,
                owner,
                ..
            },
            Existing::File {
                contents: have,
                mode: have_mode,
            },
        ) => {
            let owned = |uid: u32, gid: u32| -> io::Result<bool> {
                Ok(root.owner_and_mode(action.path())?.map(|(u, g, _)| (u, g)) == Some((uid, gid)))
            };
            contents.bytes() == have.as_slice()
                && mode == have_mode
                && match *owner {
                    FileOwner::Kept => true,
                    FileOwner::Chown { uid, gid } => owned(uid, gid)?,
                    FileOwner::InUserDir { uid, gid, dir_mode } => {
                        let dir = action.path().parent().unwrap_or(action.path());
                        owned(uid, gid)? && root.owner_and_mode(dir)? == Some((uid, gid, dir_mode))
                    }
                }
        }
        (Action::Symlink { target, .. }, Existing::Symlink(have)) => target == have,
        (Action::MakeDir { mode, uid, gid, .. }, Existing::Other) => {
            root.is_dir_here(action.path())?
                && root.owner_and_mode(action.path())? == Some((*uid, *gid, *mode))
        }
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

/// How to put back what one action changed.
enum Undo {
    /// Paths as they were.
    Paths(Vec<Saved>),
    /// The running host name as it was.
    Hostname(String),
}

/// Records the state of every path `action` may change.
fn save(root: &Root, action: &Action) -> io::Result<Undo> {
    let top = root.path();
    let take = |p: &Path| Saved::take(&root.resolve_for_write(p)?, top);
    Ok(match action {
        Action::SetHostname { .. } => Undo::Hostname(live_hostname()?),
        Action::Rename { from, to, .. } => Undo::Paths(vec![take(from)?, take(to)?]),
        Action::WriteFile {
            path,
            owner: FileOwner::InUserDir { .. },
            ..
        } => {
            let dir = path.parent().unwrap_or(path);
            // The directory first: restored last, after the file in it.
            Undo::Paths(vec![take(dir)?, take(path)?])
        }
        Action::WriteFile { path, .. }
        | Action::Symlink { path, .. }
        | Action::MakeDir { path, .. } => Undo::Paths(vec![take(path)?]),
    })
}

impl Undo {
    fn run(&self) -> io::Result<()> {
        match self {
            Undo::Hostname(name) => Ok(nix::unistd::sethostname(name)?),
            Undo::Paths(saved) => {
                // A rename of something that is neither file nor link cannot be rewritten
                // from a copy: it is moved back instead.
                if let [from, to] = saved.as_slice() {
                    if from.was_other() {
                        return to.restore();
                    }
                }
                saved.iter().rev().try_for_each(Saved::restore)
            }
        }
    }
}

/// Performs one action if it changes anything; returns what it changed.
pub(crate) fn apply_action(root: &Root, action: &Action) -> Result<Change> {
    let path = action.path();
    let change =
        change_needed(root, action).with_context(|| format!("inspecting {}", path.display()))?;
    if matches!(change, Change::Unchanged | Change::Skipped) {
        return Ok(change);
    }
    match action {
        Action::WriteFile {
            contents,
            mode,
            owner,
            ..
        } => root.write(path, contents.bytes(), *mode, *owner),
        Action::Symlink { target, .. } => root.symlink(path, target),
        Action::MakeDir { mode, uid, gid, .. } => root.make_dir(path, *mode, (*uid, *gid)),
        Action::Rename { to, .. } => root.rename(path, to),
        Action::SetHostname { name } => nix::unistd::sethostname(name).map_err(io::Error::from),
    }
    .with_context(|| format!("writing {} in {}", path.display(), root.path().display()))?;
    Ok(change)
}

/// The context of an apply error after which every change was put back: the root is as
/// it was. Its presence in the chain is what [`put_everything_back`] reads.
#[derive(Debug)]
struct PutBack {
    /// How many changes were undone.
    count: usize,
}

impl std::fmt::Display for PutBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "nothing was changed: the {} change(s) made before the failure were put back",
            self.count
        )
    }
}

/// Whether an error of [`apply`] left the root as it was (every change put back). An
/// error from elsewhere, or one whose undo failed, says no.
pub(crate) fn put_everything_back(e: &anyhow::Error) -> bool {
    e.downcast_ref::<PutBack>().is_some()
}

/// Undoes `failed` (the action that failed, if it got that far) and then `done`, newest
/// first, and says in the error whether everything was put back.
fn put_back(done: Vec<Undo>, failed: Option<Undo>, e: anyhow::Error) -> anyhow::Error {
    let count = done.len();
    let problems: Vec<String> = failed
        .iter()
        .chain(done.iter().rev())
        .filter_map(|u| u.run().err().map(|e| e.to_string()))
        .collect();
    if problems.is_empty() {
        e.context(PutBack { count })
    } else {
        e.context(format!(
            "putting back the earlier changes failed too ({}); the root may be half-changed",
            problems.join("; ")
        ))
    }
}

/// Applies every action of `plan` in order. If one fails, every change made before it is
/// undone, newest first, and the error says so; the root is then as it was.
pub fn apply(root: &Root, plan: &Plan) -> Result<Vec<Change>> {
    let fail_at: Option<usize> = std::env::var(FAIL_AT_ENV).ok().and_then(|v| v.parse().ok());
    let mut done: Vec<Undo> = Vec::new();
    let mut changes = Vec::new();
    for (i, action) in plan.actions.iter().enumerate() {
        let undo = match save(root, action) {
            Ok(u) => u,
            Err(e) => {
                let e = anyhow::Error::from(e)
                    .context(format!("inspecting {}", action.path().display()));
                return Err(put_back(done, None, e));
            }
        };
        let result = if fail_at == Some(i) {
            Err(anyhow::Error::from(io::Error::other(format!(
                "injected failure at action {i} ({FAIL_AT_ENV})"
            ))))
        } else {
            apply_action(root, action)
        };
        match result {
            Ok(change) => {
                if !matches!(change, Change::Unchanged | Change::Skipped) {
                    done.push(undo);
                }
                changes.push(change);
            }
            // The failed action may have made directories or a temp file on its way:
            // its own record puts those back too.
            Err(e) => return Err(put_back(done, Some(undo), e)),
        }
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file moved aside reads as such; every other action keeps its change's word.
    #[test]
    fn words_for_what_was_done() {
        let rename = Action::Rename {
            from: "/etc/resolv.conf".into(),
            to: "/etc/resolv.conf.vmcust-backup".into(),
            purpose: "backup",
        };
        let write = Action::SetHostname { name: "h".into() };
        for (action, change, word) in [
            (&rename, Change::Updated, "moved aside"),
            (&rename, Change::Created, "moved aside"),
            (&rename, Change::Unchanged, "unchanged"),
            (&write, Change::Updated, "updated"),
            (&write, Change::Created, "created"),
            (&write, Change::Skipped, "skip"),
        ] {
            assert_eq!(done_word(action, change), word, "{change:?}");
        }
    }
}
