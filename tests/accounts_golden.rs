//! Golden plans of the accounts engine: each `tests/golden/accounts/<case>/cloud-config.yaml`
//! planned against the scratch Debian root (fixed salts and date) is `plan.txt` beside it:
//! every action with its path, mode, owner, purpose and contents (secrets as `<redacted>`),
//! then the notes. Regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test accounts_golden`, then review the diff.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use vmcust::test_api::account_facts::{Salt, SALT_LEN};
use vmcust::test_api::plan::{Action, FileOwner};
use vmcust::test_api::root::Root;
use vmcust::test_api::{accounts, parse::parse_accounts};

mod accounts_support;

use accounts_support::*;

fn render(plan: &accounts::AccountsPlan) -> String {
    let mut out = String::new();
    for a in &plan.actions {
        let (what, mode, owner, contents) = match a {
            Action::WriteFile {
                mode,
                owner: FileOwner::Kept,
                contents,
                ..
            } => ("write", *mode, None, Some(contents)),
            Action::WriteFile {
                mode,
                owner: FileOwner::InUserDir { uid, gid, .. },
                contents,
                ..
            } => ("write", *mode, Some((*uid, *gid)), Some(contents)),
            Action::MakeDir { mode, uid, gid, .. } => ("mkdir", *mode, Some((*uid, *gid)), None),
            other => panic!("unexpected action {other:?}"),
        };
        let owner = owner.map_or(String::new(), |(u, g)| format!(" {u}:{g}"));
        let _ = writeln!(
            out,
            "{what} {} {mode:04o}{owner} ({})",
            a.path().display(),
            a.purpose()
        );
        for line in contents
            .map(|c| c.display().into_owned())
            .unwrap_or_default()
            .lines()
        {
            let _ = writeln!(out, "  | {line}");
        }
    }
    for n in &plan.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

#[test]
fn golden_plans() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/accounts");
    let mut cases: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    assert!(cases.len() >= 6, "{cases:?}");
    for case in cases {
        let root_dir = debian_root();
        write(
            root_dir.path(),
            "/etc/ssh/sshd_config",
            "Include /etc/ssh/sshd_config.d/*.conf\nKbdInteractiveAuthentication no\n",
            0o644,
        );
        fs::create_dir_all(root_dir.path().join("etc/ssh/sshd_config.d")).unwrap();
        let root = Root::new(root_dir.path()).unwrap();
        let yaml = fs::read_to_string(case.join("cloud-config.yaml")).unwrap();
        let serde_norway::Value::Mapping(doc) = serde_norway::from_str(&yaml).unwrap() else {
            panic!("{case:?}: not a mapping")
        };
        let req = parse_accounts("user-data", &doc).unwrap();
        let mut facts = accounts::gather(&root, &req).unwrap();
        facts.entropy = (0..facts.entropy.len())
            .map(|i| Salt([i as u8 + 1; SALT_LEN]))
            .collect();
        facts.today = 20_400;
        let plan = accounts::plan_accounts(&req, &facts).unwrap();
        let got = render(&plan);
        for secret in ["Sup3r-Secret", "$6$"] {
            assert!(!got.contains(secret), "{case:?} shows {secret}:\n{got}");
        }
        let golden = case.join("plan.txt");
        if update {
            fs::write(&golden, &got).unwrap();
        }
        let want = fs::read_to_string(&golden)
            .unwrap_or_else(|_| panic!("no {golden:?}; create it with UPDATE_GOLDEN=1"));
        assert_eq!(got, want, "{case:?}");
    }
}
