//! Strict reader for the INI dialect of `cust.cfg` (Python ConfigParser rules as cloud-init uses them).
//!
//! The reader only splits the file into sections and `key = value` entries, each with its 1-based line
//! number. It never interprets values; that is the job of [`crate::Spec`]. See `docs/imc-reader.md`.

use std::collections::BTreeMap;
use std::fmt;

use thiserror::Error;
use zeroize::Zeroize;

use crate::secret::is_secret_key;

/// A problem that stops the file from being read at all. Never contains a value or the text of a line,
/// because any line could hold a password.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadError {
    /// The line is not valid UTF-8.
    #[error("line {line}: not valid UTF-8; cust.cfg must be UTF-8 text")]
    NotUtf8 {
        /// 1-based line number.
        line: usize,
    },
    /// A key/value line appears before the first `[SECTION]` header.
    #[error("line {line}: text before the first [SECTION] header")]
    BeforeFirstSection {
        /// 1-based line number.
        line: usize,
    },
    /// An indented line, which ConfigParser would glue onto the previous value.
    #[error(
        "line {line}: indented line; continuation lines are not supported, remove the leading whitespace"
    )]
    Continuation {
        /// 1-based line number.
        line: usize,
    },
    /// A line that is neither a header, an option, a comment nor blank.
    #[error("line {line}: not a [SECTION] header, a `key = value` or `key: value` option, a # or ; comment, or a blank line")]
    Malformed {
        /// 1-based line number.
        line: usize,
    },
    /// The same section header appears twice.
    #[error("line {line}: duplicate section [{section}] (first at line {first_line})")]
    DuplicateSection {
        /// Section name.
        section: String,
        /// Line of the first header.
        first_line: usize,
        /// Line of the repeated header.
        line: usize,
    },
    /// The same key appears twice (within a section, or as the same flat `SECTION|KEY`).
    #[error("line {line}: duplicate key {key} in [{section}] (first at line {first_line})")]
    DuplicateKey {
        /// Section of the repeated key.
        section: String,
        /// Key name as written.
        key: String,
        /// Line of the first occurrence.
        first_line: usize,
        /// Line of the repeated occurrence.
        line: usize,
    },
}

/// One `key = value` entry of the file.
#[derive(Clone, PartialEq, Eq)]
pub struct RawEntry {
    /// Section the entry belongs to, as written (case-sensitive).
    pub section: String,
    /// Key as written, trimmed (may contain `|`, e.g. `IPv6ADDR|1`).
    pub key: String,
    /// Value, trimmed; no quote, escape or `%` processing.
    pub value: String,
    /// 1-based line number.
    pub line: usize,
}

impl RawEntry {
    /// The flat key `SECTION|KEY` under which cloud-init looks the entry up.
    pub fn flat_key(&self) -> String {
        format!("{}|{}", self.section, self.key)
    }

    /// Whether the value is secret (flat key starts with `-` or contains `|-`) and must never be shown.
    pub fn is_secret(&self) -> bool {
        // The same rule as `is_secret_key(&self.flat_key())`, without building the flat key.
        is_secret_key(&self.section) || self.key.starts_with('-') || self.key.contains("|-")
    }
}

impl fmt::Debug for RawEntry {
    // Hand-written so that `{:?}` of a RawSpec can never print a password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RawEntry");
        d.field("section", &self.section).field("key", &self.key);
        if self.is_secret() {
            d.field("value", &format_args!("<redacted>"));
        } else {
            d.field("value", &self.value);
        }
        d.field("line", &self.line).finish()
    }
}

impl Drop for RawEntry {
    // The raw (base64) password must not outlive the spec in memory either. Wiping every
    // value is cheaper than deciding which ones are secret.
    fn drop(&mut self) {
        self.value.zeroize();
    }
}

/// A `[SECTION]` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawSection {
    /// Section name, trimmed, case-sensitive.
    pub name: String,
    /// 1-based line number of the header.
    pub line: usize,
}

/// The whole file: sections and entries in file order, entries reachable by flat key.
#[derive(Debug, Clone, Default)]
pub struct RawSpec {
    sections: Vec<RawSection>,
    entries: Vec<RawEntry>,
    by_flat_key: BTreeMap<String, usize>,
}

/// What one trimmed line is.
enum Line<'a> {
    Blank,
    Header(&'a str),
    Option(&'a str, &'a str),
}

impl RawSpec {
    /// Reads `cust.cfg` bytes. Tolerates a UTF-8 BOM and CRLF line ends; everything else that
    /// ConfigParser would reject, and continuation lines, is an error naming the line.
    pub fn parse(bytes: &[u8]) -> Result<RawSpec, ReadError> {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let mut spec = RawSpec::default();
        let mut current: Option<usize> = None;
        for (index, raw_line) in bytes.split(|b| *b == b'\n').enumerate() {
            let line = index + 1;
            let raw_line = raw_line.strip_suffix(b"\r").unwrap_or(raw_line);
            let text = std::str::from_utf8(raw_line).map_err(|_| ReadError::NotUtf8 { line })?;
            match classify(text, line)? {
                Line::Blank => {}
                Line::Header(name) => current = Some(spec.add_section(name, line)?),
                Line::Option(key, value) => {
                    let section = current.ok_or(ReadError::BeforeFirstSection { line })?;
                    spec.add_entry(section, key, value, line)?;
                }
            }
        }
        Ok(spec)
    }

