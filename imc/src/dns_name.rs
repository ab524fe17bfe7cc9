//! DNS names (`DOMAINNAME`, `SUFFIX|n`): RFC 1123 letter-digit-hyphen labels.

use std::fmt;

use serde::Serialize;

/// What a DNS name may look like, for error messages.
pub const DNS_NAME_FORMS: &str = "use dot-separated labels of 1-63 letters, digits or hyphens, not starting or ending with a hyphen, at most 253 characters in all";

/// The longest DNS name in its text form (RFC 1035's 255 octets on the wire, less the
/// length byte of the first label and the root label): a whole FQDN, host name included.
pub const MAX_FQDN: usize = 253;

/// A validated, non-empty DNS name such as `eng.vmware.com`. Case is kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct DnsName(String);

impl DnsName {
    /// Validates a DNS name; the error is a lower-case message with the accepted forms.
    pub fn parse(s: &str) -> Result<Self, String> {
        check_labels(s)?;
        Ok(DnsName(s.to_owned()))
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DnsName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks the RFC 1123 rules shared by DNS names and host names.
pub(crate) fn check_labels(s: &str) -> Result<(), String> {
    let fail = |why: &str| Err(format!("{why}; {DNS_NAME_FORMS}"));
    if s.is_empty() {
        return fail("empty name");
    }
    if s.len() > MAX_FQDN {
        return fail("name longer than 253 characters");
    }
    for label in s.split('.') {
        if label.is_empty() {
            return fail("empty label");
        }
        if label.len() > 63 {
            return fail("label longer than 63 characters");
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return fail("label with a character other than a letter, digit or hyphen");
        }
        if label.starts_with('-') || label.ends_with('-') {
            return fail("label starting or ending with a hyphen");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_rfc1123_names() {
        for s in ["eng.vmware.com", "a", "x-1.example", &"a".repeat(63)] {
            assert!(DnsName::parse(s).is_ok(), "{s}");
        }
    }

    #[test]
    fn rejects_bad_names() {
        let long = [
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(63),
        ]
        .join(".");
        for s in [
            "",
            "a..b",
            "-a.com",
            "a-.com",
            "a_b.com",
            "a.com.",
            &"a".repeat(64),
            &long,
        ] {
            assert!(DnsName::parse(s).is_err(), "{s}");
        }
    }
}
