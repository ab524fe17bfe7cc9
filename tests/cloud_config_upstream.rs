//! cloud-init's own cloud-config examples (`tests/data/cloud-init-upstream/`, vendored
//! from its repository: every `doc/module-docs/*/example*.yaml` and
//! `doc/examples/cloud-config*.txt`) read by vmcust's reader, as `vmcust schema` reads
//! them. cloud-init's schema takes all of them, so whatever vmcust finds is a difference:
//! the findings are compared with `tests/golden/cloud-init-upstream.txt` (one line per
//! example: `accepted`, what is `not applied` — keys vmcust does not implement, values it
//! cannot apply — and what is `refused`, with why), and each key or value not applied or
//! refused there must be explained in docs/differences-from-cloud-init.md, "cloud-init's
//! own examples".
//! `UPDATE_GOLDEN=1 cargo test --test cloud_config_upstream` regenerates the list (review
//! the diff, then explain any new entry in the docs).

mod support;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use support::{check_golden, repo};
use vmcust::test_api::cc_read::general;
use vmcust::test_api::cloud_config::Severity;
use vmcust::test_api::jinja::Vars;
use vmcust::test_api::userdata;

fn examples() -> Vec<(String, PathBuf)> {
    let dir = repo().join("tests/data/cloud-init-upstream");
    let mut out = Vec::new();
    for sub in ["examples", "module-docs"] {
        collect(&dir, &dir.join(sub), &mut out);
    }
    out.sort();
    out
}

fn collect(top: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(top, &p, out);
        } else {
            let name = p.strip_prefix(top).unwrap().to_str().unwrap().to_string();
            out.push((name, p));
        }
    }
}

/// The instance data the Jinja examples are rendered with (`phone_home`'s use
/// `v1.instance_id`, which a boot always defines).
fn instance_data() -> serde_json::Value {
    serde_json::json!({
        "v1": {
            "instance_id": "iid-upstream-example",
            "local_hostname": "example",
            "cloud_name": "vmware",
            "platform": "vmware",
            "distro": "debian",
        },
        "ds": {"meta_data": {"instance-id": "iid-upstream-example", "local-hostname": "example"}},
    })
}

/// What vmcust's reader finds in one example: its golden line, and the names the docs
/// must explain.
fn reading(name: &str, path: &Path) -> (String, Vec<String>) {
    let bytes = fs::read(path).unwrap();
    let read = match userdata::read_rendered(&bytes, None, &Vars::new(&instance_data())) {
        Ok(r) => r,
        Err(e) => {
            let first = String::from_utf8_lossy(&bytes)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            return (format!("{name}: refused whole: {e}"), vec![first]);
        }
    };
    let mut unknown = Vec::new();
    let mut refused = Vec::new();
    let mut explain = Vec::new();
    for p in &read.problems {
        match p.severity {
            Severity::Warning => {}
            Severity::Unknown => {
                unknown.push(p.path.clone());
                explain.push(general(&p.path));
            }
            Severity::Error => {
                let at = if p.path.is_empty() {
                    "(document)"
                } else {
                    &p.path
                };
                refused.push(format!("{at} ({})", p.message.replace('\n', " ")));
                explain.push(general(at));
            }
        }
    }
    let line = match (unknown.is_empty(), refused.is_empty()) {
        (true, true) => format!("{name}: accepted"),
        _ => {
            let mut s = format!("{name}:");
            if !unknown.is_empty() {
                s += &format!(" not applied {}", unknown.join(", "));
            }
            if !refused.is_empty() {
                if !unknown.is_empty() {
                    s += ";";
                }
                s += &format!(" refused {}", refused.join("; "));
            }
            s
        }
    };
    (line, explain)
}

/// The docs section that explains the list.
fn docs_section() -> String {
    let doc = fs::read_to_string(repo().join("docs/differences-from-cloud-init.md")).unwrap();
    let start = doc.find("## cloud-init's own examples").expect(
        "docs/differences-from-cloud-init.md has a section \"## cloud-init's own examples\"",
    );
    let rest = &doc[start + 3..];
    let end = rest.find("\n## ").map_or(rest.len(), |e| e + 1);
    rest[..end].to_string()
}

#[test]
fn every_upstream_example_is_read_and_each_difference_is_explained() {
    let all = examples();
    assert!(all.len() > 100, "only {} examples vendored", all.len());
    let mut lines = String::new();
    let mut explain = BTreeSet::new();
    for (name, path) in &all {
        let (line, names) = reading(name, path);
        lines += &line;
        lines.push('\n');
        explain.extend(names);
    }
    check_golden(&repo().join("tests/golden/cloud-init-upstream.txt"), &lines);
    let section = docs_section();
    let missing: Vec<&String> = explain
        .iter()
        .filter(|n| !section.contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/differences-from-cloud-init.md, \"cloud-init's own examples\", does not explain: {missing:?}"
    );
}
