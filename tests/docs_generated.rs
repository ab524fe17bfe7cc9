//! The tables in docs/ that restate a registry of the code are made from it, so a page
//! cannot disagree with the product: each is a block between `<!-- generated: NAME … -->`
//! and `<!-- end of generated: NAME -->`, and this test fails when a block differs from
//! what the registry makes (`UPDATE_GOLDEN=1 cargo test --test docs_generated` rewrites
//! them). The keys table of docs/cloud-config.md, whose types and defaults are prose, is
//! checked against the module table instead: every key is there, with its module, its
//! frequency and its stage, and the page names no key the reader does not take.

mod support;

use std::path::PathBuf;

use vmcust::test_api::failure::EXIT_STATUSES;
use vmcust::test_api::modules::{Frequency, Module, Run, Stage, TABLE};

fn doc(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(name)
}

/// How the pages name a frequency.
fn frequency_words(f: Frequency) -> &'static str {
    match f {
        Frequency::PerInstance => "per instance",
        Frequency::PerBoot => "per boot",
        Frequency::PerOnce => "once",
        Frequency::Always => "always",
    }
}

/// The user guide's exit status table.
fn exit_statuses() -> String {
    let mut t = String::from("| Code | Meaning |\n|---|---|\n");
    for s in EXIT_STATUSES {
        t.push_str(&format!("| {} | {} |\n", s.code, s.meaning));
    }
    t
}

/// docs/cloud-config.md's module table, in run order: the modules the accounts engine
/// applies with the plan first, then the stage drivers' in table order.
fn modules() -> String {
    let mut t =
        String::from("| Order | Module | Keys | Stage | Frequency |\n|---|---|---|---|---|\n");
    let elsewhere = |m: &&Module| matches!(m.run, Run::Elsewhere(_));
    let in_order = TABLE
        .iter()
        .filter(elsewhere)
        .chain(TABLE.iter().filter(|m| !elsewhere(m)));
    let mut order = 0;
    for m in in_order.filter(|m| m.stage != Stage::Read) {
        order += 1;
        let keys: Vec<String> = m
            .keys
            .iter()
            .flat_map(|k| k.names.iter().map(|n| format!("`{n}`")))
            .collect();
        let keys = if keys.is_empty() {
            "(its parts or entries)".to_string()
        } else {
            keys.join(", ")
        };
        t.push_str(&format!(
            "| {order} | {} | {keys} | {} | {} |\n",
            m.name,
            m.stage.name(),
            frequency_words(m.frequency)
        ));
    }
    t
}

/// Replaces or checks each generated block of one page.
fn check_page(page: &str, blocks: &[(&str, String)]) {
    let path = doc(page);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = text.clone();
    for (name, want) in blocks {
        let open = format!("<!-- generated: {name} ");
        let close = format!("<!-- end of generated: {name} -->");
        let start = out
            .find(&open)
            .unwrap_or_else(|| panic!("{page}: no `{open}` block"));
        let body = start + out[start..].find("-->\n").unwrap() + 4;
        let end = body
            + out[body..]
                .find(&close)
                .unwrap_or_else(|| panic!("{page}: no `{close}`"));
        out.replace_range(body..end, want);
    }
    if out == text {
        return;
    }
    if std::env::var_os(support::UPDATE_GOLDEN).is_some() {
        // Through a rename: the keys table's test reads the same page meanwhile.
        let tmp = path.with_extension("md.tmp");
        std::fs::write(&tmp, out).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
    } else {
        panic!(
            "docs/{page}: a generated table differs from the code's registry; \
             UPDATE_GOLDEN=1 cargo test --test docs_generated rewrites it"
        );
    }
}

#[test]
fn the_user_guide_lists_the_exit_statuses_of_the_code() {
    check_page("user-guide.md", &[("exit-statuses", exit_statuses())]);
}

#[test]
fn the_cloud_config_page_lists_the_modules_of_the_table() {
    check_page("cloud-config.md", &[("modules", modules())]);
}

/// One row of the keys table: the keys its first cell names, outside parentheses
/// (aliases are named inside them), then its module, frequency and stage cells.
struct KeyRow {
    keys: Vec<String>,
    aliases: Vec<String>,
    module: String,
    frequency: String,
    stage: String,
}

