//! Golden trees: every bundled example spec applied to the template root must write
//! exactly the files under `tests/golden/apply/<spec>/` (contents, modes, link targets).
//! Regenerate after an intended change with `UPDATE_GOLDEN=1 cargo test --test golden_apply`.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use vmcust::test_api::apply::apply;
use vmcust::test_api::customize::wanted;
use vmcust::test_api::facts::Facts;
use vmcust::test_api::plan::{plan, Action, PlanOptions};
use vmcust::test_api::root::{Existing, Root};

/// What the applied root holds at each planned path, as golden text files.
fn rendered(spec: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let scratch = support::scratch_root();
    let root = Root::new(scratch.path()).unwrap();
    let parsed = vmcust_imc::Spec::parse(&fs::read(spec).unwrap()).unwrap();
    let c = vmcust::test_api::imc::customization(&parsed.spec).unwrap();
    let facts = Facts::gather(&root, &wanted(&c)).unwrap();
    let plan = plan(&c, &facts, &PlanOptions::default()).unwrap();
    apply(&root, &plan).unwrap();
    let mut out = BTreeMap::new();
    let mut modes = String::new();
    for action in &plan.actions {
        let path = action.path().strip_prefix("/").unwrap().to_path_buf();
        match (action, root.existing(action.path()).unwrap()) {
            (Action::WriteFile { .. }, Existing::File { contents, mode }) => {
                modes.push_str(&format!("{mode:04o} /{}\n", path.display()));
                out.insert(path, contents);
            }
            (Action::Symlink { .. }, Existing::Symlink(target)) => {
                modes.push_str(&format!(
                    "link /{} -> {}\n",
                    path.display(),
                    target.display()
                ));
            }
            (a, e) => panic!("{a:?} left {e:?}"),
        }
    }
    out.insert(PathBuf::from("MODES"), modes.into_bytes());
    out
}

#[test]
fn every_example_matches_its_golden_tree() {
    let specs = support::repo().join("examples/specs");
    let mut names: Vec<_> = fs::read_dir(&specs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cfg"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "examples missing");
    for spec in names {
        let stem = spec.file_stem().unwrap().to_str().unwrap().to_string();
        let dir = support::repo().join("tests/golden/apply").join(&stem);
        support::check_golden_tree(&dir, &rendered(&spec));
    }
}
