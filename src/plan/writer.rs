//! The writers of every output format vmcust produces. Each either writes a value in a
//! form its format reads back as exactly that value, or refuses it: no value can add a
//! line, a key, a section or a shell command to a file.
//!
//! The model's types already refuse such values at the door; these writers are the
//! second wall, and the only place each format's quoting rules live.
//!
//! - [`IniWriter`]: systemd `.network`/`.link` files and NetworkManager keyfiles and
//!   drop-ins (one `key=value` per line, no escapes vmcust relies on).
//! - [`ShellWriter`]: files that are *sourced* by a shell (RHEL ifcfg, SUSE ifcfg and
//!   netconfig): `KEY=value` with POSIX single quotes where a value needs them.
//! - [`word`]: one whitespace-free token of a line format (`/etc/hosts`,
//!   `/etc/hostname`, `/etc/resolv.conf`, ifupdown stanzas, `ip route` argument lines).
//!
//! YAML (netplan) goes through [`crate::yaml`], which quotes every scalar it must.

use std::fmt::{Display, Write as _};

/// A value a format cannot hold, refused instead of written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to write {key} into a {format} file: {reason}")]
pub struct UnsafeValue {
    /// The file format.
    pub format: &'static str,
    /// The key or field the value was for.
    pub key: String,
    /// Why it cannot be written.
    pub reason: String,
}

fn refuse(format: &'static str, key: &str, reason: impl Into<String>) -> UnsafeValue {
    UnsafeValue {
        format,
        key: key.to_string(),
        reason: reason.into(),
    }
}

/// Refuses control characters (newline, carriage return, NUL, …): every format here is
/// line-oriented.
fn check_no_control(format: &'static str, key: &str, v: &str) -> Result<(), UnsafeValue> {
    match v.chars().find(|c| c.is_control()) {
        Some(c) => Err(refuse(
            format,
            key,
            format!("the value holds the control character {c:?}"),
        )),
        None => Ok(()),
    }
}

/// A key name: letters, digits, `-`, `_`, `.` (INI and shell keys are constants in the
/// renderers, but indexed keys are built at run time).
fn check_key(format: &'static str, key: &str, shell: bool) -> Result<(), UnsafeValue> {
    let ok = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.bytes().all(|b| {
            b.is_ascii_alphanumeric() || b == b'_' || (!shell && matches!(b, b'-' | b'.' | b'+'))
        });
    if ok {
        Ok(())
    } else {
        Err(refuse(format, key, "not a valid key name"))
    }
}

/// An INI-style file (`[Section]` and `Key=value` lines) such as systemd's unit-like
/// files and NetworkManager keyfiles.
#[derive(Debug)]
pub(crate) struct IniWriter {
    format: &'static str,
    out: String,
    sections: usize,
}

impl IniWriter {
    /// A new file for `format` (named in errors), starting with `header`.
    pub(crate) fn new(format: &'static str, header: &str) -> Self {
        IniWriter {
            format,
            out: header.to_string(),
            sections: 0,
        }
    }

    /// Starts `[name]`, with a blank line before it unless it is the first.
    pub(crate) fn section(&mut self, name: &str) -> Result<(), UnsafeValue> {
        if name.contains(['[', ']']) {
            return Err(refuse(self.format, name, "not a valid section name"));
        }
        check_no_control(self.format, name, name)?;
        if self.sections > 0 {
            self.out.push('\n');
        }
        self.sections += 1;
        writeln!(self.out, "[{name}]").expect("writing to a string");
        Ok(())
    }

    /// Writes `key=value`. A value with a control character, or with leading or trailing
    /// white space (which the readers strip), is refused.
    pub(crate) fn set(&mut self, key: &str, value: impl Display) -> Result<(), UnsafeValue> {
        let v = value.to_string();
        check_key(self.format, key, false)?;
        check_no_control(self.format, key, &v)?;
        if v.trim() != v {
            return Err(refuse(
                self.format,
                key,
                "the value starts or ends with white space",
            ));
        }
        writeln!(self.out, "{key}={v}").expect("writing to a string");
        Ok(())
    }

    /// The file's text.
    pub(crate) fn finish(self) -> String {
        self.out
    }
}

/// A file a shell sources: `KEY=value` lines where every value reads back as exactly
/// itself (`bash -c '. file'`), with no expansion, word splitting or second command.
#[derive(Debug)]
pub(crate) struct ShellWriter {
    format: &'static str,
    out: String,
    always_quote: bool,
}

/// Characters that need no quoting in a shell word.
fn shell_plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b)
}

/// `v` as one shell word: as it is when every character is plain, else in single quotes
/// (inside which only `'` itself is special; it is written as `'\''`).
pub(crate) fn shell_quote(v: &str) -> String {
    if !v.is_empty() && v.bytes().all(shell_plain) {
        return v.to_string();
    }
    format!("'{}'", v.replace('\'', r"'\''"))
}

impl ShellWriter {
    /// A new file for `format` (named in errors), starting with `header`.
    pub(crate) fn new(format: &'static str, header: &str) -> Self {
        ShellWriter {
            format,
            out: header.to_string(),
            always_quote: false,
        }
    }

    /// Like [`ShellWriter::new`], but every value is in single quotes (SUSE's style).
    pub(crate) fn always_quoted(format: &'static str, header: &str) -> Self {
        ShellWriter {
            always_quote: true,
            ..ShellWriter::new(format, header)
        }
    }

