//! The NoCloud seed: an ISO9660 or vfat medium labelled `cidata` (what `cloud-localds`
//! makes, the usual seed on a standalone ESXi host) with `meta-data` (YAML: instance-id,
//! local-hostname, public-keys), `user-data`, `network-config` (v1/v2) and `vendor-data`
//! at its root, read as cloud-init's NoCloud datasource reads them.
//!
//! Only media are read: the `/var/lib/cloud/seed/nocloud*` directories are where vmcust's
//! own late stage hands a real cloud-init its seed (`boot::late`), so reading them back
//! would customize from our own output.

use std::path::Path;

use serde_norway::Value;

use super::seed_media::{self, Medium, MAX_FILE_BYTES};
use super::{metadata, netconfig, Door, SourceData};
use crate::failure::Failure;

/// The labels of a NoCloud medium (cloud-init accepts both spellings).
pub(crate) const LABELS: &[&str] = &["cidata", "CIDATA"];

/// Largest `meta-data` or `network-config` read (documents of a few lines).
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 1024 * 1024;

/// The NoCloud seed.
pub(crate) struct NoCloud;

/// Whether a `--seed DIR` is a NoCloud seed: it has `meta-data`.
fn is_seed_dir(dir: &Path) -> bool {
    dir.join("meta-data").is_file()
}

impl super::Source for NoCloud {
    fn names(&self) -> &'static [&'static str] {
        &["nocloud"]
    }

    fn read(&self, door: &mut Door) -> Result<Vec<SourceData>, Failure> {
        let Some(mut medium) = seed_media::find(door, LABELS, is_seed_dir)? else {
            return Ok(Vec::new());
        };
        Ok(vec![read_medium(&mut medium)?])
    }
}

/// Text of a document: UTF-8, or an error naming it.
fn text(name: &str, bytes: Vec<u8>) -> Result<String, Failure> {
    String::from_utf8(bytes)
        .map_err(|_| Failure::invalid(format!("{name} is not UTF-8 text; write it as UTF-8")))
}

/// Reads a NoCloud medium into the data it asks for.
pub(crate) fn read_medium(medium: &mut Medium) -> Result<SourceData, Failure> {
    let place = medium.place.clone();
    let at = |f: &str| format!("{f} on {place}");
    let mut out = SourceData::new("nocloud", format!("the NoCloud seed {}", medium.place));
    out.places
        .insert("time-zone", format!("{}: time zone", at("meta-data")));
    let md_name = at("meta-data");
    let md_bytes = medium.read("meta-data", MAX_DOCUMENT_BYTES)?;
    let Some(md_bytes) = md_bytes else {
        return Err(Failure::invalid(format!(
            "the NoCloud seed {} has no meta-data; cloud-init needs one too (it may be \
             empty, or just `instance-id: NAME`)",
            medium.place
        )));
    };
    let md_text = text(&md_name, md_bytes.clone())?;
    let md = metadata::parse(&md_name, &md_text).map_err(|e| Failure::invalid(e.to_string()))?;
    if md.raw.contains_key("network-interfaces") {
        return Err(Failure::invalid(format!(
            "{md_name}: network-interfaces (an ifupdown stanza) is not supported; give the \
             network as a network-config file (version 1 or 2) on the seed"
        )));
    }
    let (mut c, warnings) =
        metadata::customization(&md_name, &md).map_err(|e| Failure::invalid(e.to_string()))?;
    out.warnings
        .extend(warnings.into_iter().map(|w| format!("{md_name}: {w}")));
    let nc_name = at("network-config");
    if let Some(nc) = medium.read("network-config", MAX_DOCUMENT_BYTES)? {
        let nc = text(&nc_name, nc)?;
        let map = metadata::load_json_or_yaml(&nc_name, &nc)
            .map_err(|e| Failure::invalid(e.to_string()))?;
        let value = Value::Mapping(map);
        if is_disabled(&value) {
            out.warnings.push(format!(
                "{nc_name}: config: disabled; the guest's network is left as it is"
            ));
            c.network = None;
        } else if !matches!(&value, Value::Mapping(m) if m.is_empty()) {
            let t = netconfig::translate(&value)
                .map_err(|e| Failure::invalid(format!("{nc_name}: {e}")))?;
            out.warnings
                .extend(t.warnings.into_iter().map(|w| format!("{nc_name}: {w}")));
            // network-config wins over a network in meta-data, as in cloud-init.
            c.network = t.network;
        }
    }
    out.customization = c;
    out.raw_metadata = Some(md_bytes);
    out.user_data = out.own(medium.read("user-data", MAX_FILE_BYTES)?);
    // Merged under the user-data and applied with it, as every source's vendor-data.
    out.vendor_data = out.own(medium.read("vendor-data", MAX_FILE_BYTES)?);
    Ok(out)
}

