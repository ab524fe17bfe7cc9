//! The link keys CAPV sends per NIC (`mtu`, `accept-ra`) through every renderer: each
//! renderer must write exactly the files under `tests/golden/network-link-keys/<renderer>/`.
//! Regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test network_link_keys`, then review the diff.
//! `netplan generate` and `nmcli --offline` reading these files are checked in
//! `network_netplan.rs` and `network_networkmanager.rs`.

mod support;

use support::network::{link_keys_network, render_tree, renderers};
use support::{check_golden_tree, files, repo};

#[test]
fn every_renderer_writes_mtu_and_accept_ra() {
    let net = link_keys_network();
    for renderer in renderers() {
        let tree = render_tree(&net, renderer);
        let golden = repo()
            .join("tests/golden/network-link-keys")
            .join(renderer.name());
        check_golden_tree(&golden, &files(tree.path()));
    }
}
