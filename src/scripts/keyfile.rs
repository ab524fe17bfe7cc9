//! tools.conf read the way open-vm-tools reads it: glib's `GKeyFile`.
//!
//! `vmware-toolbox-cmd config get` loads tools.conf with `g_key_file_load_from_file` and
//! prints `g_key_file_get_string`; vmtoolsd reads booleans with `g_key_file_get_boolean`.
//! A generic INI reader differs from glib where it matters for the script switch: glib lets
//! the *last* of two equal keys win, keeps a group name exactly as written between the
//! brackets (`[ deployPkg ]` is another group), knows only `#` comments, refuses the whole
//! file on one bad line (or a BOM), and accepts only `true`, `false`, `1` and `0` as
//! booleans. Each rule has a row in this module's tests, checked against glib itself by
//! `tests/tools_conf_glib.rs`.

use std::collections::HashMap;

use thiserror::Error;

/// Why glib would refuse to load the whole file (then `vmware-toolbox-cmd` exits 69 and
/// vmtoolsd uses its defaults).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeyFileError {
    /// A key before the first `[group]` line.
    #[error("line {line}: key before the first [group]; tools.conf must start with a group such as [deployPkg]")]
    NoGroup {
        /// 1-based line.
        line: usize,
    },
    /// A line that is not a group, a `key=value` pair, a `#` comment or blank (glib has no
    /// `;` comments, and a UTF-8 BOM makes the first line such a line).
    #[error("line {line}: not a [group], a key=value pair, a # comment or a blank line")]
    Malformed {
        /// 1-based line.
        line: usize,
    },
    /// A group name that is empty or holds brackets or control characters.
    #[error("line {line}: invalid group name; use letters, digits and - between [ and ]")]
    BadGroup {
        /// 1-based line.
        line: usize,
    },
    /// A key name that is empty, starts or ends with a space, or holds `[`/`]` outside a
    /// `key[locale]` suffix.
    #[error("line {line}: invalid key name; use letters, digits and - before the =")]
    BadKey {
        /// 1-based line.
        line: usize,
    },
}

/// Why a value cannot be read as the type asked for (glib's
/// `G_KEY_FILE_ERROR_INVALID_VALUE`; `vmware-toolbox-cmd` then prints `UNSET`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ValueError {
    /// A `\` not followed by `s`, `n`, `t`, `r` or `\`.
    #[error("invalid escape sequence; only \\s, \\n, \\t, \\r and \\\\ are allowed")]
    BadEscape,
    /// The value is not UTF-8.
    #[error("value is not valid utf-8")]
    NotUtf8,
    /// Not `true`, `false`, `1` or `0` (case matters: `TRUE` is not a boolean for glib).
    #[error("not a boolean; glib accepts only true, false, 1 or 0 (lower case)")]
    NotBoolean,
}

/// A loaded key file: groups merged by exact name, each key's last value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyFile {
    groups: HashMap<Vec<u8>, HashMap<Vec<u8>, Vec<u8>>>,
}

impl KeyFile {
    /// Loads key-file bytes as `g_key_file_load_from_data` does.
    pub fn parse(bytes: &[u8]) -> Result<KeyFile, KeyFileError> {
        let mut file = KeyFile::default();
        let mut current: Option<Vec<u8>> = None;
        let mut lines = bytes.split(|&b| b == b'\n').peekable();
        let mut number = 0;
        while let Some(line) = lines.next() {
            number += 1;
            // The piece after the last newline is a line only if it is not empty.
            if lines.peek().is_none() && line.is_empty() {
                break;
            }
            // glib drops one `\r` before the newline, and nothing else at the end.
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let start = line
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(line.len());
            let line = &line[start..];
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            if let Some(name) = group_name(line) {
                if !is_group_name(name) {
                    return Err(KeyFileError::BadGroup { line: number });
                }
                file.groups.entry(name.to_vec()).or_default();
                current = Some(name.to_vec());
                continue;
            }
            let Some(eq) = line.iter().position(|&b| b == b'=') else {
                return Err(KeyFileError::Malformed { line: number });
            };
            let Some(group) = &current else {
                return Err(KeyFileError::NoGroup { line: number });
            };
            let key = trim_end_blank(&line[..eq]);
            if key.is_empty() {
                return Err(KeyFileError::Malformed { line: number });
            }
            if !is_key_name(key) {
                return Err(KeyFileError::BadKey { line: number });
            }
            let value = &line[eq + 1..];
            let value_start = value
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(value.len());
            let value = &value[value_start..];
            // glib copies the value with strndup, which stops at a NUL.
            let value = value.split(|&b| b == 0).next().unwrap_or_default();
            let group = file.groups.entry(group.clone()).or_default();
            // Last one wins, as g_key_file_add_key replaces the value.
            group.insert(key.to_vec(), value.to_vec());
        }
        Ok(file)
    }

