//! The validation context: looks keys up, remembers which were used, and collects every problem.
//!
//! Parsers of single values return `Result<T, message>`; this module attaches the line, section, key
//! and (redacted when secret) value, so that no parser has to think about secrets or line numbers.

use std::collections::BTreeMap;

use crate::error::{Problem, Warning};
use crate::reader::{RawEntry, RawSpec};
use crate::shown;

/// Accepted forms of a VMware boolean.
const YES_NO: &str = "use yes or no (any case)";
/// Accepted forms of PRIMARY and ONBOOT, where cloud-init also takes true/false.
const YES_NO_TRUE_FALSE: &str = "use yes, no, true or false (any case)";

/// Validation state for one spec.
pub(crate) struct Checker<'a> {
    pub raw: &'a RawSpec,
    /// Indexed by line: whether the entry on that line was consumed; the rest are unknown keys.
    used: Vec<bool>,
    pub problems: Vec<Problem>,
    pub warnings: Vec<Warning>,
}

impl<'a> Checker<'a> {
    pub fn new(raw: &'a RawSpec) -> Self {
        let last_line = raw.entries().last().map_or(0, |e| e.line);
        Checker {
            raw,
            used: vec![false; last_line + 1],
            problems: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn mark_used(&mut self, entry: &RawEntry) {
        if self.used.len() <= entry.line {
            self.used.resize(entry.line + 1, false);
        }
        self.used[entry.line] = true;
    }

    /// Looks up `SECTION|KEY` and marks it as known.
    pub fn take(&mut self, section: &str, key: &str) -> Option<&'a RawEntry> {
        let entry = self.raw.get_in(section, key)?;
        self.mark_used(entry);
        Some(entry)
    }

    /// Parses one entry's value, recording a problem (with the line and redacted value) on failure.
    pub fn parse_entry<T, E: Into<String>>(
        &mut self,
        entry: &RawEntry,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Option<T> {
        match parse(&entry.value) {
            Ok(v) => Some(v),
            Err(message) => {
                self.problems.push(Problem::for_value(entry, message));
                None
            }
        }
    }

    /// Looks up and parses an optional key; `None` if absent or invalid (then a problem is recorded).
    pub fn field<T, E: Into<String>>(
        &mut self,
        section: &str,
        key: &str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Option<T> {
        let entry = self.take(section, key)?;
        self.parse_entry(entry, parse)
    }

    /// An optional string kept as written.
    pub fn text(&mut self, section: &str, key: &str) -> Option<String> {
        self.take(section, key).map(|e| e.value.clone())
    }

    /// A yes/no boolean as VMware writes it.
    pub fn yes_no(&mut self, section: &str, key: &str) -> Option<bool> {
        self.field(section, key, |v| {
            if v.eq_ignore_ascii_case("yes") {
                Ok(true)
            } else if v.eq_ignore_ascii_case("no") {
                Ok(false)
            } else {
                Err(format!("not a boolean; {YES_NO}"))
            }
        })
    }

    /// A boolean that also accepts true/false, as cloud-init does for PRIMARY and ONBOOT.
    pub fn yes_no_true_false(&mut self, section: &str, key: &str) -> Option<bool> {
        let is = |v: &str, words: [&str; 2]| words.iter().any(|w| v.eq_ignore_ascii_case(w));
        self.field(section, key, |v| {
            if is(v, ["yes", "true"]) {
                Ok(true)
            } else if is(v, ["no", "false"]) {
                Ok(false)
            } else {
                Err(format!("not a boolean; {YES_NO_TRUE_FALSE}"))
            }
        })
    }

    /// All `PREFIX|n` keys of a section by index. Bad indexes are problems; the keys count as known.
    pub fn indexed(&mut self, section: &str, prefix: &str) -> BTreeMap<u32, &'a RawEntry> {
        let mut found = BTreeMap::new();
        let raw = self.raw;
        for entry in raw.section_entries(section) {
            let Some(index) = entry
                .key
                .strip_prefix(prefix)
                .and_then(|k| k.strip_prefix('|'))
            else {
                continue;
            };
            self.mark_used(entry);
            match parse_index(index) {
                Some(n) => {
                    found.insert(n, entry);
                }
                None => self.problems.push(Problem::for_key(
                    Some(entry.line),
                    section,
                    Some(&entry.key),
                    format!("bad index {}; use {prefix}|1, {prefix}|2, ... (whole numbers from 1, no leading zeros)", shown::quoted(index)),
                )),
            }
        }
        found
    }

    /// Checks that the indexes run 1..n without gaps, naming the first missing one.
    pub fn require_contiguous(
        &mut self,
        section: &str,
        prefix: &str,
        found: &BTreeMap<u32, &RawEntry>,
    ) {
        let gap = found
            .iter()
            .zip(1u32..)
            .find(|((index, _), want)| **index != *want);
        if let Some(((_, entry), missing)) = gap {
            let have: Vec<String> = found.keys().map(u32::to_string).collect();
            self.problems.push(Problem::for_key(
                Some(entry.line),
                section,
                Some(&format!("{prefix}|{missing}")),
                format!(
                    "missing; {prefix}|n keys must be numbered 1, 2, 3, ... without gaps (found {})",
                    have.join(", ")
                ),
            ));
        }
    }

    /// Records a problem that is not about one value.
    pub fn problem(
        &mut self,
        line: Option<usize>,
        section: &str,
        key: Option<&str>,
        message: String,
    ) {
        self.problems
            .push(Problem::for_key(line, section, key, message));
    }

    /// Records a warning.
    pub fn warn(&mut self, line: Option<usize>, section: &str, key: Option<&str>, message: &str) {
        self.warnings.push(Warning {
            line,
            section: section.to_owned(),
            key: key.map(str::to_owned),
            message: message.to_owned(),
        });
    }

    /// Entries no parser looked at, in file order.
    pub fn unused(&self) -> impl Iterator<Item = &'a RawEntry> + '_ {
        self.raw
            .entries()
            .filter(|e| !self.used.get(e.line).copied().unwrap_or(false))
    }
}

/// A 1-based index written canonically (`1`, `12`; not `0`, `01` or `+1`), so that it maps to exactly
/// one key.
fn parse_index(s: &str) -> Option<u32> {
    if s.is_empty() || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}
