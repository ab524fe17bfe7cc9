//! What the modules of a stage did, as the instance's record keeps it: every file a
//! module's actions touched (through [`super::driver`]'s apply) and every program it ran
//! (through [`super::exec::run`]), gathered where all modules pass, so a new module's
//! files and commands are recorded without any code of its own.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

/// Most entries of each kind kept for one module (a record is bounded).
pub(crate) const MAX_ENTRIES: usize = 64;

/// A file (or directory, link) a module's action touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDone {
    /// The path inside the root.
    pub path: String,
    /// What it is for (the action's purpose).
    pub purpose: String,
    /// `created`, `updated`, `unchanged`, …: the apply's word for it.
    pub change: String,
}

/// A program a module ran, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandDone {
    /// The module that ran it.
    pub module: String,
    /// The program and its arguments as the log shows them (a user's command words are
    /// counted, not shown: they may hold secrets).
    pub command: String,
    /// Its exit status, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// `succeeded`, `failed: …` or `interrupted`.
    pub result: String,
}

#[derive(Default)]
struct Journal {
    files: Vec<FileDone>,
    commands: Vec<CommandDone>,
}

thread_local! {
    // Modules run one after another on the stage's thread, and so do their programs.
    static JOURNAL: RefCell<Journal> = RefCell::new(Journal::default());
}

/// Notes a file a module's action touched.
pub(crate) fn file(f: FileDone) {
    JOURNAL.with(|j| {
        let mut j = j.borrow_mut();
        if j.files.len() < MAX_ENTRIES {
            j.files.push(f);
        }
    });
}

/// Notes a program a module ran.
pub(crate) fn command(c: CommandDone) {
    JOURNAL.with(|j| {
        let mut j = j.borrow_mut();
        if j.commands.len() < MAX_ENTRIES {
            j.commands.push(c);
        }
    });
}

/// Everything noted since the last call, emptied.
pub(crate) fn take() -> (Vec<FileDone>, Vec<CommandDone>) {
    JOURNAL.with(|j| {
        let mut j = j.borrow_mut();
        (
            std::mem::take(&mut j.files),
            std::mem::take(&mut j.commands),
        )
    })
}
