//! The sudo rules of `users[].sudo`, in the drop-in cloud-init writes
//! (`/etc/sudoers.d/90-cloud-init-users`, 0440): a header, then one block per user
//! (`# User rules for NAME` and `NAME RULE` lines), a block appended only when the file
//! does not hold it yet. `/etc/sudoers` gets `#includedir /etc/sudoers.d` when it reads no
//! such directory, as cloud-init's `ensure_sudo_dir` adds it. The drop-in is checked with
//! `visudo -cf` before it is installed ([`super::check`]).

use std::path::PathBuf;

use crate::facts::accounts::AccountDbFacts;
use crate::plan::{Action, Contents};

pub(crate) use crate::facts::accounts::{SUDOERS, SUDOERS_DROP_IN as DROP_IN};
/// The drop-in directory.
pub(crate) const DROP_IN_DIR: &str = "/etc/sudoers.d";
/// Mode of the drop-in (sudo ignores a writable one).
pub(crate) const DROP_IN_MODE: u32 = 0o440;
/// First line of a drop-in vmcust creates (cloud-init's names its version and the date;
/// a fixed line keeps a second run from rewriting the file).
pub(crate) const HEADER: &str = "# Created by vmcust (cloud-config users[].sudo)";

/// Whether `sudoers` includes `dir` (`#includedir` or `@includedir`).
fn includes(sudoers: &str, dir: &str) -> bool {
    sudoers.lines().any(|l| {
        let l = l.trim();
        ["#includedir", "@includedir"].iter().any(|k| {
            l.strip_prefix(k)
                .filter(|r| r.starts_with(char::is_whitespace))
                .is_some_and(|r| r.trim().trim_end_matches('/') == dir)
        })
    })
}

/// The block of one user's rules.
pub(crate) fn block(user: &str, rules: &[String]) -> String {
    let mut b = format!("\n# User rules for {user}\n");
    for r in rules {
        b.push_str(user);
        b.push(' ');
        b.push_str(r);
        b.push('\n');
    }
    b
}

/// The drop-in's new text for `users` (name, rules), from what is there now.
pub(crate) fn drop_in_text(current: Option<&str>, users: &[(String, Vec<String>)]) -> String {
    let mut text = current.map_or_else(|| format!("{HEADER}\n"), str::to_string);
    for (user, rules) in users {
        let b = block(user, rules);
        if !text.contains(&b) {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&b);
        }
    }
    text
}

/// Plans the drop-in (and the include line and directory when missing).
pub(crate) fn plan(users: &[(String, Vec<String>)], f: &AccountDbFacts) -> Vec<Action> {
    let mut out = Vec::new();
    let sudoers = f.sudoers.as_deref().unwrap_or("");
    if !includes(sudoers, DROP_IN_DIR) {
        let mut text = sudoers.to_string();
        if f.sudoers.is_none() {
            text.push_str("# See sudoers(5) for more information on \"#include\" directives:\n");
        }
        text.push_str(
            "\n# Added by vmcust (cloud-config users[].sudo)\n#includedir /etc/sudoers.d\n",
        );
        out.push(Action::write_file(
            SUDOERS,
            Contents::text(text),
            0o440,
            "sudoers: include /etc/sudoers.d",
        ));
        out.push(Action::MakeDir {
            path: DROP_IN_DIR.into(),
            mode: 0o750,
            uid: 0,
            gid: 0,
            purpose: "sudoers drop-in directory",
        });
    }
    out.push(Action::write_file(
        PathBuf::from(DROP_IN),
        Contents::text(drop_in_text(f.sudoers_dropin.as_deref(), users)),
        DROP_IN_MODE,
        "sudo rules (cloud-config users[].sudo)",
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_appended_once() {
        let users = vec![
            (
                "alice".to_string(),
                vec!["ALL=(ALL) NOPASSWD:ALL".to_string()],
            ),
            (
                "bob".to_string(),
                vec!["ALL=(ALL) ALL".into(), "ALL=(root) /bin/ls".into()],
            ),
        ];
        let first = drop_in_text(None, &users);
        assert_eq!(
            first,
            format!(
                "{HEADER}\n\n# User rules for alice\nalice ALL=(ALL) NOPASSWD:ALL\n\n\
                 # User rules for bob\nbob ALL=(ALL) ALL\nbob ALL=(root) /bin/ls\n"
            )
        );
        assert_eq!(drop_in_text(Some(&first), &users), first);
    }

    #[test]
    fn include_lines_are_recognised() {
        assert!(includes("@includedir /etc/sudoers.d\n", DROP_IN_DIR));
        assert!(includes("  #includedir   /etc/sudoers.d/\n", DROP_IN_DIR));
        assert!(!includes("#includedir /etc/sudoers.dx\n", DROP_IN_DIR));
        assert!(!includes("# includedir /etc/sudoers.d\n", DROP_IN_DIR));
        let f = AccountDbFacts {
            sudoers: Some("root ALL=(ALL) ALL\n@includedir /etc/sudoers.d\n".into()),
            ..Default::default()
        };
        let a = plan(&[("a".into(), vec!["ALL".into()])], &f);
        assert_eq!(a.len(), 1);
        let f = AccountDbFacts {
            sudoers: Some("root ALL=(ALL) ALL\n".into()),
            ..Default::default()
        };
        let a = plan(&[("a".into(), vec!["ALL".into()])], &f);
        assert_eq!(a.len(), 3);
    }
}
