//! Secret values (the root password): never printed, serialized redacted, wiped from memory on drop.

use std::fmt;

use serde::{Serialize, Serializer};
use zeroize::Zeroizing;

/// What every redacted value prints as.
pub const REDACTED: &str = "<redacted>";

/// Whether a flat key (`SECTION|KEY`) or a key holds a secret: cloud-init's rule, the name starts with
/// `-` or contains `|-` (e.g. `PASSWORD|-PASS`); and every key of the `[PASSWORD]` section, so
/// that a misspelt key there (`PASSWORD = hunter2`) is not shown in clear either.
pub fn is_secret_key(key: &str) -> bool {
    // `key.starts_with('-') || key.contains("|-")`, byte by byte: cheaper than setting up a
    // substring search, and this runs for every entry of the file.
    let bytes = key.as_bytes();
    bytes.first() == Some(&b'-')
        || bytes.windows(2).any(|w| w[0] == b'|' && w[1] == b'-')
        || key
            .split_once('|')
            .is_some_and(|(section, _)| is_secret_section(section))
}

/// Whether every key of `section` is secret: the `[PASSWORD]` section (any case, as the
/// reader matches section names).
pub fn is_secret_section(section: &str) -> bool {
    section.eq_ignore_ascii_case("PASSWORD")
}

/// A secret string. `Debug`, `Display` and `Serialize` print `<redacted>`; the memory is zeroed on drop.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Zeroizing<String>);

impl Secret {
    /// Wraps a secret; the string is moved, not copied, so no unwiped copy is left behind.
    pub fn new(value: String) -> Self {
        Secret(Zeroizing::new(value))
    }

    /// The plaintext, for the one place that needs it (e.g. feeding `chpasswd`).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys_follow_cloud_init() {
        assert!(is_secret_key("PASSWORD|-PASS"));
        assert!(is_secret_key("-PASS"));
        assert!(!is_secret_key("MISC|MARKER-ID"));
        assert!(is_secret_key("A|B|-C") && is_secret_key("A|-B|C") && is_secret_key("|-"));
        assert!(!is_secret_key("") && !is_secret_key("A-|B") && !is_secret_key("A|B-"));
        // Every key of [PASSWORD], a misspelt one too; not a key merely named so elsewhere.
        assert!(is_secret_key("PASSWORD|PASSWORD") && is_secret_key("password|RESET"));
        assert!(!is_secret_key("MISC|PASSWORD") && !is_secret_key("PASSWORDS|X"));
    }

    #[test]
    fn secret_is_never_printed() {
        let s = Secret::new("hunter2".into());
        assert_eq!(format!("{s} {s:?}"), "<redacted> <redacted>");
        assert_eq!(s.expose(), "hunter2");
    }
}
