//! Golden trees for the network renderers: every example spec × every renderer must
//! write exactly the files under `tests/golden/network/<spec>/<renderer>/` (paths as in
//! the target root). Regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test network_golden`, then review the diff.

mod support;

use support::network::{render_tree, renderers, specs};
use support::{check_golden_tree, files, repo};

#[test]
fn every_spec_and_renderer_matches_its_golden_tree() {
    for (spec, net) in specs() {
        for renderer in renderers() {
            let tree = render_tree(&net, renderer);
            let golden = repo()
                .join("tests/golden/network")
                .join(&spec)
                .join(renderer.name());
            check_golden_tree(&golden, &files(tree.path()));
        }
    }
}
