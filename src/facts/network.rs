//! Facts about the root's networking: its devices (by MAC, and each with its name and
//! driver for `match` entries), which network stack it runs,
//! the configuration files already there, and who manages `/etc/resolv.conf`.
//!
//! Gathering is all I/O; deciding what to do with these facts is the planner's job,
//! which stays pure: the renderer table (`plan::network::renderers::detect`) names the
//! stack from [`Stacks`] when the renderer is chosen.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::model::MacAddr;
use crate::root::{Existing, Root};

/// What the planner knows about the root's networking.
#[derive(Debug, Clone, Default)]
pub struct NetworkFacts {
    /// Network devices by MAC, from the root's `/sys/class/net`; `None` when the root
    /// has no `/sys/class/net` at all (an offline image).
    pub devices: Option<BTreeMap<MacAddr, String>>,
    /// Every device of the root's `/sys/class/net` that has a MAC address, in name
    /// order, with its driver: what `match` entries are resolved against. `None`
    /// when the root has no `/sys/class/net` at all.
    pub links: Option<Vec<Link>>,
    /// Which network stacks are installed or enabled.
    pub stacks: Stacks,
    /// Configuration files of every stack that may configure an interface, with their
    /// text (leftovers of the template among them).
    pub configs: Vec<ConfigFile>,
    /// The text of `/etc/network/interfaces`, if it exists.
    pub eni_main: Option<String>,
    /// The text of SUSE's `/etc/sysconfig/network/config` (netconfig's settings), if it
    /// exists.
    pub suse_config: Option<String>,
    /// What `/etc/resolv.conf` is now.
    pub resolv_conf: ResolvConf,
}

/// One network device of the root, as `/sys/class/net/<name>` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The kernel's name for it.
    pub name: String,
    /// Its hardware address.
    pub mac: MacAddr,
    /// The name of its driver (the target of the `device/driver` link), if it has one.
    pub driver: Option<String>,
    /// It has a `device` (a NIC on a bus); loopback, bonds, bridges and VLANs have none.
    pub physical: bool,
}

/// Most entries of `/sys/class/net` read: a bound against a hostile or broken root.
const MAX_LINKS: usize = 4096;

/// Which network stacks the root has. "Enabled" means systemd starts the service at
/// boot: a link in some `/etc/systemd/system/*.wants/` directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stacks {
    /// `/etc/netplan` exists and the netplan tool is installed.
    pub netplan: bool,
    /// `NetworkManager.service` is enabled.
    pub network_manager: bool,
    /// `systemd-networkd.service` is enabled.
    pub networkd: bool,
    /// `/etc/sysconfig/network-scripts` exists (RHEL-style ifcfg files).
    pub sysconfig: bool,
    /// `/etc/network/interfaces` exists and `ifup` is installed.
    pub ifupdown: bool,
    /// SUSE's sysconfig: `/etc/sysconfig/network` is a directory holding an `ifcfg-*`
    /// file, or wicked is installed or enabled. (On RHEL the same path is a file.)
    pub suse: bool,
    /// The `resolvconf` program is installed (it turns ENI `dns-*` lines into
    /// `/etc/resolv.conf`).
    pub resolvconf: bool,
}

/// One existing configuration file and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Path inside the root.
    pub path: PathBuf,
    /// Its contents (lossily decoded: only searched for names and MACs).
    pub text: String,
}

/// The state of `/etc/resolv.conf`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ResolvConf {
    /// It does not exist.
    #[default]
    Missing,
    /// A regular file with this text.
    File(String),
    /// A symbolic link to this target (systemd-resolved's stub, NetworkManager's file…).
    Symlink(PathBuf),
    /// Something that is neither (a directory): left alone.
    Other,
}

/// Which file names in a configuration directory the stack reads.
type NameFilter = fn(&str) -> bool;

/// Directories whose files configure interfaces, and which file names in them count.
/// Only the top level is read, as each stack does: backups vmcust moves into a
/// subdirectory are therefore invisible to the stacks and to the next run.
const CONFIG_DIRS: &[(&str, NameFilter)] = &[
    ("/etc/netplan", |n| n.ends_with(".yaml")),
    ("/etc/NetworkManager/system-connections", |n| {
        !n.starts_with('.')
    }),
    ("/etc/systemd/network", |n| n.ends_with(".network")),
    ("/etc/sysconfig/network-scripts", |n| {
        n.starts_with("ifcfg-") && n != "ifcfg-lo"
    }),
    ("/etc/network/interfaces.d", |n| !n.starts_with('.')),
    // SUSE: wicked reads `ifcfg-<dev>` and `ifroute-<dev>`; the loopback's files are
    // never ours to move.
    ("/etc/sysconfig/network", |n| {
        (n.starts_with("ifcfg-") || n.starts_with("ifroute-"))
            && n != "ifcfg-lo"
            && n != "ifroute-lo"
    }),
];

