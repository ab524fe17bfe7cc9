//! `vendor_data`: whether vendor-data is applied under the user-data (`enabled`,
//! default true) and the command its scripts are run with (`prefix`).

use serde::Serialize;

use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader, Severity};
use crate::cloud_config::CloudConfig;

/// `vendor_data`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VendorData {
    /// Apply vendor-data (default true).
    pub enabled: bool,
    /// Run vendor scripts with this program and arguments in front.
    pub prefix: Vec<String>,
}

impl Default for VendorData {
    fn default() -> Self {
        VendorData {
            enabled: true,
            prefix: Vec::new(),
        }
    }
}

/// cloud-init's `util.is_true`: a boolean, or a string such as `yes` (deprecated).
pub(crate) fn enabled(node: Option<&Node>) -> bool {
    match node.map(|n| &n.value) {
        None => true,
        Some(Value::Map(_)) => match node.and_then(|n| n.get("enabled")).map(|n| &n.value) {
            // cloud-init's built-in `vendor_data: {enabled: true}` is merged under it.
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(Value::Str(s)) => matches!(
                s.trim().to_ascii_lowercase().as_str(),
                "true" | "1" | "on" | "yes"
            ),
            Some(Value::Int(1)) => true,
            Some(_) => false,
        },
        // Not a mapping: cloud-init resets it to {"enabled": False}.
        Some(_) => false,
    }
}

/// `vendor_data`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let mut v = VendorData {
        enabled: enabled(Some(node)),
        prefix: Vec::new(),
    };
    if let Some(map) = r.map(node, key, &["enabled", "prefix"]) {
        for (k, val) in map {
            let at = join(key, &k.text);
            if k.text == "enabled" {
                if let Value::Str(_) = val.value {
                    r.report(
                        Severity::Warning,
                        val,
                        &at,
                        "a string is deprecated (cloud-init 23.1); write true or false",
                    );
                } else if !matches!(val.value, Value::Bool(_)) {
                    r.wrong_type(val, &at, "true or false");
                }
            } else {
                v.prefix = match &val.value {
                    Value::Str(s) => vec![s.clone()],
                    // Integers are words too (cloud-init's schema and its example
                    // `[timeout, 30]`): `str()` of each.
                    Value::Seq(items) => items
                        .iter()
                        .enumerate()
                        .filter_map(|(i, w)| match w.value {
                            Value::Int(n) => Some(n.to_string()),
                            _ => r.line(w, &index(&at, i), 4096),
                        })
                        .collect(),
                    _ => {
                        r.wrong_type(val, &at, "a program or an argv list");
                        Vec::new()
                    }
                };
            }
        }
    }
    cfg.vendor_data = v;
}

#[cfg(test)]
mod tests {
    use crate::cloud_config::document;

    /// cloud-init's schema takes integers among `prefix`'s words (its example is
    /// `[timeout, 30]`) and runs them as `str()` of each.
    #[test]
    fn prefix_words_may_be_integers() {
        let (cfg, p) = document::from_text("vendor_data: {enabled: true, prefix: [timeout, 30]}");
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(cfg.vendor_data.prefix, ["timeout", "30"]);
        let (_, p) = document::from_text("vendor_data: {prefix: [timeout, 1.5]}");
        assert_eq!(p[0].path, "vendor_data.prefix[1]");
    }
}
