//! The OVF environment (`ovf-env.xml`) as a [`Customization`]: the properties cloud-init
//! reads (reference §6.5) plus an appliance's own property names through a mapping file
//! (see [`super::appliance`]).

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use vmcust_ovf::Environment;

use super::appliance::PropertyMap;
use super::field::{field, host_and_domain};
use super::netconfig;
use super::ovf_locate::read_path;
use crate::failure::Failure;
use crate::model::{
    Customization, Identity, InstanceId, InvalidValue, RootPassword, Secret, SeedLocation, SshKey,
};

/// Why an OVF environment cannot be used. Messages name the property, never its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OvfSourceError {
    /// `network-config` is neither base64 of YAML nor YAML.
    #[error("ovf property network-config: {0}; give base64 of a netplan v2 or v1 network config")]
    NetworkConfig(String),
    /// A mapped appliance property has a bad value.
    #[error(transparent)]
    Appliance(#[from] super::appliance::ApplianceError),
    /// A property's value is not usable (a host name with a newline, …).
    #[error(transparent)]
    Invalid(#[from] InvalidValue),
}

/// What the OVF environment asks for.
#[derive(Debug, Clone, Default)]
pub(crate) struct OvfData {
    /// The customization (identity, network, instance id).
    pub customization: Customization,
    /// User-data from the `user-data` property (base64-decoded when it is base64).
    pub user_data: Option<Vec<u8>>,
    /// `seedfrom`, if given (only local `file://` seeds are read).
    pub seedfrom: Option<SeedLocation>,
    /// Things ignored or assumed, for the user.
    pub warnings: Vec<String>,
}

/// Lenient base64 as cloud-init uses for OVF properties: whitespace is ignored and padding
/// is optional.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

fn lenient_base64(text: &str) -> Option<Vec<u8>> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.is_empty() {
        return None;
    }
    LENIENT.decode(compact).ok()
}

/// Reads the environment's properties into a customization. `map` adds an appliance's own
/// property names (`guestinfo.hostname`, `ip0`, …).
pub(crate) fn from_environment(
    env: &Environment,
    map: Option<&PropertyMap>,
) -> Result<OvfData, OvfSourceError> {
    let prop = |k: &str| env.property(k).map(str::trim).filter(|v| !v.is_empty());
    let mut data = OvfData::default();
    let at = |k: &str| format!("ovf property {k}");
    let mut c = Customization::default();
    if let Some(id) = prop("instance-id") {
        c.instance_id = Some(field(at("instance-id"), InstanceId::parse(id))?);
    }
    // The later of `hostname` and `local-hostname` in the document wins, as cloud-init.
    let host =
        env.properties.iter().rev().find(|p| {
            (p.key == "hostname" || p.key == "local-hostname") && !p.value.trim().is_empty()
        });
    if let Some(h) = host {
        let (short, domain) = host_and_domain(&at(&h.key), &h.value)?;
        c.identity = Identity {
            host_name: Some(short),
            domain,
            ..Default::default()
        };
    }
    if let Some(keys) = prop("public-keys") {
        c.identity.ssh_authorized_keys = SshKey::lines_of(keys)
            .map(|(n, k)| {
                field(
                    format!("ovf property public-keys: line {n}"),
                    SshKey::parse(k),
                )
            })
            .collect::<Result<_, _>>()?;
    }
    if let Some(pw) = env.property("password").filter(|p| !p.is_empty()) {
        c.identity.root_password = Some(RootPassword {
            password: Some(Secret::new(pw.to_string())),
            expire: false,
        });
    }
    if let Some(ud) = prop("user-data") {
        data.user_data = Some(lenient_base64(ud).unwrap_or_else(|| ud.as_bytes().to_vec()));
    }
    if let Some(nc) = prop("network-config") {
        let text = match lenient_base64(nc).map(String::from_utf8) {
            Some(Ok(t)) => t,
            // Not base64: take it as YAML text (cloud-init would ignore it).
            _ => nc.to_string(),
        };
        let value: serde_norway::Value = serde_norway::from_str(&text)
            .map_err(|e| OvfSourceError::NetworkConfig(format!("not yaml: {e}")))?;
        let translated =
            netconfig::translate(&value).map_err(|e| OvfSourceError::NetworkConfig(e.0))?;
        data.warnings.extend(translated.warnings);
        c.network = translated.network;
    }
    if let Some(seed) = prop("seedfrom") {
        data.seedfrom = Some(field(at("seedfrom"), SeedLocation::parse(seed))?);
    }
    if let Some(map) = map {
        map.apply(env, &mut c, &mut data.warnings)?;
    }
    data.customization = c;
    Ok(data)
}

/// The OVF environment: a seed file, `guestinfo.ovfEnv` (when guestinfo may be read) or an
/// OVF transport CD at boot, `--ovf FILE|ISO` on the command line; with the local seed
/// its `seedfrom` names (`ovfseed`: its metadata ranks below the environment, its
/// user-data replaces the environment's, as in cloud-init).
pub(crate) struct Ovf;

