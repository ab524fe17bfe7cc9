//! Network renderers: the same [`Network`] model written for each network stack, plus
//! what every stack needs around it (moving fighting configuration aside,
//! `/etc/resolv.conf`). Each stack is one entry of the table in `renderers.rs`. See
//! `docs/network.md`.

pub(crate) mod claims;
pub(crate) mod eni;
pub(crate) mod names;
pub(crate) mod netplan;
pub(crate) mod networkd;
pub(crate) mod networkmanager;
pub(crate) mod neutralise;
pub(crate) mod renderers;
pub(crate) mod resolv;
pub(crate) mod resolve;
pub(crate) mod sysconfig;
pub(crate) mod sysconfig_suse;

use super::writer::UnsafeValue;
use super::Action;
use crate::facts::NetworkFacts;
use std::collections::BTreeMap;

use crate::model::{Dns, Interface, InterfaceId, MacAddr, Network, Route, Vlan, VlanLink};

/// First line of every file vmcust renders, so people know where it came from; also how
/// a later run tells its own files from a template's leftovers.
pub const HEADER: &str = "# Written by vmcust from this VM's customization; \
a new customization replaces it.\n";

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
    /// The device that has an interface's MAC has a name no configuration file can hold.
    #[error("the device with MAC address {mac} has the name {name}, which vmcust cannot write: {reason}")]
    BadDeviceName {
        /// The MAC address.
        mac: MacAddr,
        /// The name, quoted and shortened.
        name: String,
        /// Why it is refused.
        reason: String,
    },
    /// A `match` entry needs the root's interfaces, and the root has none to read.
    #[error(
        "{entry}: it matches {selector}, but the root has no /sys/class/net to find interfaces in \
         (an offline image); match by macaddress alone, or plan on the running VM"
    )]
    Offline {
        /// The entry in the source.
        entry: String,
        /// What it matches.
        selector: String,
    },
    /// A `match` entry selects no interface.
    #[error(
        "{entry}: no interface matches {selector}; the root's physical interfaces are {known}; \
         fix the match (name and driver are shell globs such as ens*)"
    )]
    NoMatch {
        /// The entry in the source.
        entry: String,
        /// What it matches.
        selector: String,
        /// The physical interfaces there are.
        known: String,
    },
    /// A `match` entry that must select one interface selects several.
    #[error(
        "{entry}: {selector} matches {found}, but {why}, so it must match exactly one; \
         narrow the match (a macaddress, or a name without wildcards)"
    )]
    SeveralMatch {
        /// The entry in the source.
        entry: String,
        /// What it matches.
        selector: String,
        /// The interfaces it matches.
        found: String,
        /// Why one is needed.
        why: &'static str,
    },
    /// Two entries configure the same interface.
    #[error(
        "{entry} and {other} both configure {name} ({mac}); an interface can be configured \
         by one entry only: narrow one of the matches"
    )]
    Taken {
        /// The later entry.
        entry: String,
        /// The entry that has it already.
        other: String,
        /// The interface's name.
        name: String,
        /// Its MAC.
        mac: MacAddr,
    },
    /// The root has no network stack the renderer table can name, and nobody named one.
    #[error(
        "the root has no network stack vmcust can name; it looked for {looked_for}. \
         Name the stack to write for with [network] renderer in {settings} (one of {names}), \
         or --renderer for plan and apply"
    )]
    NoStack {
        /// Each renderer and what shows its stack.
        looked_for: String,
        /// The renderer names.
        names: String,
        /// The settings file.
        settings: &'static str,
    },
    /// A `set-name` gives a NIC a name another NIC has or is given.
    #[error(
        "the set-name of interface {id} ({mac}) is {name}, but {other} has that name too; \
         give each NIC its own name"
    )]
    NameTaken {
        /// The source's name for the interface.
        id: String,
        /// Its MAC address.
        mac: MacAddr,
        /// The name it asks for.
        name: String,
        /// Who has the name already.
        other: String,
    },
    /// A VLAN's link is none of the interfaces configured.
    #[error(
        "vlans.{vlan}: its link {link} is not an interface this customization configures; \
         link a VLAN to one of the ethernets"
    )]
    VlanLink {
        /// The VLAN's name.
        vlan: String,
        /// The link it names.
        link: String,
    },
    /// A VLAN's name is the name of another device.
    #[error(
        "vlans.{vlan}: {other} has that name too; give the VLAN a name of its own (such as {link}.{id})"
    )]
    VlanNameTaken {
        /// The VLAN's name.
        vlan: String,
        /// Who has the name.
        other: String,
        /// The link's device name, for the suggestion.
        link: String,
        /// The VLAN id, for the suggestion.
        id: u16,
    },
    /// A value cannot be written in the renderer's format.
    #[error(transparent)]
    Unsafe(#[from] UnsafeValue),
}