/// `config: disabled` (bare or under `network:`): cloud-init leaves the network alone.
fn is_disabled(v: &Value) -> bool {
    let inner = v.get("network").unwrap_or(v);
    inner.get("config").and_then(Value::as_str) == Some("disabled")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(files: &[(&str, &str)]) -> (tempfile::TempDir, Medium) {
        let d = tempfile::tempdir().unwrap();
        for (n, c) in files {
            std::fs::write(d.path().join(n), c).unwrap();
        }
        let m = Medium::open(d.path(), "seed").unwrap().unwrap();
        (d, m)
    }

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f a@b";

    #[test]
    fn meta_data_network_config_user_data() {
        let md = format!(
            "instance-id: nc-1\nlocal-hostname: web.example.com\npublic-keys:\n  - {KEY}\n"
        );
        let (_d, mut m) = dir(&[
            ("meta-data", &md),
            ("user-data", "#cloud-config\n"),
            (
                "network-config",
                "version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:01'}\n    addresses: [10.0.0.5/24]\n",
            ),
        ]);
        let s = read_medium(&mut m).unwrap();
        let c = &s.customization;
        assert_eq!(c.instance_id.as_deref(), Some("nc-1"));
        assert_eq!(c.identity.host_name.as_ref().unwrap().as_str(), "web");
        assert_eq!(c.identity.ssh_authorized_keys, [KEY]);
        assert_eq!(c.network.as_ref().unwrap().interfaces.len(), 1);
        assert_eq!(
            s.user_data.as_ref().map(|u| u.bytes.as_slice()),
            Some(&b"#cloud-config\n"[..])
        );
        assert_eq!(s.raw_metadata.as_deref(), Some(md.as_bytes()));
    }

    #[test]
    fn refusals_name_the_file() {
        let (_d, mut m) = dir(&[("user-data", "x")]);
        let e = read_medium(&mut m).unwrap_err();
        assert!(e.reason().contains("has no meta-data"), "{}", e.reason());
        let (_d, mut m) = dir(&[("meta-data", "network-interfaces: 'iface eth0 inet dhcp'\n")]);
        let e = read_medium(&mut m).unwrap_err();
        assert!(
            e.reason().contains("meta-data on seed: network-interfaces"),
            "{}",
            e.reason()
        );
        let (_d, mut m) = dir(&[
            ("meta-data", "instance-id: x\n"),
            (
                "network-config",
                "version: 1\nconfig:\n  - type: bond\n    name: bond0\n",
            ),
        ]);
        let e = read_medium(&mut m).unwrap_err();
        assert!(
            e.reason()
                .starts_with("network-config on seed: network config: config[0]"),
            "{}",
            e.reason()
        );
        let (_d, mut m) = dir(&[("meta-data", "instance-id: [x]\n")]);
        assert!(read_medium(&mut m).is_err());
    }

    #[test]
    fn disabled_network_config_leaves_the_network() {
        let (_d, mut m) = dir(&[
            ("meta-data", "instance-id: x\n"),
            ("network-config", "network:\n  config: disabled\n"),
        ]);
        let s = read_medium(&mut m).unwrap();
        assert!(s.customization.network.is_none());
        assert!(s.warnings[0].contains("disabled"), "{:?}", s.warnings);
    }
}
