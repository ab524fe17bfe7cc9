//! Golden trees for the network renderers: every example spec × every renderer must
//! write exactly the files under `tests/golden/network/<spec>/<renderer>/` (paths as in
//! the target root). Regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test network_golden`, then review the diff.

mod network_support;

use std::fs;

use network_support::{files, render_tree, renderers, repo, specs};

#[test]
fn every_spec_and_renderer_matches_its_golden_tree() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for (spec, net) in specs() {
        for renderer in renderers() {
            let tree = render_tree(&net, renderer);
            let got = files(tree.path());
            let golden = repo()
                .join("tests/golden/network")
                .join(&spec)
                .join(renderer.name());
            if update {
                let _ = fs::remove_dir_all(&golden);
                for (path, text) in &got {
                    let dest = golden.join(path);
                    fs::create_dir_all(dest.parent().unwrap()).unwrap();
                    fs::write(dest, text).unwrap();
                }
                continue;
            }
            assert!(
                golden.is_dir(),
                "no golden tree {}; create it with UPDATE_GOLDEN=1",
                golden.display()
            );
            let want = files(&golden);
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                want.keys().collect::<Vec<_>>(),
                "files written for {spec} by {}",
                renderer.name()
            );
            for (path, text) in &got {
                assert_eq!(
                    text,
                    &want[path],
                    "{} for {spec} by {} differs from {}",
                    path.display(),
                    renderer.name(),
                    golden.join(path).display()
                );
            }
        }
    }
}
