//! The OpenStack config drive: an ISO9660 or vfat medium labelled `config-2` (VMware
//! Integrated OpenStack attaches one) with `openstack/latest/meta_data.json` (uuid,
//! hostname, public_keys), `network_data.json` ([`network_data`]), `user_data` and
//! `vendor_data.json`, read as cloud-init's ConfigDrive datasource reads them.

pub(crate) mod network_data;

use std::path::Path;

use serde_json::Value;

use super::field::{field, host_and_domain};
use super::seed_media::{self, Medium, MAX_FILE_BYTES};
use super::{Door, SourceData};
use crate::failure::Failure;
use crate::model::{Customization, Identity, InstanceId, SshKey};

/// The labels of a config drive (cloud-init accepts both spellings).
pub(crate) const LABELS: &[&str] = &["config-2", "CONFIG-2"];

/// Where the documents are on the medium.
pub(crate) const DIR: &str = "openstack/latest";

/// Largest `meta_data.json`, `network_data.json` or `vendor_data.json` read.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 1024 * 1024;

/// Most public keys read from `public_keys`.
pub(crate) const MAX_KEYS: usize = 256;

/// The OpenStack config drive.
pub(crate) struct ConfigDrive;

/// Whether a `--seed DIR` is a config drive: it has `openstack/latest/meta_data.json`.
fn is_drive_dir(dir: &Path) -> bool {
    dir.join(DIR).join("meta_data.json").is_file()
}

impl super::Source for ConfigDrive {
    fn names(&self) -> &'static [&'static str] {
        &["configdrive"]
    }

    fn read(&self, door: &mut Door) -> Result<Vec<SourceData>, Failure> {
        let Some(mut medium) = seed_media::find(door, LABELS, is_drive_dir)? else {
            return Ok(Vec::new());
        };
        Ok(vec![read_medium(&mut medium)?])
    }
}

/// What `meta_data.json` asks for, with warnings about what vmcust does not use.
pub fn meta_data(name: &str, json: &[u8]) -> Result<(Customization, Vec<String>), Failure> {
    let bad = |what: String| Failure::invalid(format!("{name}: {what}"));
    let doc: Value =
        serde_json::from_slice(json).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let Value::Object(md) = doc else {
        return Err(bad("not a JSON object".into()));
    };
    let text = |key: &str| -> Result<Option<&str>, Failure> {
        match md.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim())),
            Some(_) => Err(bad(format!("{key}: expected a string"))),
        }
    };
    let mut c = Customization::default();
    let mut warnings = Vec::new();
    if let Some(uuid) = text("uuid")? {
        c.instance_id = Some(
            field(format!("{name}: uuid"), InstanceId::parse(uuid))
                .map_err(|e| Failure::invalid(e.to_string()))?,
        );
    }
    if let Some(h) = text("hostname")? {
        let (host, domain) = host_and_domain(&format!("{name}: hostname"), h)
            .map_err(|e| Failure::invalid(e.to_string()))?;
        c.identity = Identity {
            host_name: Some(host),
            domain,
            ..Default::default()
        };
    }
    match md.get("public_keys") {
        None | Some(Value::Null) => {}
        Some(Value::Object(keys)) => {
            if keys.len() > MAX_KEYS {
                return Err(bad(format!("public_keys: more than {MAX_KEYS} keys")));
            }
            for (key_name, v) in keys {
                let Value::String(v) = v else {
                    return Err(bad(format!(
                        "public_keys.{}: expected a string",
                        crate::model::quote(key_name)
                    )));
                };
                for (n, line) in SshKey::lines_of(v) {
                    let key = field(
                        format!(
                            "{name}: public_keys.{} line {n}",
                            crate::model::quote(key_name)
                        ),
                        SshKey::parse(line),
                    )
                    .map_err(|e| Failure::invalid(e.to_string()))?;
                    c.identity.ssh_authorized_keys.push(key);
                }
            }
        }
        Some(_) => {
            return Err(bad(
                "public_keys: expected an object of key name to key".into()
            ))
        }
    }
    for (key, what) in [
        ("files", "injected files are not written"),
        ("admin_pass", "the admin password is not set"),
        (
            "network_config",
            "the old injected network config is not used (network_data.json is)",
        ),
    ] {
        if md.get(key).is_some_and(|v| !v.is_null()) {
            warnings.push(format!("{name}: {key}: {what} by vmcust"));
        }
    }
    Ok((c, warnings))
}

