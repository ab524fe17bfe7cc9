//! The accounts engine's keys (`users`, `groups`, `chpasswd`, `password`,
//! `ssh_authorized_keys`, `ssh_pwauth`, `disable_root`, `disable_root_opts`), kept as raw
//! nodes for it to parse: recognised (never "unknown"), and printed only redacted.

use std::fmt;

use serde::Serialize;

use super::node::Node;
use super::read::Reader;
use super::redact;
use super::CloudConfig;

/// One accounts key and its value as written.
#[derive(Clone, PartialEq)]
pub struct RawModule {
    /// The top-level key.
    pub key: String,
    /// Its value (may hold password hashes and plain passwords).
    pub node: Node,
}

impl fmt::Debug for RawModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RawModule({}: {})",
            self.key,
            redact::to_json(&self.key, &self.node)
        )
    }
}

impl Serialize for RawModule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("RawModule", 3)?;
        st.serialize_field("key", &self.key)?;
        st.serialize_field("line", &self.node.line)?;
        st.serialize_field("value", &redact::to_json(&self.key, &self.node))?;
        st.end()
    }
}

/// The registry's parser for an accounts key until the accounts engine plugs in its own.
pub fn raw(cfg: &mut CloudConfig, _r: &mut Reader, key: &str, node: &Node) {
    cfg.accounts.push(RawModule {
        key: key.to_string(),
        node: node.clone(),
    });
}

#[cfg(test)]
mod tests {
    use crate::cloud_config::document;

    #[test]
    fn accounts_keys_pass_through_redacted() {
        let (cfg, p) = document::from_text(
            "users: [{name: a, passwd: HASHX}]\nchpasswd: {list: 'root:PW'}\nssh_pwauth: true\n",
        );
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(cfg.accounts.len(), 3);
        let shown = format!("{:?} {}", cfg, serde_json::to_string(&cfg).unwrap());
        assert!(
            !shown.contains("HASHX") && !shown.contains("root:PW"),
            "{shown}"
        );
        assert!(shown.contains("ssh_pwauth"));
    }
}