/// The network stacks vmcust can write configuration for; each has one entry in
/// [`renderers::TABLE`], which holds everything known about it (its name on the command
/// line, in the settings file and in JSON included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renderer {
    /// Netplan YAML under `/etc/netplan`.
    Netplan,
    /// systemd-networkd `.network`/`.link` files.
    Networkd,
    /// NetworkManager keyfiles.
    NetworkManager,
    /// RHEL-style `ifcfg-*` files.
    Sysconfig,
    /// ifupdown's `/etc/network/interfaces`.
    Eni,
    /// SUSE's `ifcfg-*`/`ifroute-*`, read by wicked.
    Suse,
}

/// Plans the network configuration files for `net` on a root described by `facts`,
/// for `renderer` or, when `None`, the stack detected in `facts` (an error when there is
/// none). Leftover configuration that would fight ours is moved aside first, then our
/// files are written, then `/etc/resolv.conf` if nothing else carries DNS.
pub fn plan_network(
    net: &Network,
    facts: &NetworkFacts,
    renderer: Option<Renderer>,
) -> Result<Vec<Action>, NetworkError> {
    let resolved = resolve::resolve(net, facts.links.as_deref())?;
    let net = &resolved.network;
    let devices = resolve_devices(net, facts)?;
    check_vlans(net, &devices)?;
    let entry = match renderer {
        Some(r) => r.entry(),
        None => renderers::choose(None, facts)?.renderer.entry(),
    };
    let mut actions = neutralise::leftovers(net, &devices, &facts.configs);
    actions.extend(eni::main_file(
        facts.eni_main.as_deref(),
        &devices,
        entry.renderer == Renderer::Eni,
    ));
    actions.extend((entry.render)(net, &devices, facts)?);
    actions.extend(resolv::plan(net, entry, facts)?);
    Ok(actions)
}

/// The device an interface is configured on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Device name: the `set-name`, else the kernel's name for the MAC, else (offline)
    /// the source's id.
    pub name: InterfaceId,
    /// The kernel's name was found in the root's `/sys/class/net`.
    pub from_system: bool,
    /// A `set-name` gives the NIC [`Device::name`]: the renderers rename it by MAC.
    pub set_name: bool,
    /// The kernel's name for the NIC now, when a `set-name` changes it (the boot renames
    /// the running NIC from this name before the stack starts).
    pub kernel_name: Option<InterfaceId>,
}

impl Device {
    /// The device of a VLAN: a name the stack creates, pinned to no MAC.
    pub fn vlan(v: &Vlan) -> Device {
        Device {
            name: v.name.clone(),
            from_system: false,
            set_name: false,
            kernel_name: None,
        }
    }

    /// Whether the files pin [`Device::name`] to the MAC: a name the root has, or one
    /// a `set-name` gives.
    pub fn pinned(&self) -> bool {
        self.from_system || self.set_name
    }
}

