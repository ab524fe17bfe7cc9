//! The one writer of the line-based configuration files the cloud-config modules compose
//! from user-data (`.repo` INI files, `KEY=value` files): the file's fixed text comes from
//! the module's code, every value from the document goes through [`ConfText::value`],
//! which refuses a line break or any other control character, so no value can start a
//! line, a section or a setting of its own.

use crate::model::quote;

/// A configuration file being composed.
#[derive(Debug, Default)]
pub(crate) struct ConfText {
    text: String,
}

impl ConfText {
    /// An empty file.
    pub(crate) fn new() -> Self {
        ConfText::default()
    }

    /// Fixed text of the module's own (a `'static` literal: never a document's value).
    pub(crate) fn push(&mut self, fixed: &'static str) -> &mut Self {
        self.text.push_str(fixed);
        self
    }

    /// A value from the document, on the current line; refused (with why) if it holds a
    /// line break or another control character.
    pub(crate) fn value(&mut self, v: &str) -> Result<&mut Self, String> {
        if let Some(c) = v.chars().find(|c| c.is_control()) {
            return Err(format!(
                "{} holds the control character {c:?}, which would end its line in the file",
                quote(v)
            ));
        }
        self.text.push_str(v);
        Ok(self)
    }

    /// The text composed.
    pub(crate) fn finish(self) -> String {
        self.text
    }
}

/// `key=value` set in an assignment file (`/etc/locale.conf`, `/etc/sysconfig/language`,
/// `zypp.conf`), as cloud-init's sysconfig editor does: the first line
/// assigning `key` is replaced in place (its old quotes dropped), every other line kept;
/// without one, the assignment is added at the end. `None` for `existing` is a new file,
/// which starts with `header` (fixed text).
pub(crate) fn set_assignment(
    existing: Option<&str>,
    header: &'static str,
    key: &str,
    value: &str,
) -> Result<String, String> {
    let mut line = ConfText::new();
    line.value(key)?.push("=").value(value)?;
    let line = line.finish();
    let Some(old) = existing else {
        let mut t = ConfText::new();
        t.push(header);
        return Ok(format!("{}{line}\n", t.finish()));
    };
    let assigns = |l: &str| {
        l.trim_start()
            .strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    let mut out = String::with_capacity(old.len() + line.len() + 1);
    let mut done = false;
    for l in old.lines() {
        if !done && assigns(l) {
            out.push_str(&line);
            done = true;
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    if !done {
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_cannot_break_their_line() {
        for bad in ["a\nb", "a\rb", "a\u{0}b", "x\u{85}y", "tab\there"] {
            let mut t = ConfText::new();
            t.push("k = ");
            assert!(t.value(bad).is_err(), "{bad:?}");
        }
        let mut t = ConfText::new();
        t.push("[").value("main").unwrap().push("]\n");
        assert_eq!(t.finish(), "[main]\n");
    }

    #[test]
    fn assignments_replace_in_place_or_append() {
        let table: &[(Option<&str>, &str)] = &[
            (None, "# new\nLANG=de_DE.UTF-8\n"),
            (Some(""), "LANG=de_DE.UTF-8\n"),
            (
                Some("# c\nLANG=\"en_US.UTF-8\"\nLC_TIME=C\n"),
                "# c\nLANG=de_DE.UTF-8\nLC_TIME=C\n",
            ),
            (Some("LC_ALL=C"), "LC_ALL=C\nLANG=de_DE.UTF-8\n"),
            (Some("LANGUAGE=en\n"), "LANGUAGE=en\nLANG=de_DE.UTF-8\n"),
        ];
        for (old, want) in table {
            assert_eq!(
                set_assignment(*old, "# new\n", "LANG", "de_DE.UTF-8").unwrap(),
                *want,
                "{old:?}"
            );
        }
        assert!(set_assignment(None, "", "LANG", "C\nLC_ALL=x").is_err());
    }
}
