//! Discover: every enabled source of the registry, found and read through one [`Door`],
//! merged into one validated [`SourceData`] with each field's origin. The command line
//! (`show`, `plan`, `apply`, `detect`) and both boot paths call this and nothing else.

use super::merge::merge;
use super::{metadata, registry, Door, SourceData};
use crate::failure::Failure;
use crate::model::InstanceId;

impl SourceData {
    /// The meta-data a real cloud-init is given with the user-data (its NoCloud seed,
    /// `src/boot/late.rs`), naming the instance id and host name vmcust applied: the raw
    /// meta-data as received when it names them (a NoCloud seed's, guestinfo's, the vSphere
    /// spec's), else that mapping with `instance-id` and `local-hostname` set to them (the
    /// raw meta-data came from another source than these fields, or lacks them), else a
    /// NoCloud meta-data of just these two (a config drive's JSON, an OVF environment).
    pub(crate) fn cloud_init_meta_data(&self) -> Vec<u8> {
        let c = &self.customization;
        let raw = self
            .raw_metadata
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok());
        let names_ours = |text: &str| {
            let Ok(md) = metadata::parse("meta-data", text) else {
                return false;
            };
            metadata::customization("meta-data", &md).is_ok_and(|(m, _)| {
                m.instance_id == c.instance_id
                    && m.identity.host_name == c.identity.host_name
                    && m.identity.domain == c.identity.domain
            })
        };
        if let Some(text) = raw.filter(|t| names_ours(t)) {
            return text.as_bytes().to_vec();
        }
        let mut map = raw
            .and_then(|t| metadata::load_json_or_yaml("meta-data", t).ok())
            .unwrap_or_default();
        let mut set = |key: &str, value: String| {
            map.insert(
                serde_norway::Value::String(key.to_string()),
                serde_norway::Value::String(value),
            );
        };
        if let Some(id) = &c.instance_id {
            set("instance-id", id.to_string());
        }
        if let Some(host) = &c.identity.host_name {
            let name = match &c.identity.domain {
                Some(d) => format!("{}.{d}", host.as_str()),
                None => host.as_str().to_string(),
            };
            set("local-hostname", name);
        }
        serde_norway::to_string(&serde_norway::Value::Mapping(map))
            .unwrap_or_default()
            .into_bytes()
    }
}

/// Reads every source `door` enables, in precedence order, validates and merges them;
/// the instance id defaults to `fallback_id`.
pub(crate) fn discover(door: &mut Door, fallback_id: &InstanceId) -> Result<SourceData, Failure> {
    // The host's answers come while the seed sources look at the root's media: through
    // the tools each read is a process, tens of milliseconds on an emulated boot.
    if let Some(rpc) = door.rpc.as_mut() {
        for source in registry::SOURCES {
            if door.enabled.contains(source.names()[0]) {
                source.prefetch(&mut **rpc);
            }
        }
    }
    let mut all = Vec::new();
    for source in registry::SOURCES {
        if door.enabled.contains(source.names()[0]) {
            let start = std::time::Instant::now();
            all.extend(source.read(door)?);
            // On the boot path: which source a slow discovery spent its time in.
            tracing::debug!(
                "source {} read in {:.3} ms",
                source.names()[0],
                start.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
    let mut g = merge(all);
    // The host name and the domain may come from two sources, each fine on its own.
    let id = &g.customization.identity;
    super::field::fqdn_fits(
        "host name and domain",
        id.host_name.as_ref(),
        id.domain.as_ref(),
    )?;
    let place = match (g.places.get("time-zone"), g.origins.get("time-zone")) {
        (Some(p), _) => p.clone(),
        (None, Some(from)) => format!("{from}: time zone"),
        (None, None) => "time zone".to_string(),
    };
    if let Some(zone) = &id.time_zone {
        super::timezone::check(door.root, zone, &place)?;
    }
    if g.customization.instance_id.is_none() {
        g.customization.instance_id = Some(fallback_id.clone());
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Customization, DnsName, HostName, Identity};

    fn gathered(raw: Option<&str>) -> SourceData {
        SourceData {
            customization: Customization {
                instance_id: Some(InstanceId::parse("i-merged").unwrap()),
                identity: Identity {
                    host_name: Some(HostName::parse("web").unwrap()),
                    domain: Some(DnsName::parse("example.com").unwrap()),
                    ..Default::default()
                },
                ..Default::default()
            },
            raw_metadata: raw.map(|r| r.as_bytes().to_vec()),
            ..SourceData::default()
        }
    }

    fn mapping(bytes: &[u8]) -> serde_norway::Mapping {
        serde_norway::from_slice(bytes).unwrap()
    }

    #[test]
    fn meta_data_naming_the_applied_instance_and_host_is_kept_as_received() {
        let raw = "# from the seed\ninstance-id: i-merged\nlocal-hostname: web.example.com\n";
        assert_eq!(gathered(Some(raw)).cloud_init_meta_data(), raw.as_bytes());
        let json = r#"{"instance-id": "i-merged", "hostname": "web.example.com"}"#;
        assert_eq!(gathered(Some(json)).cloud_init_meta_data(), json.as_bytes());
    }

    #[test]
    fn meta_data_of_another_instance_or_host_gets_the_applied_ones() {
        for raw in [
            "instance-id: i-other\nlocal-hostname: web.example.com\npublic-keys: [k]\n",
            "instance-id: i-merged\nlocal-hostname: db\npublic-keys: [k]\n",
            "local-hostname: web.example.com\npublic-keys: [k]\n",
        ] {
            let m = mapping(&gathered(Some(raw)).cloud_init_meta_data());
            assert_eq!(m["instance-id"], "i-merged", "{raw}");
            assert_eq!(m["local-hostname"], "web.example.com", "{raw}");
            assert_eq!(m["public-keys"][0], "k", "{raw}: the rest is kept");
        }
    }

    #[test]
    fn without_meta_data_a_nocloud_one_is_made() {
        for raw in [None, Some("not: [valid"), Some("\u{0}")] {
            let md = gathered(raw).cloud_init_meta_data();
            let m = mapping(&md);
            assert_eq!(m["instance-id"], "i-merged");
            assert_eq!(m["local-hostname"], "web.example.com");
            assert_eq!(m.len(), 2, "{}", String::from_utf8_lossy(&md));
        }
    }
}
