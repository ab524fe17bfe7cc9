//! One customization from several sources, with each field taken from the highest source
//! that sets it ([`super::registry`]'s order) and a record of which source that was.
//! User-data, vendor-data, raw metadata, the guestinfo keys to redact and
//! `wait-on-network` are fields too: no source's data is mixed with another's within a
//! field (the network is one field: interfaces are never mixed across sources).

use super::{registry, SourceData};

/// Merges `sources`, one record each; their order does not matter, precedence comes from
/// the registry. The result has every source found and their warnings in precedence order,
/// the vSphere spec's engine options from the highest source that has them, and each field
/// taken with its origin and place.
pub(crate) fn merge(mut sources: Vec<SourceData>) -> SourceData {
    let rank = |s: &SourceData| {
        s.found
            .first()
            .map_or(usize::MAX, |f| registry::rank(f.source))
    };
    sources.sort_by_key(rank);
    let mut m = SourceData::default();
    for s in &mut sources {
        m.found.extend(s.found.iter().cloned());
        m.warnings.append(&mut s.warnings);
        m.imc = m.imc.or(s.imc);
    }
    // Lowest precedence first, so higher sources overwrite.
    for s in sources.into_iter().rev() {
        let Some(kind) = s.found.first().map(|f| f.source) else {
            continue;
        };
        let c = s.customization;
        let out = &mut m.customization;
        let origins = &mut m.origins;
        let places = &mut m.places;
        let own_places = s.places;
        let mut take = |name: &'static str, present: bool| {
            if present {
                origins.insert(name, kind);
                places.remove(name);
                if let Some(p) = own_places.get(name) {
                    places.insert(name, p.clone());
                }
            }
            present
        };
        if take("instance-id", c.instance_id.is_some()) {
            out.instance_id = c.instance_id;
        }
        if take("marker-id", c.marker_id.is_some()) {
            out.marker_id = c.marker_id;
        }
        let id = c.identity;
        if take("host-name", id.host_name.is_some()) {
            out.identity.host_name = id.host_name;
        }
        if take("domain", id.domain.is_some()) {
            out.identity.domain = id.domain;
        }
        if take("time-zone", id.time_zone.is_some()) {
            out.identity.time_zone = id.time_zone;
        }
        if take("hardware-clock", id.hardware_clock.is_some()) {
            out.identity.hardware_clock = id.hardware_clock;
        }
        if take("root-password", id.root_password.is_some()) {
            out.identity.root_password = id.root_password;
        }
        if take("ssh-authorized-keys", !id.ssh_authorized_keys.is_empty()) {
            out.identity.ssh_authorized_keys = id.ssh_authorized_keys;
        }
        if take("network", c.network.is_some()) {
            out.network = c.network;
        }
        if take("custom-script", c.custom_script.is_some()) {
            out.custom_script = c.custom_script;
        }
        if take("user-data", s.user_data.is_some()) {
            m.user_data = s.user_data;
        }
        if take("vendor-data", s.vendor_data.is_some()) {
            m.vendor_data = s.vendor_data;
        }
        if take("raw-metadata", s.raw_metadata.is_some()) {
            m.raw_metadata = s.raw_metadata;
        }
        if take("redact", !s.redact.is_empty()) {
            m.redact = s.redact;
        }
        if take("wait-on-network", s.wait_on_network.is_some()) {
            m.wait_on_network = s.wait_on_network;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Customization, Identity, Network};
    use crate::source::UserData;

    fn with(
        source: &'static str,
        host: Option<&str>,
        tz: Option<&str>,
        net: bool,
        ud: Option<&str>,
    ) -> SourceData {
        SourceData {
            customization: Customization {
                identity: Identity {
                    host_name: host.map(|h| crate::model::HostName::parse(h).unwrap()),
                    time_zone: tz.map(|t| crate::model::Timezone::parse(t).unwrap()),
                    ..Default::default()
                },
                network: net.then(Network::default),
                ..Default::default()
            },
            user_data: ud.map(|u| UserData {
                bytes: u.as_bytes().to_vec(),
                from: source,
            }),
            ..SourceData::new(source, source)
        }
    }

    #[test]
    fn higher_sources_win_field_by_field() {
        let m = merge(vec![
            with("guestinfo", Some("gi"), Some("UTC"), true, Some("#!gi")),
            with("imc", Some("imc"), None, false, None),
            with(
                "ovf",
                Some("ovf"),
                Some("Europe/Berlin"),
                false,
                Some("#!ovf"),
            ),
        ]);
        let id = &m.customization.identity;
        assert_eq!(id.host_name.as_ref().map(|v| v.as_str()), Some("imc"));
        assert_eq!(
            id.time_zone.as_ref().map(|v| v.as_str()),
            Some("Europe/Berlin")
        );
        assert!(m.customization.network.is_some());
        assert_eq!(m.origins["host-name"], "imc");
        assert_eq!(m.origins["time-zone"], "ovf");
        assert_eq!(m.origins["network"], "guestinfo");
        assert_eq!(m.origins["user-data"], "ovf");
        assert_eq!(m.user_data.unwrap().bytes, b"#!ovf");
        assert!(!m.origins.contains_key("root-password"));
    }

    /// User-data follows the same precedence as every field: a spec's raw user-data beats
    /// the OVF environment's, whatever order they are read in (issue 17: `plan --imc
    /// raw.cfg --ovf env.xml` took the OVF user-data).
    #[test]
    fn user_data_follows_precedence_not_reading_order() {
        for order in [[0, 1], [1, 0]] {
            let both = [
                with("imc", None, None, false, Some("#!imc")),
                with("ovf", None, None, false, Some("#!ovf")),
            ];
            let m = merge(order.iter().map(|&i| both[i].clone()).collect());
            assert_eq!(m.user_data.as_ref().unwrap().from, "imc");
            assert_eq!(m.user_data.unwrap().bytes, b"#!imc");
        }
    }

    #[test]
    fn a_field_place_comes_with_the_field() {
        let mut imc = with("imc", None, Some("UTC"), false, None);
        imc.places.insert("time-zone", "cust.cfg: line 3".into());
        let ovf = with("ovf", None, Some("Europe/Paris"), false, None);
        let m = merge(vec![ovf.clone(), imc]);
        assert_eq!(m.places["time-zone"], "cust.cfg: line 3");
        let m = merge(vec![ovf]);
        assert!(!m.places.contains_key("time-zone"));
    }
}
