//! The host key keys of cloud-init's `ssh` module: `ssh_deletekeys` and `ssh_genkeytypes`
//! become what clone hygiene does with the host keys (`src/hygiene.rs`, which deletes and
//! makes them with `ssh-keygen` at the first boot of each instance, before sshd starts);
//! `ssh_quiet_keygen` is accepted (vmcust's `ssh-keygen` output never reaches the console)
//! and `ssh_publish_hostkeys` too (publishing is the datasource's, and VMware's does not
//! publish, so cloud-init does nothing with it there either).

use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader};
use crate::cloud_config::CloudConfig;
use serde::Serialize;

/// What a cloud-config asks of the host keys, as cloud-init's `ssh` module does it:
/// `ssh_deletekeys` removes every host key, then `ssh_genkeytypes` are made where missing.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct HostKeyWish {
    /// `ssh_deletekeys`; unset is cloud-init's default, true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete: Option<bool>,
    /// `ssh_genkeytypes`; unset is cloud-init's default, [`GEN_KEY_TYPES`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
    /// With `ssh_keys` in the document: the types whose private key it gives. Then no
    /// host key is made (cloud-init's rule), and `ssh_deletekeys` removes every other
    /// type's (the given keys are written over these by the `ssh` module, `ssh_keys.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub given: Option<Vec<String>>,
}

impl HostKeyWish {
    /// Whether the document said anything about host keys.
    pub fn is_empty(&self) -> bool {
        self.delete.is_none() && self.types.is_none() && self.given.is_none()
    }
}

/// cloud-init's `ssh_genkeytypes` default.
pub(crate) const GEN_KEY_TYPES: &[&str] = &["rsa", "ecdsa", "ed25519"];

/// `ssh_deletekeys`.
pub(crate) fn parse_deletekeys(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    if let Some(b) = r.bool(node, key) {
        cfg.ssh_host_keys.delete = Some(b);
    }
}

/// `ssh_genkeytypes`: a list of `rsa`, `ecdsa`, `ed25519` (each once).
pub(crate) fn parse_genkeytypes(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(items) = r.list(node, key, 8) else {
        return;
    };
    let mut types: Vec<String> = Vec::new();
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let path = index(key, i);
        let Some(t) = r.line(item, &path, 32) else {
            ok = false;
            continue;
        };
        if !GEN_KEY_TYPES.contains(&t.as_str()) {
            r.error(
                item,
                &path,
                format!(
                    "{} is not a host key type vmcust makes; use {}",
                    crate::model::quote(&t),
                    GEN_KEY_TYPES.join(", ")
                ),
            );
            ok = false;
        } else if !types.contains(&t) {
            types.push(t);
        }
    }
    if ok {
        cfg.ssh_host_keys.types = Some(types);
    }
}

/// `ssh_quiet_keygen`: a bool, with nothing to do (the keys are made quietly anyway).
pub(crate) fn parse_quiet_keygen(_cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let _ = r.bool(node, key);
}

/// `ssh_publish_hostkeys: {enabled: bool, blacklist: [types]}`: checked; VMware's
/// datasource publishes nothing, as cloud-init's does not.
pub(crate) fn parse_publish_hostkeys(
    _cfg: &mut CloudConfig,
    r: &mut Reader,
    key: &str,
    node: &Node,
) {
    let Some(entries) = r.map(node, key, &["enabled", "blacklist"]) else {
        return;
    };
    for (k, v) in entries {
        let path = join(key, &k.text);
        if k.text == "enabled" {
            let _ = r.bool(v, &path);
        } else if let Some(items) = r.list(v, &path, 16) {
            for (i, item) in items.iter().enumerate() {
                if !matches!(item.value, Value::Str(_)) {
                    r.wrong_type(item, &index(&path, i), "a key type");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HostKeyWish;
    use crate::cloud_config::modules::test_support::{assert_refused, clean_config};

    #[test]
    fn accepted_as_cloud_init_accepts_them() {
        let table: &[(&str, HostKeyWish)] = &[
            ("{}", HostKeyWish::default()),
            (
                "ssh_deletekeys: false",
                HostKeyWish {
                    delete: Some(false),
                    ..Default::default()
                },
            ),
            (
                "ssh_genkeytypes: [ed25519, rsa, ed25519]\nssh_quiet_keygen: true\nssh_publish_hostkeys: {enabled: false, blacklist: [rsa]}",
                HostKeyWish {
                    types: Some(vec!["ed25519".into(), "rsa".into()]),
                    ..Default::default()
                },
            ),
            (
                "ssh_genkeytypes: []",
                HostKeyWish {
                    types: Some(vec![]),
                    ..Default::default()
                },
            ),
        ];
        for (doc, want) in table {
            let cfg = clean_config(&format!("#cloud-config\n{doc}\n"));
            assert_eq!(cfg.ssh_host_keys, *want, "{doc}");
            assert!(cfg.unknown.is_empty(), "{doc}: {:?}", cfg.unknown);
        }
    }

    #[test]
    fn bad_values_are_refused_with_their_path() {
        assert_refused(&[
            ("ssh_deletekeys: maybe\n", "ssh_deletekeys"),
            ("ssh_genkeytypes: rsa\n", "ssh_genkeytypes"),
            (
                "ssh_genkeytypes: [rsa, dsa]\n",
                "ssh_genkeytypes[1]: \"dsa\" is not a host key type vmcust makes",
            ),
            ("ssh_quiet_keygen: 3\n", "ssh_quiet_keygen"),
            (
                "ssh_publish_hostkeys: {enabled: 2}\n",
                "ssh_publish_hostkeys.enabled",
            ),
        ]);
    }
}
