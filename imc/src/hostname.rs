//! The guest's host name (`NETWORK|HOSTNAME`): a short name or an FQDN.

use std::fmt;

use serde::Serialize;

use crate::dns_name::check_labels;

/// A validated host name such as `myhost1` or `myhost1.eng.vmware.com` (RFC 1123 labels).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct HostName(String);

impl HostName {
    /// Validates a host name; the error is a lower-case message with the accepted forms.
    pub fn parse(s: &str) -> Result<Self, String> {
        check_labels(s)?;
        Ok(HostName(s.to_owned()))
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first label, which is what goes into `/etc/hostname` when the value is an FQDN.
    pub fn short(&self) -> &str {
        self.0.split('.').next().unwrap_or(&self.0)
    }

    /// The rest after the first label, if the value is an FQDN.
    pub fn domain(&self) -> Option<&str> {
        self.0.split_once('.').map(|(_, domain)| domain)
    }
}

impl fmt::Display for HostName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_fqdn() {
        let h = HostName::parse("myhost1.eng.vmware.com").unwrap();
        assert_eq!((h.short(), h.domain()), ("myhost1", Some("eng.vmware.com")));
        let h = HostName::parse("myhost1").unwrap();
        assert_eq!((h.short(), h.domain()), ("myhost1", None));
    }

    #[test]
    fn rejects_bad_host_names() {
        for s in ["", "my_host", "-x", "a..b", "host name"] {
            assert!(HostName::parse(s).is_err(), "{s}");
        }
    }
}