/// Finds each interface's device by MAC in the root's `/sys/class/net`. Offline roots
/// (no `/sys/class/net`) use the source's id, as cloud-init does without system devices.
/// A `set-name` names the device whatever the kernel calls it; two devices may not end
/// up with one name (two `set-name`s alike, or a `set-name` that another NIC has).
pub fn resolve_devices(net: &Network, facts: &NetworkFacts) -> Result<Vec<Device>, NetworkError> {
    let devices: Vec<Device> = net
        .interfaces
        .iter()
        .map(|iface| {
            let kernel = match &facts.devices {
                None => None,
                Some(devices) => Some(kernel_name(iface, devices)?),
            };
            let name = iface
                .set_name
                .clone()
                .or_else(|| kernel.clone())
                .unwrap_or_else(|| iface.id.clone());
            Ok(Device {
                from_system: kernel.is_some(),
                set_name: iface.set_name.is_some(),
                kernel_name: kernel.filter(|k| iface.set_name.as_ref().is_some_and(|s| s != k)),
                name,
            })
        })
        .collect::<Result<_, NetworkError>>()?;
    // Every name a NIC will have: ours, and the kernel's for NICs we do not configure.
    let ours: Vec<MacAddr> = net.interfaces.iter().map(|i| i.mac).collect();
    for (i, (iface, dev)) in net.interfaces.iter().zip(&devices).enumerate() {
        if !dev.set_name {
            continue;
        }
        let twin = net.interfaces[..i]
            .iter()
            .zip(&devices)
            .find(|(_, d)| d.name == dev.name)
            .map(|(other, _)| format!("the NIC with MAC address {}", other.mac));
        let other = twin.or_else(|| {
            facts.devices.as_ref().and_then(|all| {
                all.iter()
                    .find(|(m, n)| !ours.contains(m) && n.as_str() == dev.name.as_str())
                    .map(|(m, n)| {
                        format!(
                            "the root's {n} ({m}), which this customization does not configure,"
                        )
                    })
            })
        });
        if let Some(other) = other {
            return Err(NetworkError::NameTaken {
                id: iface.id.to_string(),
                mac: iface.mac,
                name: dev.name.to_string(),
                other,
            });
        }
    }
    Ok(devices)
}

/// A VLAN as the renderers write it: its device name and tag, the device it is stacked
/// on, and its addressing as an interface ([`Vlan::interface`]).
#[derive(Debug, Clone)]
pub(crate) struct VlanDevice<'a> {
    /// The VLAN.
    pub vlan: &'a Vlan,
    /// The device of its link.
    pub parent: &'a Device,
    /// Its own device ([`Device::vlan`]).
    pub device: Device,
    /// Its addressing, named after the VLAN, with the link's MAC.
    pub iface: Interface,
}

/// The VLANs of a resolved `net` with their links' devices (`devices`, one per
/// interface), in the source's order. [`check_vlans`] has made sure every link is there.
pub(crate) fn vlan_devices<'a>(net: &'a Network, devices: &'a [Device]) -> Vec<VlanDevice<'a>> {
    net.vlans
        .iter()
        .filter_map(|v| {
            let VlanLink::Mac(mac) = &v.link else {
                return None;
            };
            let (iface, parent) = net
                .interfaces
                .iter()
                .zip(devices)
                .find(|(i, _)| i.mac == *mac)?;
            Some(VlanDevice {
                vlan: v,
                parent,
                device: Device::vlan(v),
                iface: v.interface(iface.mac),
            })
        })
        .collect()
}

/// Every device a renderer configures, interfaces first and then the VLAN devices
/// (`vlans`, from [`vlan_devices`]): each one's addressing, device, and VLAN if it is one.
/// For the stacks that write one file per device whatever its kind (the ifcfg ones).
pub(crate) fn interfaces_then_vlans<'a>(
    net: &'a Network,
    devices: &'a [Device],
    vlans: &'a [VlanDevice<'a>],
) -> impl Iterator<Item = (&'a Interface, &'a Device, Option<&'a VlanDevice<'a>>)> {
    let nics = net
        .interfaces
        .iter()
        .zip(devices)
        .map(|(i, d)| (i, d, None));
    nics.chain(vlans.iter().map(|v| (&v.iface, &v.device, Some(v))))
}