    /// Writes `KEY=value`, quoted as needed. Control characters are refused: the
    /// non-shell readers of these files (NetworkManager's ifcfg-rh, wicked) read one
    /// line per key.
    pub(crate) fn set(&mut self, key: &str, value: impl Display) -> Result<(), UnsafeValue> {
        let v = value.to_string();
        check_key(self.format, key, true)?;
        check_no_control(self.format, key, &v)?;
        let quoted = if self.always_quote {
            format!("'{}'", v.replace('\'', r"'\''"))
        } else {
            shell_quote(&v)
        };
        writeln!(self.out, "{key}={quoted}").expect("writing to a string");
        Ok(())
    }

    /// Writes a comment line (no control characters).
    pub(crate) fn comment(&mut self, text: &str) -> Result<(), UnsafeValue> {
        check_no_control(self.format, "comment", text)?;
        writeln!(self.out, "# {text}").expect("writing to a string");
        Ok(())
    }

    /// The file's text.
    pub(crate) fn finish(self) -> String {
        self.out
    }
}

/// `value` in double quotes for a shell-sourced file that vmcust edits in place (SUSE's
/// netconfig `config`, whose style is `KEY="value"`): refused when it holds anything
/// special inside double quotes (`"`, `$`, `` ` ``, `\`) or a control character.
pub(crate) fn shell_double_quoted(
    format: &'static str,
    key: &str,
    value: &str,
) -> Result<String, UnsafeValue> {
    check_key(format, key, true)?;
    check_no_control(format, key, value)?;
    if value.contains(['"', '$', '`', '\\']) {
        return Err(refuse(format, key, "the value holds \" $ ` or \\"));
    }
    Ok(format!("{key}=\"{value}\""))
}

/// `value` as one token of a whitespace-separated line format, or an error when it is
/// empty or holds white space, a control character or a `#` (a comment in every such
/// format).
pub(crate) fn word(
    format: &'static str,
    key: &str,
    value: impl Display,
) -> Result<String, UnsafeValue> {
    let v = value.to_string();
    check_no_control(format, key, &v)?;
    if v.is_empty() {
        return Err(refuse(format, key, "the value is empty"));
    }
    if v.contains(char::is_whitespace) || v.contains('#') {
        return Err(refuse(format, key, "the value holds white space or #"));
    }
    Ok(v)
}

/// Several tokens joined by single spaces, each checked by [`word`].
pub(crate) fn words<T: Display>(
    format: &'static str,
    key: &str,
    values: impl IntoIterator<Item = T>,
) -> Result<String, UnsafeValue> {
    let mut out = String::new();
    for v in values {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&word(format, key, v)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ini_refuses_what_would_add_lines() {
        let mut w = IniWriter::new("networkd", "");
        w.section("Network").unwrap();
        w.set("Domains", "corp.example.com").unwrap();
        for bad in ["a\nDNS=1.2.3.4", "a\rb", " lead", "trail ", "nul\0"] {
            assert!(w.set("Domains", bad).is_err(), "{bad:?}");
        }
        assert!(w.set("Bad Key", "x").is_err());
        assert!(w.section("a]\n[b").is_err());
        assert_eq!(w.finish(), "[Network]\nDomains=corp.example.com\n");
    }

    #[test]
    fn shell_quotes_only_what_needs_it() {
        assert_eq!(shell_quote("10.0.0.1"), "10.0.0.1");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(
            shell_quote("x\"; touch /tmp/p; : \""),
            "'x\"; touch /tmp/p; : \"'"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        let mut w = ShellWriter::new("ifcfg", "");
        assert!(w.set("DOMAIN", "a\nb").is_err());
        assert!(w.set("A-B", "x").is_err());
        assert!(w.set("1A", "x").is_err());
    }

    #[test]
    fn words_refuse_separators() {
        assert_eq!(
            words("resolv.conf", "search", ["a.com", "b.com"]).unwrap(),
            "a.com b.com"
        );
        for bad in ["a b", "a\tb", "a\nnameserver 6.6.6.6", "", "a#b"] {
            assert!(word("hosts", "name", bad).is_err(), "{bad:?}");
        }
    }

    /// What `bash` reads back from a sourced file: every key's value, exactly.
    fn sourced(text: &str, keys: &[&str]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ifcfg");
        std::fs::write(&file, text).unwrap();
        let script = keys
            .iter()
            .map(|k| format!("printf '%s\\0' \"${k}\""))
            .collect::<Vec<_>>()
            .join("; ");
        let out = std::process::Command::new("env")
            .args(["-i", "bash", "-c"])
            .arg(format!(". {}; {script}", file.display()))
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            std::fs::read_dir(dir.path()).unwrap().count() == 1,
            "sourcing created a file"
        );
        let text = String::from_utf8(out.stdout).unwrap();
        text.split('\0')
            .map(str::to_string)
            .take(keys.len())
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any value the shell writer accepts is read back by bash as exactly itself,
        /// and sourcing runs nothing.
        #[test]
        fn shell_values_read_back_exactly(v in "[ -~]{1,40}", w in "\\PC{0,20}") {
            let mut file = ShellWriter::new("ifcfg", "# test\n");
            file.set("A", &v).unwrap();
            let second = file.set("B", &w).is_ok();
            let text = file.finish();
            let keys: &[&str] = if second { &["A", "B"] } else { &["A"] };
            let got = sourced(&text, keys);
            prop_assert_eq!(&got[0], &v);
            if second {
                prop_assert_eq!(&got[1], &w);
            }
        }
    }
}
