//! Time zone names (`DATETIME|TIMEZONE`): shape only; whether the zone exists is the engine's check.

use std::fmt;

use serde::Serialize;

/// A time zone name such as `Africa/Abidjan` or `Etc/GMT+5` that is safe to join to a zoneinfo path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Timezone(String);

impl Timezone {
    /// Validates the shape; the error is a lower-case message with the accepted forms.
    pub fn parse(s: &str) -> Result<Self, &'static str> {
        let chars_ok = s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'+' | b'-'));
        // `.` is not in the character set, so no `..` component can get through either.
        if s.is_empty() || !chars_ok || s.starts_with('/') {
            return Err("not a time zone name; use a name such as Africa/Abidjan made of letters, digits, / _ + -, not starting with / and without .. components");
        }
        Ok(Timezone(s.to_owned()))
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Timezone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        for s in [
            "Africa/Abidjan",
            "UTC",
            "Etc/GMT+5",
            "America/Port-au-Prince",
        ] {
            assert!(Timezone::parse(s).is_ok(), "{s}");
        }
        for s in ["", "/etc/passwd", "../x", "a/../b", "Europe/Par is", "a.b"] {
            assert!(Timezone::parse(s).is_err(), "{s}");
        }
    }
}
