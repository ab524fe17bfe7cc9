//! Strict reader for the INI dialect of `cust.cfg` (Python ConfigParser rules as cloud-init uses them).
//!
//! The reader only splits the file into sections and `key = value` entries, each with its 1-based line
//! number. It never interprets values; that is the job of [`crate::Spec`]. See `docs/imc-reader.md`.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use thiserror::Error;
use zeroize::Zeroize;

use crate::limits::Limits;
use crate::secret::{is_secret_key, is_secret_section};
use crate::shown;

/// A problem that stops the file from being read at all. Never contains a value or the text of a line,
/// because any line could hold a password.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadError {
    /// The file is larger than the size cap ([`crate::MAX_CUST_CFG_BYTES`] by default).
    #[error("cust.cfg is {size} bytes, more than the {max} bytes a customization spec may have")]
    TooLarge {
        /// Size of the input.
        size: u64,
        /// The cap.
        max: u64,
    },
    /// The file has no section and no entry: blank, comments only, or truncated to nothing.
    #[error("cust.cfg is empty (no [SECTION] and no key); a truncated hand-over looks like this, so nothing is applied")]
    Empty,
    /// More section headers than the cap ([`crate::MAX_SECTIONS`] by default).
    #[error("line {line}: more than {max} sections; a customization spec has a few dozen at most")]
    TooManySections {
        /// 1-based line of the first header over the cap.
        line: usize,
        /// The cap.
        max: usize,
    },
    /// More entries than the cap ([`crate::MAX_ENTRIES`] by default).
    #[error("line {line}: more than {max} keys; a customization spec has a few hundred at most")]
    TooManyEntries {
        /// 1-based line of the first entry over the cap.
        line: usize,
        /// The cap.
        max: usize,
    },
    /// A key that starts like `-PASS` but is not `-PASS`: the delimiter after it is missing or
    /// replaced, so the rest of the "key" is most likely the password. Neither is shown.
    #[error("line {line}: malformed password key (not shown); write -PASS = <base64 password> with = or : right after -PASS")]
    MalformedSecretKey {
        /// 1-based line.
        line: usize,
    },
    /// A key or section name with a control or invisible character (NUL, zero-width space,
    /// BOM, ...), which would look right on screen and still not match. The name is not shown.
    #[error("line {line}: key or section name with a control or invisible character (not shown); retype the name")]
    InvisibleCharacter {
        /// 1-based line.
        line: usize,
    },
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
    #[error("line {line}: duplicate section [{}] (first at line {first_line})", shown::name(.section))]
    DuplicateSection {
        /// Section name.
        section: String,
        /// Line of the first header.
        first_line: usize,
        /// Line of the repeated header.
        line: usize,
    },
    /// The same key appears twice (within a section, or as the same flat `SECTION|KEY`).
    #[error("line {line}: duplicate key {} in [{}] (first at line {first_line})", shown::name(.key), shown::name(.section))]
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
    /// Section the entry belongs to, as written (case-sensitive). Shared by all entries of the
    /// section, so that reading a file allocates each section name once.
    pub section: Arc<str>,
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

    /// Whether the flat key `SECTION|KEY` is `flat_key`, without building it.
    fn has_flat_key(&self, flat_key: &str) -> bool {
        flat_key.len() == self.section.len() + 1 + self.key.len()
            && flat_key.starts_with(&*self.section)
            && flat_key[self.section.len()..].starts_with('|')
            && flat_key.ends_with(self.key.as_str())
    }

    /// Orders entries as their flat keys `SECTION|KEY` would sort, without building them.
    fn cmp_flat_key(&self, other: &RawEntry) -> Ordering {
        let (a, b) = (self.section.as_bytes(), other.section.as_bytes());
        let common = a.len().min(b.len());
        match a[..common].cmp(&b[..common]) {
            // Same `SECTION|` prefix: the keys decide.
            Ordering::Equal if a.len() == b.len() => self.key.cmp(&other.key),
            // One section name is a prefix of the other (`A` and `A|B`): rare, go byte by byte.
            Ordering::Equal => flat_key_bytes(self).cmp(flat_key_bytes(other)),
            // The section names differ early, and so do the flat keys, in the same order.
            decided => decided,
        }
    }

    /// Whether the value is secret (flat key starts with `-` or contains `|-`, or the entry is in
    /// `[PASSWORD]`) and must never be shown.
    pub fn is_secret(&self) -> bool {
        // The same rule as `is_secret_key(&self.flat_key())`, without building the flat key: the
        // `|` joining the two parts makes a key starting with `-` secret too.
        is_secret_key(&self.section) || is_secret_key(&self.key) || is_secret_section(&self.section)
    }
}

