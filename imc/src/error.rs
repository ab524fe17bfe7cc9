//! Validation problems and warnings, and the error type of [`crate::Spec::parse`].
//!
//! Values are shown only through [`Problem::for_value`], which redacts secret keys; warnings never
//! carry values at all. That makes "no password in any message" a property of the types.

use std::fmt;

use serde::Serialize;
use thiserror::Error;

use crate::reader::{RawEntry, ReadError};
use crate::secret::REDACTED;
use crate::shown;

/// Why a spec was rejected.
#[derive(Debug, Error)]
pub enum SpecError {
    /// The file could not be read as INI at all.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The file was read but one or more values are invalid; all problems are listed, one per line.
    #[error("{}", render_lines(.0))]
    Invalid(Vec<Problem>),
}

/// One validation problem, tied to a line, section and key where possible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    line: Option<usize>,
    section: String,
    key: Option<String>,
    /// Already rendered: quoted and cut short ([`shown::quoted`]), or `<redacted>` for secret keys.
    shown_value: Option<String>,
    message: String,
}

impl Problem {
    /// A problem with the value of `entry`; the value is redacted if the key is secret.
    pub(crate) fn for_value(entry: &RawEntry, message: impl Into<String>) -> Self {
        let shown_value = if entry.is_secret() {
            REDACTED.to_owned()
        } else {
            shown::quoted(&entry.value)
        };
        Problem {
            line: Some(entry.line),
            section: entry.section.to_string(),
            key: Some(entry.key.clone()),
            shown_value: Some(shown_value),
            message: message.into(),
        }
    }

    /// A problem about a key or section as a whole (e.g. a missing key), without any value.
    pub(crate) fn for_key(
        line: Option<usize>,
        section: &str,
        key: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            line,
            section: section.to_owned(),
            key: key.map(str::to_owned),
            shown_value: None,
            message: message.into(),
        }
    }

    /// 1-based line, if the problem is tied to one.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// Section name.
    pub fn section(&self) -> &str {
        &self.section
    }

    /// Key name, if the problem is about one key.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The lower-case message, including the accepted forms.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// `line N: [SECTION] KEY`, the place every problem and warning starts with.
fn write_place(
    f: &mut fmt::Formatter<'_>,
    line: Option<usize>,
    section: &str,
    key: Option<&str>,
) -> fmt::Result {
    if let Some(line) = line {
        write!(f, "line {line}: ")?;
    }
    write!(f, "[{}]", shown::name(section))?;
    if let Some(key) = key {
        write!(f, " {}", shown::name(key))?;
    }
    Ok(())
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_place(f, self.line, &self.section, self.key.as_deref())?;
        if let Some(value) = &self.shown_value {
            write!(f, " = {value}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Something odd but harmless, e.g. an unknown key. Carries no value, only where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// 1-based line, if tied to one.
    pub line: Option<usize>,
    /// Section name.
    pub section: String,
    /// Key name, if the warning is about one key.
    pub key: Option<String>,
    /// Lower-case message.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_place(f, self.line, &self.section, self.key.as_deref())?;
        write!(f, ": {}", self.message)
    }
}

fn render_lines(problems: &[Problem]) -> String {
    let lines: Vec<String> = problems.iter().map(Problem::to_string).collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(section: &str, key: &str, value: &str) -> RawEntry {
        RawEntry {
            section: section.into(),
            key: key.into(),
            value: value.into(),
            line: 7,
        }
    }

    #[test]
    fn renders_value_quoted() {
        let p = Problem::for_value(&entry("NIC1", "NETMASK", "1.2.3"), "bad");
        assert_eq!(p.to_string(), r#"line 7: [NIC1] NETMASK = "1.2.3": bad"#);
    }

    #[test]
    fn redacts_secret_keys() {
        for (section, key) in [("PASSWORD", "-PASS"), ("X", "A|-B"), ("-S", "K")] {
            let p = Problem::for_value(&entry(section, key, "hunter2"), "bad");
            let all = format!("{p} {p:?}");
            assert!(!all.contains("hunter2"), "{all}");
            assert!(all.contains("<redacted>"));
        }
    }
}