    fn add_section(&mut self, name: &str, line: usize) -> Result<usize, ReadError> {
        if let Some(first) = self.sections.iter().find(|s| s.name == name) {
            return Err(ReadError::DuplicateSection {
                section: name.to_owned(),
                first_line: first.line,
                line,
            });
        }
        self.sections.push(RawSection {
            name: name.to_owned(),
            line,
        });
        Ok(self.sections.len() - 1)
    }

    fn add_entry(
        &mut self,
        section: usize,
        key: &str,
        value: &str,
        line: usize,
    ) -> Result<(), ReadError> {
        let entry = RawEntry {
            section: self.sections[section].name.clone(),
            key: key.to_owned(),
            value: value.to_owned(),
            line,
        };
        // Checking the flat key also catches `[A] B|C` against `[A|B] C`, which cloud-init would
        // silently merge into one `A|B|C`.
        let flat = entry.flat_key();
        if let Some(&first) = self.by_flat_key.get(&flat) {
            return Err(ReadError::DuplicateKey {
                section: entry.section.clone(),
                key: entry.key.clone(),
                first_line: self.entries[first].line,
                line,
            });
        }
        self.by_flat_key.insert(flat, self.entries.len());
        self.entries.push(entry);
        Ok(())
    }

    /// Looks up `key` in `section` without building the flat key (the hot path of validation).
    pub fn get_in(&self, section: &str, key: &str) -> Option<&RawEntry> {
        self.entries
            .iter()
            .find(|e| e.key == key && e.section == section)
    }

    /// Looks up an entry by flat key, e.g. `DNS|NAMESERVER|1` or `NIC1|IPv6ADDR|2`.
    pub fn get(&self, flat_key: &str) -> Option<&RawEntry> {
        self.by_flat_key.get(flat_key).map(|&i| &self.entries[i])
    }

    /// All entries in file order.
    pub fn entries(&self) -> impl Iterator<Item = &RawEntry> {
        self.entries.iter()
    }

    /// The entries of one section, in file order.
    pub fn section_entries<'s, 'n>(
        &'s self,
        section: &'n str,
    ) -> impl Iterator<Item = &'s RawEntry> + use<'s, 'n> {
        self.entries.iter().filter(move |e| e.section == section)
    }

    /// All section headers in file order.
    pub fn sections(&self) -> &[RawSection] {
        &self.sections
    }

    /// The header of a section, if present.
    pub fn section(&self, name: &str) -> Option<&RawSection> {
        self.sections.iter().find(|s| s.name == name)
    }
}

fn classify(text: &str, line: usize) -> Result<Line<'_>, ReadError> {
    let trimmed = text.trim();
    // ConfigParser strips the line before looking for comment prefixes, so indented comments are
    // comments too.
    if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
        return Ok(Line::Blank);
    }
    if text.starts_with(char::is_whitespace) {
        return Err(ReadError::Continuation { line });
    }
    if let Some(inner) = trimmed.strip_prefix('[') {
        let name = inner
            .strip_suffix(']')
            .map(str::trim)
            .filter(|n| !n.is_empty() && !n.contains(['[', ']']))
            .ok_or(ReadError::Malformed { line })?;
        return Ok(Line::Header(name));
    }
    let split = trimmed
        .find(['=', ':'])
        .ok_or(ReadError::Malformed { line })?;
    let key = trimmed[..split].trim();
    // Stricter than ConfigParser: no whitespace inside a key. Without this, `-PASS c2Vj=` (missing
    // delimiter, `=` from the base64 padding) would become a key holding the password, and key names
    // are shown in messages.
    if key.is_empty() || key.contains(char::is_whitespace) {
        return Err(ReadError::Malformed { line });
    }
    Ok(Line::Option(key, trimmed[split + 1..].trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_keys_keep_pipes_in_option_names() {
        let raw = RawSpec::parse(b"[NIC1]\nIPv6ADDR|2 = fc00::1\n").unwrap();
        let e = raw.get("NIC1|IPv6ADDR|2").unwrap();
        assert_eq!((e.value.as_str(), e.line), ("fc00::1", 2));
    }

    #[test]
    fn debug_redacts_secret_entries() {
        let raw = RawSpec::parse(b"[PASSWORD]\n-PASS = c2VjcmV0\n").unwrap();
        let text = format!("{raw:?}");
        assert!(!text.contains("c2VjcmV0"), "{text}");
        assert!(text.contains("<redacted>"));
    }
}
