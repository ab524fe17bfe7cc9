//! Cross-renderer equivalence: every example spec, written by each of the six
//! renderers and read back by a small parser per format, yields the addresses, routes
//! (with metrics) and DNS the model asked for — so no renderer drops a gateway, a
//! second address or a name server another one keeps.

mod support;

use support::network::{example_names, expected, parse, render_tree, renderers, specs};

#[test]
fn every_renderer_writes_the_same_addresses_routes_and_dns() {
    let names = example_names();
    for (spec, net) in specs() {
        let want = expected(&net);
        for renderer in renderers() {
            let tree = render_tree(&net, renderer);
            let got = parse(renderer, tree.path(), &names);
            assert_eq!(got, want, "{spec} rendered by {}", renderer.name());
        }
    }
}