    /// The raw value (`g_key_file_get_value`): no escape processing, trailing blanks kept.
    pub fn value(&self, group: &str, key: &str) -> Option<&[u8]> {
        self.groups
            .get(group.as_bytes())?
            .get(key.as_bytes())
            .map(Vec::as_slice)
    }

    /// The value with escapes processed (`g_key_file_get_string`): what
    /// `vmware-toolbox-cmd config get` prints.
    pub fn string(&self, group: &str, key: &str) -> Option<Result<String, ValueError>> {
        self.value(group, key).map(unescape)
    }

    /// The value as a glib boolean (`g_key_file_get_boolean`): `true`/`1` or `false`/`0`,
    /// trailing blanks ignored, nothing else.
    pub fn boolean(&self, group: &str, key: &str) -> Option<Result<bool, ValueError>> {
        self.value(group, key).map(|v| match trim_end_space(v) {
            b"true" | b"1" => Ok(true),
            b"false" | b"0" => Ok(false),
            _ => Err(ValueError::NotBoolean),
        })
    }
}

/// The name between `[` and the last `]` if the line is a group line: it starts with `[`,
/// has a `]`, and only spaces or tabs after the first `]`.
fn group_name(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(b"[")?;
    let close = rest.iter().position(|&b| b == b']')?;
    let after = &rest[close + 1..];
    after
        .iter()
        .all(|&b| b == b' ' || b == b'\t')
        .then_some(&rest[..close])
}

/// glib's `g_key_file_is_group_name`: not empty, no brackets, no control characters.
fn is_group_name(name: &[u8]) -> bool {
    !name.is_empty()
        && !name
            .iter()
            .any(|&b| b == b'[' || b == b']' || b.is_ascii_control())
}

/// glib's `g_key_file_is_key_name`: a name without `=`, `[`, `]`, not starting or ending
/// with a space, optionally followed by a `[locale]` of letters, digits and `-_.@`.
fn is_key_name(key: &[u8]) -> bool {
    let end = key
        .iter()
        .position(|&b| b == b'[' || b == b']')
        .unwrap_or(key.len());
    let name = &key[..end];
    if name.is_empty() || name[0] == b' ' || name[name.len() - 1] == b' ' {
        return false;
    }
    match &key[end..] {
        [] => true,
        [b'[', locale @ .., b']'] => locale.iter().all(|&b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'@') || b >= 0x80
        }),
        _ => false,
    }
}

/// Drops trailing spaces and tabs (what glib trims off a key).
fn trim_end_blank(s: &[u8]) -> &[u8] {
    let end = s
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |i| i + 1);
    &s[..end]
}

/// Drops trailing ASCII whitespace (what glib ignores after a boolean).
fn trim_end_space(s: &[u8]) -> &[u8] {
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &s[..end]
}

