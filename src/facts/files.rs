//! What a file the planners look at holds now: its contents when it is a regular file,
//! and its permission bits (an edited file keeps its mode).

use std::path::Path;

use anyhow::{Context, Result};

use crate::root::{Existing, Root};

/// What a file is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    /// Nothing there.
    Missing,
    /// A regular file with these contents.
    File(Vec<u8>),
    /// A directory, link or other non-file.
    NotAFile,
}

/// What `path` in `root` is now, and its mode when it is a regular file. Links are not
/// followed: a link planted where a file is expected is [`Current::NotAFile`].
pub(crate) fn current(root: &Root, path: &str) -> Result<(Current, Option<u32>)> {
    let now = root
        .existing(Path::new(path))
        .with_context(|| format!("reading {path} in {}", root.path().display()))?;
    Ok(match now {
        Existing::Missing => (Current::Missing, None),
        Existing::File { contents, mode } => (Current::File(contents), Some(mode)),
        _ => (Current::NotAFile, None),
    })
}
