//! The command lists of `bootcmd`, `runcmd` and `power_state.condition`: each entry a
//! shell line (run with `sh -c`) or an argv list (run as is), as cloud-init's `shellify`
//! takes them.

use serde::Serialize;

use super::node::{Node, Value};
use super::read::{index, Reader};

/// Most commands in one list.
pub(crate) const MAX_COMMANDS: usize = 1024;
/// Longest command (a shell line, or an argv's words together), in bytes.
pub(crate) const MAX_COMMAND: usize = 64 * 1024;
/// Most words in an argv command.
pub(crate) const MAX_ARGS: usize = 1024;

/// One command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Command {
    /// A string entry: a shell command line.
    Shell(String),
    /// A list entry: the program and its arguments, no shell.
    Argv(Vec<String>),
}

/// The commands of a list; `nulls` skips null entries (runcmd's schema allows them).
pub(crate) fn commands(r: &mut Reader, path: &str, node: &Node, nulls: bool) -> Vec<Command> {
    let Some(items) = r.list(node, path, MAX_COMMANDS) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = index(path, i);
        match &item.value {
            Value::Null if nulls => {}
            Value::Str(s) => {
                if let Some(s) = checked(r, item, &at, s.clone()) {
                    out.push(Command::Shell(s));
                }
            }
            Value::Seq(words) => {
                if let Some(c) = argv(r, item, &at, words) {
                    out.push(c);
                }
            }
            _ => r.wrong_type(
                item,
                &at,
                "a shell line (a string) or an argv list such as [ls, -l, /]",
            ),
        }
    }
    out
}

/// An argv list: strings, and integers as their digits (cloud-init `str()`s them, and
/// `[sleep, 10]` is common).
fn argv(r: &mut Reader, node: &Node, path: &str, words: &[Node]) -> Option<Command> {
    if words.is_empty() {
        r.error(node, path, "is an empty argv list; name a program");
        return None;
    }
    if words.len() > MAX_ARGS {
        r.error(
            node,
            path,
            format!("has {} words; at most {MAX_ARGS}", words.len()),
        );
        return None;
    }
    let mut out = Vec::with_capacity(words.len());
    let mut total = 0;
    for (i, w) in words.iter().enumerate() {
        let at = index(path, i);
        let word = match &w.value {
            Value::Str(s) => s.clone(),
            Value::Int(n) => n.to_string(),
            _ => {
                r.error(
                    w,
                    &at,
                    format!("is {}; quote it to pass it as a word", w.kind()),
                );
                return None;
            }
        };
        total += word.len() + 1;
        out.push(checked(r, w, &at, word)?);
    }
    if total > MAX_COMMAND {
        r.error(
            node,
            path,
            format!("is {total} bytes long; at most {MAX_COMMAND}"),
        );
        return None;
    }
    Some(Command::Argv(out))
}

fn checked(r: &mut Reader, node: &Node, path: &str, s: String) -> Option<String> {
    if s.len() > MAX_COMMAND {
        r.error(
            node,
            path,
            format!("is {} bytes long; at most {MAX_COMMAND}", s.len()),
        );
        return None;
    }
    if s.contains('\0') {
        r.error(
            node,
            path,
            "holds a NUL character, which no command line can carry; remove it",
        );
        return None;
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::node::parse;

    #[test]
    fn command_lists_good_and_hostile() {
        let table: &[(&str, Result<Vec<Command>, &str>)] = &[
            ("[ls]", Ok(vec![Command::Shell("ls".into())])),
            (
                "[[sleep, 10], 'echo hi > /x']",
                Ok(vec![
                    Command::Argv(vec!["sleep".into(), "10".into()]),
                    Command::Shell("echo hi > /x".into()),
                ]),
            ),
            ("[~, ls]", Ok(vec![Command::Shell("ls".into())])),
            ("ls", Err("is a string; write a list")),
            ("[5]", Err("is an integer; write a shell line")),
            ("[[]]", Err("empty argv")),
            ("[[echo, yes]]", Err("[0][1]: is a boolean; quote it")),
            ("[\"a\\0b\"]", Err("NUL")),
            ("{a: b}", Err("is a mapping")),
        ];
        for (yaml, want) in table {
            let node = parse(yaml, 0).unwrap();
            let mut r = Reader::new();
            let got = commands(&mut r, "runcmd", &node, true);
            let problems = r.into_problems();
            match want {
                Ok(w) => {
                    assert!(problems.is_empty(), "{yaml}: {problems:?}");
                    assert_eq!(&got, w, "{yaml}");
                }
                Err(w) => {
                    let all: Vec<String> = problems
                        .iter()
                        .map(|p| format!("{}: {}", p.path, p.message))
                        .collect();
                    assert!(
                        all.iter().any(|m| m.contains(w)),
                        "{yaml}: {all:?} lacks {w}"
                    );
                }
            }
        }
    }
}