/// glib's string unescaping: `\s`, `\n`, `\t`, `\r`, `\\`; anything else after `\`, or a
/// `\` at the end, is an error; the result must be UTF-8.
fn unescape(raw: &[u8]) -> Result<String, ValueError> {
    let mut out = Vec::with_capacity(raw.len());
    let mut bytes = raw.iter();
    while let Some(&b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        out.push(match bytes.next() {
            Some(b's') => b' ',
            Some(b'n') => b'\n',
            Some(b't') => b'\t',
            Some(b'r') => b'\r',
            Some(b'\\') => b'\\',
            _ => return Err(ValueError::BadEscape),
        });
    }
    String::from_utf8(out).map_err(|_| ValueError::NotUtf8)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// What glib answers for `[deployPkg] enable-custom-scripts`: the load error, or the
    /// `get_string` and `get_boolean` results (`None` = key absent, `Err` = invalid value).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Want {
        /// The file does not load.
        LoadError,
        /// get_string, get_boolean.
        Loaded(Option<Result<&'static str, ()>>, Option<Result<bool, ()>>),
    }

    use Want::{LoadError, Loaded};

    const UNSET: Want = Loaded(None, None);

    /// One row per glib rule; [`cases_match_glib`] checks every row against glib.
    pub(crate) const CASES: &[(&str, &str, Want)] = &[
        ("plain", "[deployPkg]\nenable-custom-scripts = true\n", Loaded(Some(Ok("true")), Some(Ok(true)))),
        ("last duplicate wins", "[deployPkg]\nenable-custom-scripts = true\nenable-custom-scripts = false\n", Loaded(Some(Ok("false")), Some(Ok(false)))),
        ("repeated group is merged, last wins", "[deployPkg]\nenable-custom-scripts = true\n[x]\n[deployPkg]\nenable-custom-scripts = false\n", Loaded(Some(Ok("false")), Some(Ok(false)))),
        ("spaces inside brackets make another group", "[ deployPkg ]\nenable-custom-scripts = true\n", UNSET),
        ("group names are case-sensitive", "[deploypkg]\nenable-custom-scripts = true\n", UNSET),
        ("key names are case-sensitive", "[deployPkg]\nEnable-Custom-Scripts = true\n", UNSET),
        ("TRUE is a string, not a boolean", "[deployPkg]\nenable-custom-scripts = TRUE\n", Loaded(Some(Ok("TRUE")), Some(Err(())))),
        ("True is not a boolean either", "[deployPkg]\nenable-custom-scripts = True\n", Loaded(Some(Ok("True")), Some(Err(())))),
        ("1 is a boolean", "[deployPkg]\nenable-custom-scripts = 1\n", Loaded(Some(Ok("1")), Some(Ok(true)))),
        ("0 is a boolean", "[deployPkg]\nenable-custom-scripts=0\n", Loaded(Some(Ok("0")), Some(Ok(false)))),
        ("yes is not a boolean", "[deployPkg]\nenable-custom-scripts = yes\n", Loaded(Some(Ok("yes")), Some(Err(())))),
        ("blanks around = and before the key", "[deployPkg]\n  enable-custom-scripts \t=  true\n", Loaded(Some(Ok("true")), Some(Ok(true)))),
        ("trailing blanks stay in the string", "[deployPkg]\nenable-custom-scripts = true  \t\n", Loaded(Some(Ok("true  \t")), Some(Ok(true)))),
        ("crlf line ends", "[deployPkg]\r\nenable-custom-scripts = true\r\n", Loaded(Some(Ok("true")), Some(Ok(true)))),
        ("indented group", "  [deployPkg]  \nenable-custom-scripts = true\n", Loaded(Some(Ok("true")), Some(Ok(true)))),
        ("hash comments, also indented", "# c\n[deployPkg]\n   # enable-custom-scripts = false\nenable-custom-scripts = true\n", Loaded(Some(Ok("true")), Some(Ok(true)))),
        ("no inline comments", "[deployPkg]\nenable-custom-scripts = true # on\n", Loaded(Some(Ok("true # on")), Some(Err(())))),
        ("semicolon is no comment", "; c\n[deployPkg]\nenable-custom-scripts = true\n", LoadError),
        ("a bom breaks the file", "\u{feff}[deployPkg]\nenable-custom-scripts = true\n", LoadError),
        ("key before a group", "enable-custom-scripts = true\n[deployPkg]\n", LoadError),
        ("line without =", "[deployPkg]\nthis is not a pair\nenable-custom-scripts = true\n", LoadError),
        ("junk after the group", "[deployPkg] x\nenable-custom-scripts = true\n", LoadError),
        ("bracket inside a group name", "[deploy]Pkg]\nenable-custom-scripts = true\n", LoadError),
        ("empty group name", "[]\nenable-custom-scripts = true\n", LoadError),
        ("empty key", "[deployPkg]\n= true\n", LoadError),
        ("bracket in a key", "[deployPkg]\nena]ble = true\n", LoadError),
        ("locale keys are other keys", "[deployPkg]\nenable-custom-scripts[de] = true\n", UNSET),
        ("spaces inside a key", "[deployPkg]\nenable custom scripts = true\n", UNSET),
        ("quotes are kept", "[deployPkg]\nenable-custom-scripts = \"true\"\n", Loaded(Some(Ok("\"true\"")), Some(Err(())))),
        ("empty value", "[deployPkg]\nenable-custom-scripts =\n", Loaded(Some(Ok("")), Some(Err(())))),
        ("escaped space", "[deployPkg]\nenable-custom-scripts = \\strue\n", Loaded(Some(Ok(" true")), Some(Err(())))),
        ("bad escape", "[deployPkg]\nenable-custom-scripts = tr\\ue\n", Loaded(Some(Err(())), Some(Err(())))),
        ("trailing backslash", "[deployPkg]\nenable-custom-scripts = true\\\n", Loaded(Some(Err(())), Some(Err(())))),
        ("no final newline", "[deployPkg]\nenable-custom-scripts = false", Loaded(Some(Ok("false")), Some(Ok(false)))),
        ("empty file", "", UNSET),
    ];

    /// What this reader answers for `text`, in the form of [`Want`].
    pub(crate) fn answer(text: &str) -> Want {
        match KeyFile::parse(text.as_bytes()) {
            Err(_) => LoadError,
            Ok(file) => {
                let s = file
                    .string("deployPkg", "enable-custom-scripts")
                    .map(|r| r.map(|s| &*s.leak()).map_err(|_| ()));
                let b = file
                    .boolean("deployPkg", "enable-custom-scripts")
                    .map(|r| r.map_err(|_| ()));
                Loaded(s, b)
            }
        }
    }

    #[test]
    fn every_case_reads_as_glib_reads_it() {
        for (name, text, want) in CASES {
            assert_eq!(answer(text), *want, "{name}: {text:?}");
        }
    }
}

