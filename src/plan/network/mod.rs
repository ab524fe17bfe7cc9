//! Network renderers: the same [`Network`] model written for each network stack.

pub mod netplan;

use super::Action;
use crate::facts::NetworkFacts;
use crate::model::{MacAddr, Network};

/// Why a network configuration cannot be rendered for this root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    /// No network device has the MAC address of an interface.
    #[error(
        "no network device has MAC address {mac} ({id}); the root's /sys/class/net has {known}; \
         check the NIC's MAC in the spec against the VM's hardware"
    )]
    MacNotFound {
        /// The source's name for the interface.
        id: String,
        /// Its MAC address.
        mac: MacAddr,
        /// The devices that do exist, for the message.
        known: String,
    },
}

/// The network stacks vmcust can write configuration for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Renderer {
    /// Netplan YAML under `/etc/netplan` (Ubuntu, Debian with netplan.io).
    Netplan,
}

/// Plans the network configuration files for `net` on a root described by `facts`,
/// for `renderer` or, when `None`, the stack the root uses.
pub fn plan_network(
    net: &Network,
    facts: &NetworkFacts,
    renderer: Option<Renderer>,
) -> Result<Vec<Action>, NetworkError> {
    let devices = resolve_devices(net, facts)?;
    match renderer.unwrap_or(Renderer::Netplan) {
        Renderer::Netplan => Ok(netplan::render(net, &devices)),
    }
}

/// The device an interface is configured on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Device name: the kernel's name for the MAC, or the source's id offline.
    pub name: String,
    /// The name was found in the root's `/sys/class/net` (so it may be pinned).
    pub from_system: bool,
}

/// Finds each interface's device by MAC in the root's `/sys/class/net`. Offline roots
/// (no `/sys/class/net`) use the source's id, as cloud-init does without system devices.
pub fn resolve_devices(net: &Network, facts: &NetworkFacts) -> Result<Vec<Device>, NetworkError> {
    net.interfaces
        .iter()
        .map(|iface| match &facts.devices {
            None => Ok(Device {
                name: iface.id.clone(),
                from_system: false,
            }),
            Some(devices) => match devices.get(&iface.mac) {
                Some(name) => Ok(Device {
                    name: name.clone(),
                    from_system: true,
                }),
                None => Err(NetworkError::MacNotFound {
                    id: iface.id.clone(),
                    mac: iface.mac,
                    known: if devices.is_empty() {
                        "no devices".into()
                    } else {
                        devices
                            .iter()
                            .map(|(m, n)| format!("{n} ({m})"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                }),
            },
        })
        .collect()
}
