//! Facts about the root's networking: its devices by MAC and the network stack it runs.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use anyhow::{Context, Result};

use crate::model::MacAddr;
use crate::root::Root;

/// What the planner knows about the root's networking.
#[derive(Debug, Clone, Default)]
pub struct NetworkFacts {
    /// Network devices by MAC, from the root's `/sys/class/net`; `None` when the root
    /// has no `/sys/class/net` at all (an offline image).
    pub devices: Option<BTreeMap<MacAddr, String>>,
}

impl NetworkFacts {
    /// Reads the network facts of `root`.
    pub fn gather(root: &Root) -> Result<NetworkFacts> {
        Ok(NetworkFacts {
            devices: net_devices(root)
                .with_context(|| format!("listing /sys/class/net in {}", root.path().display()))?,
        })
    }
}

/// Maps MAC → device name from `/sys/class/net/*/address`. Physical devices (those with
/// a `device` link) win over virtual ones sharing their MAC (bonds, VLANs, bridges).
fn net_devices(root: &Root) -> io::Result<Option<BTreeMap<MacAddr, String>>> {
    let class = Path::new("/sys/class/net");
    if !root.is_dir(class) {
        return Ok(None);
    }
    let mut by_mac: BTreeMap<MacAddr, (bool, String)> = BTreeMap::new();
    for name in root.list_dir(class)? {
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
        match by_mac.get(&mac) {
            Some((true, _)) => {}
            Some((false, _)) if !physical => {}
            _ => {
                by_mac.insert(mac, (physical, name));
            }
        }
    }
    Ok(Some(by_mac.into_iter().map(|(m, (_, n))| (m, n)).collect()))
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
        let root = Root::new(tmp.path()).unwrap();
        let devs = net_devices(&root).unwrap().unwrap();
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
        assert!(net_devices(&root).unwrap().is_none());
    }
}