/// The vendor-data cloud-init takes from `vendor_data.json`: the document itself when it
/// is a string, else its `cloud-init` key (a string).
fn vendor_data(name: &str, json: &[u8]) -> Result<Option<Vec<u8>>, Failure> {
    let doc: Value = serde_json::from_slice(json)
        .map_err(|e| Failure::invalid(format!("{name}: not valid JSON: {e}")))?;
    Ok(match doc {
        Value::String(s) => Some(s.into_bytes()),
        Value::Object(mut m) => match m.remove("cloud-init") {
            Some(Value::String(s)) => Some(s.into_bytes()),
            _ => None,
        },
        _ => None,
    })
}

/// Reads a config drive into the data it asks for.
pub(crate) fn read_medium(medium: &mut Medium) -> Result<SourceData, Failure> {
    let place = medium.place.clone();
    let at = |f: &str| format!("{DIR}/{f} on {place}");
    let mut out = SourceData::new("configdrive", format!("the config drive {}", medium.place));
    let md_name = at("meta_data.json");
    let Some(md) = medium.read(&format!("{DIR}/meta_data.json"), MAX_DOCUMENT_BYTES)? else {
        return Err(Failure::invalid(format!(
            "the config drive {} has no {DIR}/meta_data.json",
            medium.place
        )));
    };
    let (mut c, warnings) = meta_data(&md_name, &md)?;
    out.warnings.extend(warnings);
    let nd_name = at("network_data.json");
    if let Some(nd) = medium.read(&format!("{DIR}/network_data.json"), MAX_DOCUMENT_BYTES)? {
        let t = network_data::translate(&nd)
            .map_err(|e| Failure::invalid(format!("{nd_name}: {e}")))?;
        out.warnings
            .extend(t.warnings.into_iter().map(|w| format!("{nd_name}: {w}")));
        c.network = t.network;
    }
    out.customization = c;
    out.user_data = out.own(medium.read(&format!("{DIR}/user_data"), MAX_FILE_BYTES)?);
    let vd_name = at("vendor_data.json");
    if let Some(vd) = medium.read(&format!("{DIR}/vendor_data.json"), MAX_DOCUMENT_BYTES)? {
        // Merged under the user-data and applied with it, as every source's vendor-data.
        out.vendor_data = out.own(vendor_data(&vd_name, &vd)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f a@b";

    #[test]
    fn meta_data_fields() {
        let json = format!(
            r#"{{"uuid": "83679162-1378-4288-a2d4-70e13ec132aa", "hostname": "web.example.com",
               "name": "web", "public_keys": {{"mykey": "{KEY}\n"}}, "files": [], "launch_index": 0}}"#
        );
        let (c, w) = meta_data("md", json.as_bytes()).unwrap();
        assert_eq!(
            c.instance_id.as_deref(),
            Some("83679162-1378-4288-a2d4-70e13ec132aa")
        );
        assert_eq!(c.identity.host_name.as_ref().unwrap().as_str(), "web");
        assert_eq!(c.identity.domain.as_ref().unwrap().as_str(), "example.com");
        assert_eq!(c.identity.ssh_authorized_keys, [KEY]);
        assert!(w[0].contains("files"), "{w:?}");
    }

    #[test]
    fn bad_meta_data_names_the_key() {
        let table: &[(&str, &str)] = &[
            ("{", "md: not valid JSON"),
            ("[1]", "md: not a JSON object"),
            (r#"{"uuid": 5}"#, "md: uuid: expected a string"),
            (r#"{"hostname": "a\nb"}"#, "md: hostname"),
            (
                r#"{"public_keys": ["k"]}"#,
                "md: public_keys: expected an object",
            ),
            (
                r#"{"public_keys": {"k": "not-a-key"}}"#,
                "md: public_keys.\"k\" line 1",
            ),
        ];
        for (doc, want) in table {
            let e = meta_data("md", doc.as_bytes()).unwrap_err();
            assert!(e.reason().contains(want), "{doc}: {}", e.reason());
        }
    }

    #[test]
    fn vendor_data_as_cloud_init_reads_it() {
        assert_eq!(
            vendor_data("v", br##""#cloud-config""##)
                .unwrap()
                .as_deref(),
            Some(&b"#cloud-config"[..])
        );
        assert_eq!(
            vendor_data("v", br#"{"cloud-init": "x"}"#)
                .unwrap()
                .as_deref(),
            Some(&b"x"[..])
        );
        assert_eq!(vendor_data("v", br#"{"other": "x"}"#).unwrap(), None);
        assert!(vendor_data("v", b"{").is_err());
    }
}