/// The bytes of `SECTION|KEY`, one by one.
fn flat_key_bytes(e: &RawEntry) -> impl Iterator<Item = u8> + '_ {
    let (section, key) = (e.section.as_bytes(), e.key.as_bytes());
    section.iter().chain(b"|").chain(key).copied()
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
    // The raw (base64) password must not outlive the spec in memory either. Only secret values
    // are wiped: `is_secret` is a few byte comparisons, wiping is a volatile write per byte.
    fn drop(&mut self) {
        if self.is_secret() {
            self.value.zeroize();
        }
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

/// The whole file: sections and entries in file order.
#[derive(Debug, Clone)]
pub struct RawSpec {
    sections: Vec<RawSection>,
    /// Parallel to `sections`: where each section's entries are in `entries`. A section cannot
    /// repeat, so its entries are contiguous, and lookups only scan the one section.
    spans: Vec<Range<usize>>,
    /// Section name to its index in `sections`, so that no lookup scans all sections (a file
    /// with many sections would otherwise be read in quadratic time).
    index: HashMap<String, usize>,
    entries: Vec<RawEntry>,
    limits: Limits,
}

/// What one trimmed line is.
enum Line<'a> {
    Blank,
    Header(&'a str),
    Option(&'a str, &'a str),
}

impl RawSpec {
    /// Reads `cust.cfg` bytes. Tolerates a UTF-8 BOM and CRLF line ends; everything else that
    /// ConfigParser would reject, and continuation lines, is an error naming the line. The
    /// caps of [`Limits::default`] apply; an empty file is an error.
    pub fn parse(bytes: &[u8]) -> Result<RawSpec, ReadError> {
        RawSpec::parse_with(bytes, Limits::default())
    }

    /// [`RawSpec::parse`] with other caps. Time and memory are linear in the input.
    pub fn parse_with(bytes: &[u8], limits: Limits) -> Result<RawSpec, ReadError> {
        let size = bytes.len() as u64;
        if size > limits.max_bytes {
            let max = limits.max_bytes;
            return Err(ReadError::TooLarge { size, max });
        }
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let (text, bad_line) = valid_lines(bytes);
        let mut spec = RawSpec {
            sections: Vec::new(),
            spans: Vec::new(),
            index: HashMap::new(),
            entries: Vec::new(),
            limits,
        };
        let mut current: Option<usize> = None;
        // Duplicate keys are found after the fact; one before the line of another error is the
        // first error in the file, so it wins, as if it had been found on the way.
        for (index, text) in text.split('\n').enumerate() {
            let line = index + 1;
            if let Err(error) = spec.read_line(text, line, &mut current) {
                return Err(spec.first_duplicate_key().unwrap_or(error));
            }
        }
        if let Some(line) = bad_line {
            return Err(spec
                .first_duplicate_key()
                .unwrap_or(ReadError::NotUtf8 { line }));
        }
        match spec.first_duplicate_key() {
            Some(error) => Err(error),
            None if spec.sections.is_empty() => Err(ReadError::Empty),
            None => Ok(spec),
        }
    }

    fn read_line(
        &mut self,
        text: &str,
        line: usize,
        current: &mut Option<usize>,
    ) -> Result<(), ReadError> {
        let text = text.strip_suffix('\r').unwrap_or(text);
        match classify(text, line)? {
            Line::Blank => {}
            Line::Header(name) => *current = Some(self.add_section(name, line)?),
            Line::Option(key, value) => {
                let section = current.ok_or(ReadError::BeforeFirstSection { line })?;
                if self.entries.len() >= self.limits.max_entries {
                    let max = self.limits.max_entries;
                    return Err(ReadError::TooManyEntries { line, max });
                }
                self.add_entry(section, key, value, line);
            }
        }
        Ok(())
    }

    fn add_section(&mut self, name: &str, line: usize) -> Result<usize, ReadError> {
        if let Some(&first) = self.index.get(name) {
            return Err(ReadError::DuplicateSection {
                section: name.to_owned(),
                first_line: self.sections[first].line,
                line,
            });
        }
        if self.sections.len() >= self.limits.max_sections {
            let max = self.limits.max_sections;
            return Err(ReadError::TooManySections { line, max });
        }
        self.index.insert(name.to_owned(), self.sections.len());
        self.sections.push(RawSection {
            name: name.to_owned(),
            line,
        });
        self.spans.push(self.entries.len()..self.entries.len());
        Ok(self.sections.len() - 1)
    }

    /// Appends an entry to `section`, which is always the last section read.
    fn add_entry(&mut self, section: usize, key: &str, value: &str, line: usize) {
        let shared_name = if self.spans[section].is_empty() {
            Arc::from(self.sections[section].name.as_str())
        } else {
            self.entries[self.entries.len() - 1].section.clone()
        };
        self.entries.push(RawEntry {
            section: shared_name,
            key: key.to_owned(),
            value: value.to_owned(),
            line,
        });
        self.spans[section].end = self.entries.len();
    }

    /// The duplicate flat key whose repetition comes first in the file, if any.
    ///
    /// Comparing flat keys also catches `[A] B|C` against `[A|B] C`, which cloud-init would
    /// silently merge into one `A|B|C`. Sorting entry indexes by flat key puts equal keys next
    /// to each other (in file order, the sort is stable), so no flat key string is ever built.
    fn first_duplicate_key(&self) -> Option<ReadError> {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        if self.sections.iter().any(|s| s.name.contains('|')) {
            order.sort_by(|&a, &b| self.entries[a].cmp_flat_key(&self.entries[b]));
        } else {
            // Without `|` in section names, a flat key's section is all before its first `|`,
            // so equal flat keys are in the same section: sorting each section (a contiguous
            // span of entries) by key on its own is enough, and cheaper.
            for span in &self.spans {
                order[span.clone()].sort_by(|&a, &b| self.entries[a].key.cmp(&self.entries[b].key));
            }
        }
        let (first, repeat) = order
            .windows(2)
            .map(|pair| (&self.entries[pair[0]], &self.entries[pair[1]]))
            .filter(|(a, b)| a.cmp_flat_key(b) == Ordering::Equal)
            .min_by_key(|(_, repeat)| repeat.line)?;
        Some(ReadError::DuplicateKey {
            section: repeat.section.to_string(),
            key: repeat.key.clone(),
            first_line: first.line,
            line: repeat.line,
        })
    }

    /// Looks up `key` in `section` without building the flat key (the hot path of validation).
    pub fn get_in(&self, section: &str, key: &str) -> Option<&RawEntry> {
        self.section_entries(section).find(|e| e.key == key)
    }

    /// Looks up an entry by flat key, e.g. `DNS|NAMESERVER|1` or `NIC1|IPv6ADDR|2`.
    pub fn get(&self, flat_key: &str) -> Option<&RawEntry> {
        // Each `|` could end the section name (`[A] B|C` and `[A|B] C` are both `A|B|C`); the
        // duplicate check guarantees at most one of them exists. Lookups are by section, so a
        // big file is not scanned once per key.
        flat_key
            .match_indices('|')
            .filter_map(|(at, _)| self.get_in(&flat_key[..at], &flat_key[at + 1..]))
            .find(|e| e.has_flat_key(flat_key))
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
        let span = self
            .index
            .get(section)
            .map_or(0..0, |&i| self.spans[i].clone());
        self.entries[span].iter()
    }

    /// All section headers in file order.
    pub fn sections(&self) -> &[RawSection] {
        &self.sections
    }

    /// The header of a section, if present.
    pub fn section(&self, name: &str) -> Option<&RawSection> {
        self.index.get(name).map(|&i| &self.sections[i])
    }
}

/// The file as text up to the first line that is not UTF-8, and that line's number if any.
///
/// Checking the whole file at once is cheaper than line by line. The lines before a bad one
/// are still read, because an error on one of them comes first in the file.
fn valid_lines(bytes: &[u8]) -> (&str, Option<usize>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let bad_line = valid[..line_start].iter().filter(|&&b| b == b'\n').count() + 1;
            // Up to `valid_up_to` the bytes are UTF-8, so this prefix of them is too.
            let text = std::str::from_utf8(&valid[..line_start]).unwrap_or_default();
            (text, Some(bad_line))
        }
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
        if name.contains(is_invisible) {
            return Err(ReadError::InvisibleCharacter { line });
        }
        return Ok(Line::Header(name));
    }
    let split = trimmed
        .find(['=', ':'])
        .ok_or(ReadError::Malformed { line })?;
    // `trimmed` has no outer whitespace, so the key needs trimming at its end only, the value
    // at its start only.
    let key = trimmed[..split].trim_end();
    // Stricter than ConfigParser: no whitespace inside a key. Without this, `-PASS c2Vj=` (missing
    // delimiter, `=` from the base64 padding) would become a key holding the password, and key names
    // are shown in messages.
    if key.is_empty() || key.contains(char::is_whitespace) {
        return Err(ReadError::Malformed { line });
    }
    // A password key whose delimiter is missing or replaced (`-PASSc2Vj=`, `-PASS;c2Vj=`,
    // `-PASS\0c2Vj=`) would hold the password in its name, and names are shown. Refused
    // before it is ever stored or shown, and before the control-character check (which would
    // be right too, but this message says what to fix).
    if is_malformed_password_key(key) {
        return Err(ReadError::MalformedSecretKey { line });
    }
    if key.contains(is_invisible) {
        return Err(ReadError::InvisibleCharacter { line });
    }
    Ok(Line::Option(key, trimmed[split + 1..].trim_start()))
}