/// The names of the VLAN devices on `parent`, for the stacks that list them on the
/// link's own configuration (networkd's `VLAN=`).
pub(crate) fn vlans_on<'a>(vlans: &'a [VlanDevice<'a>], parent: &Device) -> Vec<&'a InterfaceId> {
    vlans
        .iter()
        .filter(|v| v.parent.name == parent.name)
        .map(|v| &v.vlan.name)
        .collect()
}

/// Every VLAN of a resolved `net` is on one of its interfaces and has a name no
/// configured NIC (under its final name) has.
pub(crate) fn check_vlans(net: &Network, devices: &[Device]) -> Result<(), NetworkError> {
    for v in &net.vlans {
        let parent = match &v.link {
            VlanLink::Mac(mac) => net
                .interfaces
                .iter()
                .zip(devices)
                .find(|(i, _)| i.mac == *mac)
                .map(|(_, d)| d),
            VlanLink::Entry(_) => None,
        };
        let Some(parent) = parent else {
            return Err(NetworkError::VlanLink {
                vlan: v.name.to_string(),
                link: v.link_entry.clone(),
            });
        };
        if let Some((iface, dev)) = net
            .interfaces
            .iter()
            .zip(devices)
            .find(|(_, d)| d.name == v.name)
        {
            return Err(NetworkError::VlanNameTaken {
                vlan: v.name.to_string(),
                other: format!("the NIC with MAC address {} ({})", iface.mac, dev.name),
                link: parent.name.to_string(),
                id: v.vlan_id.get(),
            });
        }
    }
    Ok(())
}

/// The kernel's name for `iface`'s MAC among the root's `devices`.
fn kernel_name(
    iface: &Interface,
    devices: &BTreeMap<MacAddr, String>,
) -> Result<InterfaceId, NetworkError> {
    match devices.get(&iface.mac) {
        Some(name) => InterfaceId::parse(name).map_err(|reason| NetworkError::BadDeviceName {
            mac: iface.mac,
            name: crate::model::quote(name),
            reason,
        }),
        None => Err(NetworkError::MacNotFound {
            id: iface.id.to_string(),
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
    }
}

/// The NICs a `set-name` renames on the running system, as (kernel's name now, new
/// name): what the boot does with `ip link` before the stack starts, since udev named
/// them before the new rules or `.link` files existed.
pub(crate) fn live_renames(
    net: &Network,
    facts: &NetworkFacts,
) -> Result<Vec<(InterfaceId, InterfaceId)>, NetworkError> {
    let resolved = resolve::resolve(net, facts.links.as_deref())?;
    let devices = resolve_devices(&resolved.network, facts)?;
    Ok(devices
        .into_iter()
        .filter_map(|d| d.kernel_name.map(|k| (k, d.name)))
        .collect())
}

/// Whether a file's text was written by vmcust (it carries [`HEADER`]).
pub(crate) fn written_by_vmcust(text: &str) -> bool {
    text.starts_with(HEADER.trim_end())
}

/// The machine-wide DNS followed by every interface's and VLAN's own, without repeats:
/// what the stacks that keep DNS for the whole machine write.
pub(crate) fn machine_dns(net: &Network) -> Dns {
    let own = net.interfaces.iter().map(|i| &i.ip.dns);
    own.chain(net.vlans.iter().map(|v| &v.ip.dns))
        .fold(net.dns.clone(), |acc, d| merged_dns(&acc, d))
}

/// The interface's own DNS first, then the machine-wide settings, without repeats.
/// Most stacks have no machine-wide DNS of their own, so every renderer puts the
/// machine-wide part on every interface.
pub(crate) fn merged_dns(own: &Dns, global: &Dns) -> Dns {
    let mut out = own.clone();
    for s in &global.servers {
        if !out.servers.contains(s) {
            out.servers.push(*s);
        }
    }
    for d in &global.search {
        if !out.search.contains(d) {
            out.search.push(d.clone());
        }
    }
    out
}

/// Splits routes of one family into the preferred default route (lowest metric, first
/// listed on a tie) and the rest, for stacks that have a single "gateway" setting.
pub(crate) fn split_default<'a>(
    routes: impl Iterator<Item = &'a Route>,
) -> (Option<&'a Route>, Vec<&'a Route>) {
    let routes: Vec<&Route> = routes.collect();
    let best = routes
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_default())
        .min_by_key(|(i, r)| (r.metric.unwrap_or(0), *i))
        .map(|(i, _)| i);
    match best {
        None => (None, routes),
        Some(i) => {
            let mut rest = routes;
            let gw = rest.remove(i);
            (Some(gw), rest)
        }
    }
}
