//! One customization from several sources, with a fixed precedence and a record of which
//! source each field came from.
//!
//! Precedence, highest first: the vSphere spec (`cust.cfg`, an explicit request made for
//! this clone), the OVF environment (set at deployment), the local seed its `seedfrom`
//! names, guestinfo metadata (set on the VM, persistent across boots). Each field is taken from the highest source that sets
//! it; the network is one field (interfaces are never mixed across sources).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::Customization;

/// Where a customization came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// The vSphere guest customization spec.
    Imc,
    /// The OVF environment.
    Ovf,
    /// The local seed directory an OVF `seedfrom` property names.
    OvfSeed,
    /// guestinfo metadata.
    Guestinfo,
}

impl SourceKind {
    /// The source's name in records and output.
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Imc => "imc",
            SourceKind::Ovf => "ovf",
            SourceKind::OvfSeed => "ovfseed",
            SourceKind::Guestinfo => "guestinfo",
        }
    }
}

/// The merged customization and each field's source.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Merged {
    /// The customization to apply.
    pub customization: Customization,
    /// Field name → the source it came from.
    pub origins: BTreeMap<&'static str, SourceKind>,
}

/// Merges `sources`; the order does not matter, precedence comes from [`SourceKind`].
pub fn merge(mut sources: Vec<(SourceKind, Customization)>) -> Merged {
    sources.sort_by_key(|(k, _)| *k);
    let mut m = Merged::default();
    // Lowest precedence first, so higher sources overwrite.
    for (kind, c) in sources.into_iter().rev() {
        let out = &mut m.customization;
        let origins = &mut m.origins;
        let mut take = |name: &'static str, present: bool| {
            if present {
                origins.insert(name, kind);
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
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Identity, Network};

    fn with(host: Option<&str>, tz: Option<&str>, net: bool) -> Customization {
        Customization {
            identity: Identity {
                host_name: host.map(|h| crate::model::HostName::parse(h).unwrap()),
                time_zone: tz.map(|t| crate::model::Timezone::parse(t).unwrap()),
                ..Default::default()
            },
            network: net.then(Network::default),
            ..Default::default()
        }
    }

    #[test]
    fn higher_sources_win_field_by_field() {
        let m = merge(vec![
            (SourceKind::Guestinfo, with(Some("gi"), Some("UTC"), true)),
            (SourceKind::Imc, with(Some("imc"), None, false)),
            (
                SourceKind::Ovf,
                with(Some("ovf"), Some("Europe/Berlin"), false),
            ),
        ]);
        assert_eq!(
            m.customization
                .identity
                .host_name
                .as_ref()
                .map(|v| v.as_str()),
            Some("imc")
        );
        assert_eq!(
            m.customization
                .identity
                .time_zone
                .as_ref()
                .map(|v| v.as_str()),
            Some("Europe/Berlin")
        );
        assert!(m.customization.network.is_some());
        assert_eq!(m.origins["host-name"], SourceKind::Imc);
        assert_eq!(m.origins["time-zone"], SourceKind::Ovf);
        assert_eq!(m.origins["network"], SourceKind::Guestinfo);
        assert!(!m.origins.contains_key("root-password"));
    }
}