/// A key that starts like `-PASS` (any case) but is not exactly `-PASS`.
fn is_malformed_password_key(key: &str) -> bool {
    const PASS: &str = "-PASS";
    key != PASS
        && key
            .get(..PASS.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(PASS))
}

/// Control characters and the invisible format characters that look like nothing on screen:
/// soft hyphen, zero-width space/joiners, direction marks and overrides, word joiner and
/// invisible operators, and the BOM/zero-width no-break space.
fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
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
    fn the_first_error_in_the_file_wins() {
        let dup = |first_line, line| ReadError::DuplicateKey {
            section: "A".into(),
            key: "k".into(),
            first_line,
            line,
        };
        let cases: &[(&[u8], ReadError)] = &[
            (b"[A]\nk = 1\nk = 2\njunk\n", dup(2, 3)),
            (
                b"[A]\nk = 1\njunk\nk = 2\n",
                ReadError::Malformed { line: 3 },
            ),
            (b"[A]\nk = 1\nj = 0\nk = 2\nk = 3\nj = 4\n", dup(2, 4)),
            (b"[A]\nj = 0\nk = 1\nk = 2\nj = 3\n", dup(3, 4)),
            (b"[A]\nk = 1\nk = 2\nj = \xff\n", dup(2, 3)),
            (
                b"[A]\nk = 1\njunk\nj = \xff\n",
                ReadError::Malformed { line: 3 },
            ),
            (
                b"[A]\nk = 1\r\nj = \xff\r\nk = 2\n",
                ReadError::NotUtf8 { line: 3 },
            ),
            (b"\xff\n[A]\n", ReadError::NotUtf8 { line: 1 }),
            (b"[A]\n\nk = \xe2\x82", ReadError::NotUtf8 { line: 3 }),
        ];
        for (input, want) in cases {
            assert_eq!(&RawSpec::parse(input).unwrap_err(), want);
        }
    }

    #[test]
    fn lookups_by_section_and_flat_key() {
        let raw = RawSpec::parse(b"[A]\nB|k = 1\nk = 2\n[A|B]\nj = 3\n[C]\n").unwrap();
        assert_eq!(raw.get_in("A", "B|k").map(|e| e.line), Some(2));
        assert_eq!(raw.get("A|B|k").map(|e| e.line), Some(2));
        assert_eq!(raw.get("A|B|j").map(|e| e.line), Some(5));
        assert!(raw.get("A|B").is_none() && raw.get_in("A|B", "k").is_none());
        assert_eq!(raw.section_entries("A").count(), 2);
        assert_eq!(raw.section_entries("C").count(), 0);
        assert_eq!(raw.section_entries("D").count(), 0);
    }

    #[test]
    fn debug_redacts_secret_entries() {
        let raw = RawSpec::parse(b"[PASSWORD]\n-PASS = c2VjcmV0\n").unwrap();
        let text = format!("{raw:?}");
        assert!(!text.contains("c2VjcmV0"), "{text}");
        assert!(text.contains("<redacted>"));
    }
}