impl NetworkFacts {
    /// Reads the network facts of `root`.
    pub fn gather(root: &Root) -> Result<NetworkFacts> {
        let at = |what: &str| format!("{what} in {}", root.path().display());
        let links = links(root).with_context(|| at("listing /sys/class/net"))?;
        let stacks = stacks(root).with_context(|| at("looking for network stacks"))?;
        Ok(NetworkFacts {
            devices: links.as_deref().map(by_mac),
            links,
            stacks,
            configs: configs(root).with_context(|| at("reading network configuration"))?,
            eni_main: root
                .read(Path::new("/etc/network/interfaces"))
                .with_context(|| at("reading /etc/network/interfaces"))?
                .map(|b| String::from_utf8_lossy(&b).into_owned()),
            suse_config: suse_config(root)
                .with_context(|| at("reading /etc/sysconfig/network/config"))?,
            resolv_conf: resolv_conf(root).with_context(|| at("inspecting /etc/resolv.conf"))?,
        })
    }
}

fn stacks(root: &Root) -> io::Result<Stacks> {
    let any_file = |paths: &[&str]| paths.iter().any(|p| root.is_file(Path::new(p)));
    let enabled = enabled_units(root)?;
    let is_enabled = |unit: &str| enabled.iter().any(|u| u == unit);
    let wicked = any_file(&[
        "/usr/sbin/wicked",
        "/sbin/wicked",
        "/usr/lib/systemd/system/wicked.service",
    ]);
    Ok(Stacks {
        netplan: root.is_dir(Path::new("/etc/netplan"))
            && any_file(&["/usr/sbin/netplan", "/sbin/netplan", "/usr/bin/netplan"]),
        network_manager: is_enabled("NetworkManager.service"),
        networkd: is_enabled("systemd-networkd.service"),
        sysconfig: root.is_dir(Path::new("/etc/sysconfig/network-scripts")),
        ifupdown: root.is_file(Path::new("/etc/network/interfaces"))
            && any_file(&["/usr/sbin/ifup", "/sbin/ifup"]),
        suse: suse_sysconfig(root)? || wicked || is_enabled("wicked.service"),
        resolvconf: any_file(&["/usr/sbin/resolvconf", "/sbin/resolvconf"]),
    })
}

/// `/etc/sysconfig/network` is a directory with an `ifcfg-*` file in it: SUSE's layout
/// (RHEL keeps a file of that name and its ifcfg files in `network-scripts`).
fn suse_sysconfig(root: &Root) -> io::Result<bool> {
    let dir = Path::new("/etc/sysconfig/network");
    if !root.is_dir(dir) {
        return Ok(false);
    }
    Ok(root.list_dir(dir)?.iter().any(|n| n.starts_with("ifcfg-")))
}

