//! Choosing the renderer from what the root runs, when `--renderer` does not say.
//!
//! The order, first match wins (also in `docs/network.md`):
//! 1. netplan — `/etc/netplan` exists and netplan is installed (Ubuntu; netplan then
//!    drives networkd or NetworkManager itself, so it must come before both);
//! 2. NetworkManager enabled (RHEL 8+, Fedora, SLES 16);
//! 3. systemd-networkd enabled (Photon OS, minimal systemd images);
//! 4. a sysconfig tree, `/etc/sysconfig/network-scripts` (RHEL 7 without NetworkManager);
//! 5. ifupdown, `/etc/network/interfaces` with `ifup` installed (Debian without netplan);
//! 6. SUSE's sysconfig — `/etc/sysconfig/network/ifcfg-*`, or wicked installed or
//!    enabled (SLES 12/15, openSUSE Leap). After NetworkManager, because a SUSE system
//!    running NetworkManager ignores these files;
//! 7. nothing recognised — netplan, the renderer vmcust always used, which also suits
//!    images being prepared offline for Ubuntu; `--renderer` chooses otherwise.

use super::Renderer;
use crate::facts::network::Stacks;

/// The renderer for a root with these stacks.
pub fn detect(stacks: &Stacks) -> Renderer {
    if stacks.netplan {
        Renderer::Netplan
    } else if stacks.network_manager {
        Renderer::NetworkManager
    } else if stacks.networkd {
        Renderer::Networkd
    } else if stacks.sysconfig {
        Renderer::Sysconfig
    } else if stacks.ifupdown {
        Renderer::Eni
    } else if stacks.suse {
        Renderer::Suse
    } else {
        Renderer::Netplan
    }
}