impl super::Source for Ovf {
    fn names(&self) -> &'static [&'static str] {
        &["ovf", "ovfseed"]
    }

    fn prefetch(&self, rpc: &mut dyn crate::host::GuestRpc) {
        rpc.prefetch(&[super::guestinfo::OVF_ENV]);
    }

    fn read(&self, door: &mut super::Door) -> Result<Vec<super::SourceData>, Failure> {
        let found = match &door.given {
            Some(given) => match &given.ovf {
                Some(path) => Some(read_path(path).map_err(|e| Failure::of(&e))?),
                None => None,
            },
            None => super::ovf_locate::locate(
                door.root,
                door.rpc
                    .as_mut()
                    .map(|r| &mut **r as &mut dyn crate::host::GuestRpc),
                &door.media,
            )
            .map_err(|e| Failure::of(&e))?,
        };
        let Some(env) = found else {
            return Ok(Vec::new());
        };
        let place = format!("the OVF environment ({})", env.origin);
        let parsed = vmcust_ovf::parse(&env.xml).map_err(|e| {
            let hint = match super::sniff::hint(&env.xml, super::sniff::Kind::OvfEnvironment) {
                Some(h) => format!("\n{}: {h}", env.origin),
                None => String::new(),
            };
            Failure::invalid(format!("OVF environment from {}: {e}{hint}", env.origin))
        })?;
        let map = door.mapping.load(door.root)?;
        let data = from_environment(&parsed, map.as_ref())
            .map_err(|e| Failure::invalid(format!("OVF environment from {}: {e}", env.origin)))?;
        let mut out = super::SourceData::new("ovf", place);
        out.warnings.extend(
            data.warnings
                .iter()
                .map(|w| format!("OVF environment: {w}")),
        );
        out.places
            .insert("time-zone", "OVF environment: time zone".into());
        out.customization = data.customization;
        out.user_data = out.own(data.user_data);
        let mut all = vec![out];
        if let Some(seed) = &data.seedfrom {
            match seed.local_dir() {
                Some(dir) => {
                    let seed = read_seed(door.root, std::path::Path::new(dir))?;
                    if seed.user_data.is_some() {
                        all[0].user_data = None;
                    }
                    all.push(seed);
                }
                None => all[0].warnings.push(format!(
                    "OVF seedfrom {seed} is not followed: vmcust reads only local file:// seeds"
                )),
            }
        }
        Ok(all)
    }
}

/// The local seed an OVF `seedfrom` names, read from the root.
fn read_seed(
    root: &crate::root::Root,
    dir: &std::path::Path,
) -> Result<super::SourceData, Failure> {
    let read = |name: &str| {
        root.read(&dir.join(name))
            .map_err(|e| Failure::io(format!("reading {}: {e}", dir.join(name).display())))
    };
    let mut out = super::SourceData::new("ovfseed", format!("the OVF seed {}", dir.display()));
    out.places.insert("time-zone", "OVF seed: time zone".into());
    if let Some(md) = read("meta-data")? {
        let key = "seedfrom meta-data";
        let text = String::from_utf8(md)
            .map_err(|_| Failure::invalid(format!("{key} is not UTF-8 text")))?;
        let md = super::metadata::parse(key, &text).map_err(|e| Failure::invalid(e.to_string()))?;
        let (c, warnings) = super::metadata::customization(key, &md)
            .map_err(|e| Failure::invalid(e.to_string()))?;
        out.warnings
            .extend(warnings.into_iter().map(|w| format!("{key}: {w}")));
        out.customization = c;
    }
    out.user_data = out.own(read("user-data")?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(props: &[(&str, &str)]) -> Environment {
        let mut xml = String::from(
            "<?xml version=\"1.0\"?><Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" \
             xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\"><PropertySection>",
        );
        for (k, v) in props {
            xml.push_str(&format!("<Property oe:key=\"{k}\" oe:value=\"{v}\"/>"));
        }
        xml.push_str("</PropertySection></Environment>");
        vmcust_ovf::parse(xml.as_bytes()).unwrap()
    }

    #[test]
    fn cloud_init_properties() {
        let ud = LENIENT.encode("#!/bin/sh\necho hello world\n");
        let e = env(&[
            ("user-data", &ud),
            ("password", "passw0rd"),
            ("instance-id", "inst-001"),
            ("hostname", "web.example.com"),
            ("public-keys", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f a@b"),
        ]);
        let d = from_environment(&e, None).unwrap();
        assert_eq!(d.customization.instance_id.as_deref(), Some("inst-001"));
        assert_eq!(
            d.user_data.as_deref(),
            Some(&b"#!/bin/sh\necho hello world\n"[..])
        );
        let id = &d.customization.identity;
        assert_eq!(id.host_name.as_ref().map(|v| v.as_str()), Some("web"));
        assert_eq!(id.domain.as_ref().map(|v| v.as_str()), Some("example.com"));
        assert_eq!(id.ssh_authorized_keys, ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f a@b"]);
        let pw = id.root_password.as_ref().unwrap();
        assert_eq!(pw.password.as_ref().unwrap().expose(), "passw0rd");
        assert!(!format!("{d:?}").contains("passw0rd"));
    }

    #[test]
    fn user_data_that_is_not_base64_is_kept_as_text() {
        let d = from_environment(&env(&[("user-data", "my-user-data")]), None).unwrap();
        assert_eq!(d.user_data.as_deref(), Some(&b"my-user-data"[..]));
    }

    #[test]
    fn network_config_base64_or_plain() {
        let yaml = "network:\n  version: 2\n  ethernets:\n    nic0:\n      match:\n        macaddress: '00:50:56:01:02:03'\n      dhcp4: true\n";
        for value in [LENIENT.encode(yaml), yaml.replace('\n', "&#10;")] {
            let d = from_environment(&env(&[("network-config", &value)]), None).unwrap();
            let net = d.customization.network.expect("network");
            assert_eq!(net.interfaces[0].mac.to_string(), "00:50:56:01:02:03");
        }
        let err = from_environment(&env(&[("network-config", "{{{")]), None).unwrap_err();
        assert!(err.to_string().contains("network-config"), "{err}");
    }
}
