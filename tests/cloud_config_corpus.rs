//! The cloud-config corpus: every document in `tests/data/cloud-config/` (our own: every
//! module, the shapes of cloud-init's documented examples, hostile values) read as
//! user-data, with `NAME.vendor` beside it as vendor-data, must give exactly the JSON in
//! `tests/golden/cloud-config/NAME.json`: the parts, the validated document, the problems.
//! Regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test cloud_config_corpus`, then review the diff.

mod support;

use std::fs;
use std::path::PathBuf;

use vmcust::test_api::modules;
use vmcust::test_api::userdata;

fn corpus() -> Vec<PathBuf> {
    let dir = support::repo().join("tests/data/cloud-config");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|e| e != "vendor"))
        .collect();
    files.sort();
    files
}

/// The reading of one document as golden JSON.
fn rendered(file: &PathBuf) -> String {
    let user = fs::read(file).unwrap();
    let vendor = fs::read(file.with_extension("vendor")).ok();
    let value = match userdata::read(&user, vendor.as_deref()) {
        Ok(u) => serde_json::to_value(&u).unwrap(),
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    };
    serde_json::to_string_pretty(&value).unwrap() + "\n"
}

#[test]
fn every_document_matches_its_golden() {
    let files = corpus();
    assert!(files.len() >= 40, "only {} documents", files.len());
    let golden = support::repo().join("tests/golden/cloud-config");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    for file in &files {
        let stem = file.file_stem().unwrap().to_str().unwrap();
        let want_path = golden.join(format!("{stem}.json"));
        let got = rendered(file);
        if update {
            fs::create_dir_all(&golden).unwrap();
            fs::write(&want_path, &got).unwrap();
        }
        let want = fs::read_to_string(&want_path)
            .unwrap_or_else(|e| panic!("{}: {e}; run with UPDATE_GOLDEN=1", want_path.display()));
        assert_eq!(
            got,
            want,
            "{} differs from {}",
            file.display(),
            want_path.display()
        );
    }
}

#[test]
fn the_corpus_covers_every_key_of_the_module_table() {
    let all: String = corpus()
        .iter()
        .map(|f| String::from_utf8_lossy(&fs::read(f).unwrap()).into_owned())
        .collect();
    for key in modules::keys() {
        assert!(
            all.contains(&format!("{key}:")),
            "no corpus document uses {key}"
        );
    }
}

#[test]
fn no_golden_shows_a_secret() {
    for file in corpus() {
        let got = rendered(&file);
        for secret in [
            "hunter2",
            "RootPass1",
            "TopLevelSecret",
            "$6$j212wezy",
            "saltsalt",
            "compressed content",
            "hello from b64",
        ] {
            assert!(!got.contains(secret), "{}: shows {secret}", file.display());
        }
    }
}
