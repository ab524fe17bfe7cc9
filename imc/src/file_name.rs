//! Plain file names (script name, raw cloud-init data files, marker id): never a path.

use std::fmt;

use serde::Serialize;

/// A non-empty name without `/` or NUL that is not `.` or `..`, so joining it to a directory cannot
/// escape that directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct FileName(String);

impl FileName {
    /// Validates a plain file name; the error is a lower-case message with the accepted forms.
    pub fn parse(s: &str) -> Result<Self, &'static str> {
        if s.is_empty() || s == "." || s == ".." || s.contains(['/', '\0']) {
            return Err(
                "not a plain file name; use a non-empty name without / or NUL that is not . or ..",
            );
        }
        Ok(FileName(s.to_owned()))
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names() {
        assert!(FileName::parse("test-script").is_ok());
        assert!(FileName::parse("12345345").is_ok());
        for s in ["", ".", "..", "a/b", "/etc/passwd", "a\0b"] {
            assert!(FileName::parse(s).is_err(), "{s:?}");
        }
    }
}
