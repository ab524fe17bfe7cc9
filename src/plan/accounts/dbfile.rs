//! The one editor and writer of the `:`-separated account files (`/etc/passwd`,
//! `/etc/shadow`, `/etc/group`, `/etc/gshadow`): lines are kept byte for byte unless a
//! field of theirs changes, new lines are appended as `useradd`/`groupadd` append them, and
//! a field that would break the format (a `:`, a newline, any control character) is refused.

use zeroize::Zeroize;

/// A field value the format cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: a value for a new or changed line holds ':' or a control character")]
pub struct BadField {
    /// The file.
    pub file: &'static str,
}

/// One account file being edited.
pub struct DbEdit {
    file: &'static str,
    lines: Vec<Vec<u8>>,
    /// The original ended without a newline (appending adds one first).
    ends_open: bool,
    changed: bool,
}

impl Drop for DbEdit {
    fn drop(&mut self) {
        // Shadow lines hold hashes.
        for l in &mut self.lines {
            l.zeroize();
        }
    }
}

fn check(file: &'static str, field: &[u8]) -> Result<(), BadField> {
    if field.iter().any(|&b| b == b':' || b < 0x20 || b == 0x7f) {
        Err(BadField { file })
    } else {
        Ok(())
    }
}

impl DbEdit {
    /// Starts editing `contents` of `file`.
    pub fn new(file: &'static str, contents: &[u8]) -> DbEdit {
        let ends_open = !contents.is_empty() && !contents.ends_with(b"\n");
        DbEdit {
            file,
            lines: contents
                .split_inclusive(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect(),
            ends_open,
            changed: false,
        }
    }

    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.changed
    }

    fn body(line: &[u8]) -> &[u8] {
        line.strip_suffix(b"\n").unwrap_or(line)
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.lines.iter().position(|l| {
            let body = Self::body(l);
            body.split(|&b| b == b':').next() == Some(name.as_bytes()) && body.contains(&b':')
        })
    }

    /// Whether a line for `name` exists.
    pub fn has(&self, name: &str) -> bool {
        self.index(name).is_some()
    }

    /// Field `i` of `name`'s line (empty if the line is short); `None` without a line.
    pub fn field(&self, name: &str, i: usize) -> Option<String> {
        let line = &self.lines[self.index(name)?];
        Some(
            Self::body(line)
                .split(|&b| b == b':')
                .nth(i)
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .unwrap_or_default(),
        )
    }

    /// Sets field `i` of `name`'s line (padding a short line with empty fields); no-op when
    /// it already holds `value`. Returns whether the line exists.
    pub fn set_field(&mut self, name: &str, i: usize, value: &str) -> Result<bool, BadField> {
        check(self.file, value.as_bytes())?;
        let Some(at) = self.index(name) else {
            return Ok(false);
        };
        if self.field(name, i).as_deref() == Some(value) {
            return Ok(true);
        }
        let line = &mut self.lines[at];
        let newline = line.ends_with(b"\n");
        let mut fields: Vec<Vec<u8>> = Self::body(line)
            .split(|&b| b == b':')
            .map(<[u8]>::to_vec)
            .collect();
        if fields.len() <= i {
            fields.resize(i + 1, Vec::new());
        }
        fields[i].zeroize();
        fields[i] = value.as_bytes().to_vec();
        let mut bytes = fields.join(&b':');
        for f in &mut fields {
            f.zeroize();
        }
        if newline {
            bytes.push(b'\n');
        }
        line.zeroize();
        *line = bytes;
        self.changed = true;
        Ok(true)
    }

    /// Appends a line of `fields` at the end, as `useradd` does.
    pub fn append(&mut self, fields: &[&str]) -> Result<(), BadField> {
        for f in fields {
            check(self.file, f.as_bytes())?;
        }
        if self.ends_open {
            if let Some(last) = self.lines.last_mut() {
                last.push(b'\n');
            }
            self.ends_open = false;
        }
        let mut line = fields.join(":").into_bytes();
        line.push(b'\n');
        self.lines.push(line);
        self.changed = true;
        Ok(())
    }

    /// Adds `member` to the comma-separated list in field `i` of group `name` (unless it is
    /// there), as `usermod -a -G` does. Returns whether the group exists.
    pub fn add_member(&mut self, name: &str, i: usize, member: &str) -> Result<bool, BadField> {
        let Some(current) = self.field(name, i) else {
            return Ok(false);
        };
        if current.split(',').any(|m| m == member) {
            return Ok(true);
        }
        let value = if current.is_empty() {
            member.to_string()
        } else {
            format!("{current},{member}")
        };
        self.set_field(name, i, &value)
    }

    /// The file's new bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.lines.concat()
    }

    /// The names of every entry (comments and `+`/`-` NIS lines aside).
    pub fn names(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter_map(|l| {
                let body = Self::body(l);
                let name = body.split(|&b| b == b':').next()?;
                (body.contains(&b':') && !name.is_empty() && !name.starts_with(b"#"))
                    .then(|| String::from_utf8_lossy(name).into_owned())
            })
            .collect()
    }

    /// Numeric field `i` of every entry that has one (uids of passwd, gids of group).
    pub fn numbers(&self, i: usize) -> Vec<u32> {
        self.names()
            .iter()
            .filter_map(|n| self.field(n, i)?.parse().ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_lines_stay_byte_for_byte() {
        let text = b"# comment\nroot:x:0:\n+nis\nsudo:x:27:\r\nadm:x:4:a,b";
        let mut e = DbEdit::new("/etc/group", text);
        assert!(e.add_member("adm", 3, "c").unwrap());
        assert!(e.add_member("adm", 3, "a").unwrap());
        e.append(&["alice", "x", "1000", ""]).unwrap();
        assert_eq!(
            e.bytes(),
            b"# comment\nroot:x:0:\n+nis\nsudo:x:27:\r\nadm:x:4:a,b,c\nalice:x:1000:\n"
        );
        assert!(!e.add_member("nope", 3, "c").unwrap());
    }

    #[test]
    fn unchanged_when_nothing_differs() {
        let mut e = DbEdit::new("/etc/group", b"sudo:x:27:alice\n");
        e.add_member("sudo", 3, "alice").unwrap();
        e.set_field("sudo", 2, "27").unwrap();
        assert!(!e.changed());
    }

    #[test]
    fn the_writer_refuses_what_breaks_the_format() {
        let mut e = DbEdit::new("/etc/passwd", b"");
        for bad in ["a:b", "a\nb", "a\0", "\x7f"] {
            assert_eq!(
                e.append(&["x", bad]),
                Err(BadField {
                    file: "/etc/passwd"
                })
            );
            assert!(e.set_field("x", 1, bad).is_err());
        }
        assert!(!e.changed());
    }

    #[test]
    fn short_lines_are_padded_when_set() {
        let mut e = DbEdit::new("/etc/shadow", b"root:*\n");
        e.set_field("root", 2, "0").unwrap();
        assert_eq!(e.bytes(), b"root:*:0\n");
        assert_eq!(e.field("root", 7).as_deref(), Some(""));
        assert_eq!(e.numbers(2), vec![0]);
    }
}