/// The text of SUSE's netconfig settings. Only looked for when `/etc/sysconfig/network`
/// is a directory: on RHEL it is a file, and reading below it would fail.
fn suse_config(root: &Root) -> io::Result<Option<String>> {
    if !root.is_dir(Path::new("/etc/sysconfig/network")) {
        return Ok(None);
    }
    Ok(root
        .read(Path::new("/etc/sysconfig/network/config"))?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Unit names linked from any `/etc/systemd/system/*.wants/` directory. The links are
/// only listed, never followed: in an offline image they point at paths of the image.
fn enabled_units(root: &Root) -> io::Result<Vec<String>> {
    let system = Path::new("/etc/systemd/system");
    let mut units = Vec::new();
    for dir in root.list_dir(system)? {
        if dir.ends_with(".wants") {
            units.extend(root.list_dir(&system.join(dir))?);
        }
    }
    Ok(units)
}

fn configs(root: &Root) -> io::Result<Vec<ConfigFile>> {
    let mut out = Vec::new();
    for (dir, wanted) in CONFIG_DIRS {
        // `/etc/sysconfig/network` is a plain file on RHEL, not a directory to list.
        if !root.is_dir(Path::new(dir)) {
            continue;
        }
        for name in root.list_dir(Path::new(dir))? {
            let path = Path::new(dir).join(&name);
            if !wanted(&name) || !root.is_file(&path) {
                continue;
            }
            if let Some(bytes) = root.read(&path)? {
                out.push(ConfigFile {
                    path,
                    text: String::from_utf8_lossy(&bytes).into_owned(),
                });
            }
        }
    }
    Ok(out)
}

fn resolv_conf(root: &Root) -> io::Result<ResolvConf> {
    Ok(match root.existing(Path::new("/etc/resolv.conf"))? {
        Existing::Missing => ResolvConf::Missing,
        Existing::Other => ResolvConf::Other,
        Existing::Symlink(target) => ResolvConf::Symlink(target),
        Existing::File { contents, .. } => {
            ResolvConf::File(String::from_utf8_lossy(&contents).into_owned())
        }
    })
}

/// The devices of `/sys/class/net` that have a non-zero MAC address (the loopback has
/// none), with their drivers.
fn links(root: &Root) -> io::Result<Option<Vec<Link>>> {
    let class = Path::new("/sys/class/net");
    if !root.is_dir(class) {
        return Ok(None);
    }
    let mut out = Vec::new();
    for name in root.list_dir(class)?.into_iter().take(MAX_LINKS) {
        let dev = class.join(&name);
        let Some(text) = root.read_text(&dev.join("address")).ok().flatten() else {
            continue;
        };
        let Ok(mac) = text.trim().parse::<MacAddr>() else {
            continue;
        };
        if mac.0 == [0; 6] {
            continue;
        }
        let physical = root.is_dir(&dev.join("device"));
        // On a live system `device` is itself a link into /sys/devices; the root
        // follows it, and the last link's target names the driver's directory.
        let driver = match root.existing(&dev.join("device/driver")) {
            Ok(Existing::Symlink(target)) => target
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string),
            _ => None,
        };
        out.push(Link {
            name,
            mac,
            driver,
            physical,
        });
    }
    Ok(Some(out))
}

/// Maps MAC → device name. Physical devices (those with a `device` link) win over
/// virtual ones sharing their MAC (bonds, VLANs, bridges).
fn by_mac(links: &[Link]) -> BTreeMap<MacAddr, String> {
    let mut by_mac: BTreeMap<MacAddr, &Link> = BTreeMap::new();
    for link in links {
        match by_mac.get(&link.mac) {
            Some(l) if l.physical || !link.physical => {}
            _ => {
                by_mac.insert(link.mac, link);
            }
        }
    }
    by_mac
        .into_iter()
        .map(|(m, l)| (m, l.name.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn devices_by_mac_prefer_physical_and_skip_loopback() {
        let tmp = tempfile::tempdir().unwrap();
        let net = tmp.path().join("sys/class/net");
        for (name, mac, physical) in [
            ("bond0", "00:50:56:00:00:01", false),
            ("ens192", "00:50:56:00:00:01", true),
            ("ens224", "00:50:56:00:00:02", true),
            ("lo", "00:00:00:00:00:00", false),
        ] {
            fs::create_dir_all(net.join(name)).unwrap();
            fs::write(net.join(name).join("address"), format!("{mac}\n")).unwrap();
            if physical {
                fs::create_dir_all(net.join(name).join("device")).unwrap();
            }
        }
        // A driver link as the kernel has it: a relative link into the bus's drivers.
        std::os::unix::fs::symlink(
            "../../../bus/pci/drivers/vmxnet3",
            net.join("ens224/device/driver"),
        )
        .unwrap();
        let root = Root::new(tmp.path()).unwrap();
        let links = links(&root).unwrap().unwrap();
        let drivers: Vec<(&str, Option<&str>, bool)> = links
            .iter()
            .map(|l| (l.name.as_str(), l.driver.as_deref(), l.physical))
            .collect();
        assert_eq!(
            drivers,
            [
                ("bond0", None, false),
                ("ens192", None, true),
                ("ens224", Some("vmxnet3"), true)
            ]
        );
        let devs = by_mac(&links);
        let got: Vec<(String, &str)> = devs
            .iter()
            .map(|(m, n)| (m.to_string(), n.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("00:50:56:00:00:01".to_string(), "ens192"),
                ("00:50:56:00:00:02".to_string(), "ens224")
            ]
        );
    }

    #[test]
    fn no_sys_class_net_means_unknown_devices() {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::new(tmp.path()).unwrap();
        assert!(links(&root).unwrap().is_none());
    }
}