fn backticked(s: &str) -> Vec<String> {
    s.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn key_rows() -> Vec<KeyRow> {
    let text = std::fs::read_to_string(doc("cloud-config.md")).unwrap();
    let table = text
        .split("| Key | Type and default | Module | Frequency | Stage |\n|---|---|---|---|---|\n")
        .nth(1)
        .expect("docs/cloud-config.md has the keys table");
    table
        .lines()
        .take_while(|l| l.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
            assert_eq!(cells.len(), 5, "keys table row: {line}");
            let first = cells[0].trim();
            let (outside, inside) = match first.split_once('(') {
                Some((a, b)) => (a, b),
                None => (first, ""),
            };
            KeyRow {
                keys: backticked(outside),
                aliases: backticked(inside),
                module: cells[2].trim().to_string(),
                frequency: cells[3].trim().to_string(),
                stage: cells[4].trim().to_string(),
            }
        })
        .collect()
}

#[test]
fn the_keys_table_agrees_with_the_module_table() {
    let rows = key_rows();
    assert!(rows.len() >= 20, "only {} rows read", rows.len());
    for m in TABLE {
        for k in m.keys {
            let name = k.names[0];
            let row = rows
                .iter()
                .find(|r| r.keys.iter().any(|n| n == name))
                .unwrap_or_else(|| panic!("docs/cloud-config.md: no row for key `{name}`"));
            for alias in &k.names[1..] {
                assert!(
                    row.aliases.iter().any(|a| a == alias),
                    "`{name}`: alias `{alias}` not named in its row"
                );
            }
            if m.stage == Stage::Read {
                assert_eq!(row.stage, "read", "`{name}`");
                continue;
            }
            assert_eq!(row.module, m.name, "`{name}`: module");
            assert_eq!(
                row.frequency,
                frequency_words(m.frequency),
                "`{name}`: frequency"
            );
            assert!(
                row.stage.starts_with(m.stage.name()),
                "`{name}`: stage {} on the page, {} in the table",
                row.stage,
                m.stage.name()
            );
        }
    }
    // And no row names a key the reader does not take (merge keys are read apart).
    let known: Vec<&str> = TABLE
        .iter()
        .flat_map(|m| m.keys.iter().flat_map(|k| k.names.iter().copied()))
        .chain(["merge_how", "merge_type"])
        .collect();
    for r in &rows {
        for k in r.keys.iter().chain(&r.aliases) {
            assert!(
                known.contains(&k.as_str()),
                "docs/cloud-config.md names `{k}`, which no module reads"
            );
        }
    }
}

/// Every key the settings file takes is in boot.md's settings reference (which says it
/// lists every setting), in vmcust.conf(5)'s EXAMPLE of the defaults and in the example
/// file the packages install.
#[test]
fn every_setting_is_in_the_reference_and_the_examples() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let boot = std::fs::read_to_string(doc("boot.md")).unwrap();
    let reference = boot
        .split("## Settings reference")
        .nth(1)
        .expect("boot.md has a settings reference");
    let page = std::fs::read_to_string(repo.join("man/vmcust.conf.5")).unwrap();
    let example = page
        .split(".SH EXAMPLE")
        .nth(1)
        .expect("vmcust.conf(5) has an EXAMPLE")
        .replace("\\-", "-");
    let shipped = std::fs::read_to_string(repo.join("scripts/vmcust.conf.example")).unwrap();
    let keys = vmcust::test_api::settings::known_keys();
    assert!(keys.len() >= 10);
    for (section, key) in keys {
        assert!(
            reference.contains(&format!("| `[{section}]` | `{key}` |")),
            "docs/boot.md's settings reference lacks [{section}] {key}"
        );
        for (name, text) in [
            ("vmcust.conf(5)'s EXAMPLE", example.as_str()),
            ("scripts/vmcust.conf.example", shipped.as_str()),
        ] {
            let at = text
                .find(&format!("[{section}]\n"))
                .unwrap_or_else(|| panic!("{name} lacks the section [{section}]"));
            // The section's lines: up to the next section header.
            let rest = &text[at + 1..];
            let body = &rest[..rest.find("\n[").unwrap_or(rest.len())];
            assert!(
                body.lines().any(|l| l.starts_with(&format!("{key} = "))),
                "{name}: [{section}] lacks `{key} = …`"
            );
        }
    }
}