/// Asks glib itself (python3-gi) about every row of the table, so that the table cannot
/// drift from what open-vm-tools really does. Without python3-gi the test fails, naming the
/// package (the tests' rule for a missing tool, docs/testing.md).
#[cfg(test)]
mod glib_cross_check {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use super::tests::{Want, CASES};

    const PROBE: &str = r#"
import json, sys
from gi.repository import GLib
for text in json.load(sys.stdin):
    kf = GLib.KeyFile()
    try:
        kf.load_from_bytes(GLib.Bytes.new(text.encode()), GLib.KeyFileFlags.NONE)
    except GLib.Error:
        print(json.dumps("load-error")); continue
    out = []
    for get in (kf.get_string, kf.get_boolean):
        try:
            out.append({"ok": get("deployPkg", "enable-custom-scripts")})
        except GLib.Error as e:
            out.append(None if e.code in (GLib.KeyFileError.GROUP_NOT_FOUND, GLib.KeyFileError.KEY_NOT_FOUND) else {"err": True})
    print(json.dumps(out))
"#;

    fn python_with_gi() -> Option<&'static str> {
        ["python3", "/usr/bin/python3"].into_iter().find(|py| {
            Command::new(py)
                .args(["-c", "from gi.repository import GLib"])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    }

    fn as_json(want: Want) -> serde_json::Value {
        use serde_json::json;
        match want {
            Want::LoadError => json!("load-error"),
            Want::Loaded(s, b) => json!([
                s.map(|r| r.map_or(json!({"err": true}), |v| json!({"ok": v}))),
                b.map(|r| r.map_or(json!({"err": true}), |v| json!({"ok": v}))),
            ]),
        }
    }

    #[test]
    fn cases_match_glib() {
        let python = python_with_gi().expect(
            "python3 cannot import gi.repository.GLib; install the Debian packages python3-gi \
             and gir1.2-glib-2.0 (scripts/test-packages.txt)",
        );
        let mut child = Command::new(python)
            .args(["-c", PROBE])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let texts: Vec<&str> = CASES.iter().map(|(_, text, _)| *text).collect();
        let input = serde_json::to_vec(&texts).unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let answers: Vec<serde_json::Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(answers.len(), CASES.len());
        for ((name, text, want), glib) in CASES.iter().zip(answers) {
            assert_eq!(
                as_json(*want),
                glib,
                "glib disagrees with the row {name}: {text:?}"
            );
        }
    }
}
