//! `set-name` for the stacks that cannot rename a NIC themselves (NetworkManager,
//! ifupdown, RHEL and SUSE ifcfg): a udev rule naming the NIC by its MAC when the kernel
//! announces it, as cloud-init's ENI and sysconfig renderers write one. networkd and
//! netplan rename through their own `.link` files and `set-name`.
//!
//! Reference: udev(7) for `NAME=` (a later assignment wins; systemd's
//! `80-net-setup-link.rules` names a NIC only when no rule has), cloud-init's
//! `cloudinit/net/udev.py` for the shape of the rule.

use std::fmt::Write as _;

use super::{Device, HEADER};
use crate::model::Network;
use crate::plan::writer::{word, UnsafeValue};
use crate::plan::{Action, Contents};

/// vmcust's rules file: after a template's own `70-persistent-net.rules` (so our name
/// wins over a name it pins) and before `80-net-setup-link.rules`.
pub(crate) const UDEV_RULES: &str = "/etc/udev/rules.d/70-vmcust-net-names.rules";

/// The action writing [`UDEV_RULES`] with one rule per NIC a `set-name` renames; none
/// when no interface has a `set-name`.
pub(crate) fn udev_rules(net: &Network, devices: &[Device]) -> Result<Option<Action>, UnsafeValue> {
    let mut out = HEADER.to_string();
    let mut any = false;
    for (iface, dev) in net.interfaces.iter().zip(devices) {
        if !dev.set_name {
            continue;
        }
        any = true;
        let name = word("udev rule", "NAME", &dev.name)?;
        // The kernel's `address` attribute is lower case, as MacAddr prints.
        writeln!(
            out,
            "SUBSYSTEM==\"net\", ACTION==\"add\", DRIVERS==\"?*\", ATTR{{address}}==\"{}\", NAME=\"{name}\"",
            iface.mac
        )
        .expect("writing to a String");
    }
    Ok(any.then(|| {
        Action::write_file(
            UDEV_RULES,
            Contents::text(out),
            0o644,
            "network device names by MAC (set-name, udev rule)",
        )
    }))
}
