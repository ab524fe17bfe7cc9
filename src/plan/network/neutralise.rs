//! Moving aside configuration that would fight ours: a template's leftover DHCP netplan
//! file, NetworkManager keyfile, networkd file, ifcfg or `interfaces.d` snippet for one
//! of the interfaces we configure. Nothing is deleted.
//!
//! Files are moved into a `.vmcust-disabled/` directory next to them rather than given a
//! new suffix: each stack has its own rules about which names it reads (NetworkManager
//! loads keyfiles without an extension, ifcfg-rh reads any `ifcfg-*`, ENI's
//! `source interfaces.d/*` reads every name), but none of them reads a hidden
//! subdirectory. The backup stays on the same file system, so the move is a rename.
//!
//! Every stack's directory is searched, not only the chosen renderer's: a leftover ifcfg
//! is read by NetworkManager too, and a leftover netplan file becomes NetworkManager or
//! networkd configuration when netplan runs.

use std::path::{Path, PathBuf};

use super::claims::claims;
use super::{written_by_vmcust, Device};
use crate::facts::network::ConfigFile;
use crate::model::{MacAddr, Network};
use crate::plan::Action;

/// Name of the backup directory created next to a moved file.
pub(crate) const DISABLED_DIR: &str = ".vmcust-disabled";

/// Rename actions for every configuration file not written by vmcust that names one of
/// our interfaces, by MAC address or device name, or would configure it anyway through
/// a name pattern or as a catch-all ([`claims`]).
pub(crate) fn leftovers(net: &Network, devices: &[Device], configs: &[ConfigFile]) -> Vec<Action> {
    configs
        .iter()
        .filter(|c| !written_by_vmcust(&c.text))
        .filter(|c| {
            net.interfaces
                .iter()
                .zip(devices)
                .any(|(iface, dev)| concerns(c, iface.mac, dev))
        })
        .map(|c| Action::Rename {
            from: c.path.clone(),
            to: disabled_path(&c.path),
            purpose: "leftover configuration for one of our interfaces, moved aside",
        })
        .collect()
}

/// Whether `c` is about the NIC with `mac`, configured as `dev`: it names the MAC, or
/// names, is named after or would claim the device by any name the NIC carries — the one
/// we give it and, when a `set-name` renames it, the kernel's (networkd matches `Name=`
/// against the NIC's alternative names too, so a template's `Name=en*` still takes a NIC
/// renamed `eth0`, whose predictable name stays an altname).
fn concerns(c: &ConfigFile, mac: MacAddr, dev: &Device) -> bool {
    mentions_mac(&c.text, mac)
        || std::iter::once(&dev.name)
            .chain(dev.kernel_name.as_ref())
            .any(|name| {
                mentions_word(&c.text, name)
                    || named_after(&c.path, name)
                    || claims(&c.path, &c.text, name)
            })
}

/// Where a file moved aside goes: `<dir>/.vmcust-disabled/<name>`.
pub(crate) fn disabled_path(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("/"));
    dir.join(DISABLED_DIR)
        .join(path.file_name().unwrap_or_default())
}

/// The file is named after the device: `ens192.nmconnection`, `ifcfg-ens192`, SUSE's
/// `ifroute-ens192` (whose lines may say `-` instead of the device).
fn named_after(path: &Path, device: &str) -> bool {
    let stem = path
        .file_stem()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let name = ["ifcfg-", "ifroute-"]
        .iter()
        .find_map(|p| stem.strip_prefix(p))
        .unwrap_or(stem);
    name == device
}

/// The MAC in any case, with `:` or `-` between the bytes (keyfiles write upper case,
/// some ifcfg files use dashes).
fn mentions_mac(text: &str, mac: MacAddr) -> bool {
    let lower = text.to_ascii_lowercase();
    let colons = mac.to_string().to_ascii_lowercase();
    lower.contains(&colons) || lower.contains(&colons.replace(':', "-"))
}

/// `word` appears with no name character on either side, so `ens192` does not match
/// `ens1920` or the VLAN `ens192.10`.
fn mentions_word(text: &str, word: &str) -> bool {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_need_boundaries() {
        assert!(mentions_word("iface ens192 inet dhcp", "ens192"));
        assert!(mentions_word("    ens192:\n", "ens192"));
        assert!(mentions_word("DEVICE=ens192\n", "ens192"));
        assert!(!mentions_word("iface ens1920 inet dhcp", "ens192"));
        assert!(!mentions_word("iface ens192.10 inet dhcp", "ens192"));
    }

    #[test]
    fn files_named_after_the_device() {
        assert!(named_after(Path::new("/x/ens192.nmconnection"), "ens192"));
        assert!(named_after(Path::new("/x/ifcfg-ens192"), "ens192"));
        assert!(named_after(Path::new("/x/ifroute-ens192"), "ens192"));
        assert!(!named_after(Path::new("/x/ifcfg-ens1920"), "ens192"));
    }

    #[test]
    fn macs_in_any_case_and_separator() {
        let mac: MacAddr = "00:50:56:a6:8c:08".parse().unwrap();
        assert!(mentions_mac("mac-address=00:50:56:A6:8C:08", mac));
        assert!(mentions_mac("HWADDR=00-50-56-a6-8c-08", mac));
        assert!(!mentions_mac("HWADDR=00:50:56:a6:8c:09", mac));
    }

    /// A NIC renamed by `set-name` keeps its predictable name as an altname, which a
    /// template's `Name=en*` still matches: the file is moved aside (it was not, and a
    /// CAPV node booted on the template's DHCP).
    #[test]
    fn a_renamed_nic_is_claimed_by_its_kernel_name_too() {
        let mac: MacAddr = "00:50:56:aa:bb:01".parse().unwrap();
        let template = ConfigFile {
            path: PathBuf::from("/etc/systemd/network/01-template.network"),
            text: "[Match]\nName=en*\n\n[Network]\nDHCP=yes\n".into(),
        };
        let id = |s: &str| crate::model::InterfaceId::parse(s).unwrap();
        let renamed = Device {
            name: id("eth0"),
            from_system: false,
            set_name: true,
            kernel_name: Some(id("ens3")),
        };
        assert!(concerns(&template, mac, &renamed));
        let unknown_kernel_name = Device {
            kernel_name: None,
            ..renamed
        };
        assert!(!concerns(&template, mac, &unknown_kernel_name));
    }

    #[test]
    fn backups_go_to_a_hidden_sibling_directory() {
        assert_eq!(
            disabled_path(Path::new("/etc/netplan/50-cloud-init.yaml")),
            Path::new("/etc/netplan/.vmcust-disabled/50-cloud-init.yaml")
        );
    }
}
