//! The repository files `yum_repos` and `zypper` plan are read by the real package
//! managers: each is written into a scratch root, then `dnf --installroot … repolist -v`
//! (against a local repository made by `createrepo_c`) and `zypper --root … lr -d` must
//! list the repository with its id, name and URL.

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;

use vmcust::test_api::document;
use vmcust::test_api::facts::Facts;
use vmcust::test_api::plan::Action;
use vmcust::test_api::{yum_add_repo, zypper_add_repo};

/// Writes each planned file under `root`.
fn write_all(root: &Path, actions: &[Action]) {
    for a in actions {
        let Action::WriteFile { path, contents, .. } = a else {
            panic!("{a:?}")
        };
        let p = root.join(path.strip_prefix("/").unwrap());
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, contents.bytes()).unwrap();
    }
}

fn facts(program: &str) -> Facts {
    let mut f = Facts::default();
    f.programs
        .insert(program.into(), format!("/usr/bin/{program}"));
    f
}

fn output(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?}: {text}");
    text
}

#[test]
fn dnf_reads_the_repo_files_yum_repos_writes() {
    support::require_tool("dnf", "dnf");
    support::require_tool("createrepo_c", "createrepo-c");
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    output(Command::new("createrepo_c").arg("-q").arg(&repo));
    let url = format!("file://{}", repo.display());
    // (id in the document, id dnf shows, more options)
    let table: &[(&str, &str, &str)] = &[
        ("local test", "local-test", "gpgcheck: false"),
        (
            "with-list",
            "with-list",
            "gpgcheck: false\n    gpgkey: [file:///etc/pki/a, https://keys.example/b]\n    skip-if-unavailable: true",
        ),
        ("meta_1", "meta_1", "enabled: true\n    metadata_expire: 3600"),
    ];
    for (id, shown, more) in table {
        let root = scratch.path().join(format!("root-{shown}"));
        let doc = format!(
            "yum_repos:\n  {id}:\n    name: Repo {shown}\n    baseurl: {url}\n    {more}\n"
        );
        let (cfg, problems) = document::from_text(&doc);
        assert!(problems.is_empty(), "{doc}: {problems:?}");
        let plan =
            yum_add_repo::plan_yum_repos(&cfg, &facts("dnf"), "Fri, 04 Dec 2026 19:10:58 +0000")
                .unwrap()
                .unwrap();
        write_all(&root, &plan.actions);
        let listed = output(
            Command::new("dnf")
                .args(["-v", "--releasever", "9", "--installroot"])
                .arg(&root)
                .arg(format!(
                    "--setopt=reposdir={}",
                    root.join("etc/yum.repos.d").display()
                ))
                .arg("repolist"),
        );
        for want in [
            format!("Repo-id            : {shown}"),
            format!("Repo-name          : Repo {shown}"),
            format!("Repo-baseurl       : {url}"),
        ] {
            assert!(listed.contains(&want), "{id}: {want} not in\n{listed}");
        }
    }
}

#[test]
fn zypper_reads_the_repo_files_zypper_writes() {
    support::require_tool("zypper", "zypper");
    let scratch = tempfile::tempdir().unwrap();
    let table: &[(&str, &str, &str)] = &[
        ("oss", "oss", ""),
        ("my repo", "my repo", "      autorefresh: false\n"),
        (
            "update",
            "update",
            "      enabled: false\n      priority: 90\n",
        ),
    ];
    for (id, alias, more) in table {
        let root = scratch
            .path()
            .join(format!("root-{}", alias.replace(' ', "_")));
        let doc = format!(
            "zypper:\n  repos:\n    - id: {id}\n      name: Repo {alias}\n      baseurl: http://repo.example/{}/\n{more}",
            alias.replace(' ', "-")
        );
        let (cfg, problems) = document::from_text(&doc);
        assert!(problems.is_empty(), "{doc}: {problems:?}");
        let plan = zypper_add_repo::plan_zypper(&cfg, &facts("zypper"))
            .unwrap()
            .unwrap();
        write_all(&root, &plan.actions);
        let listed = output(
            Command::new("zypper")
                .args(["--non-interactive", "--root"])
                .arg(&root)
                .args(["lr", "-d"]),
        );
        let line = listed
            .lines()
            .find(|l| l.contains(&format!("| {alias} ")))
            .unwrap_or_else(|| panic!("{alias} not listed:\n{listed}"));
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[2], format!("Repo {alias}"), "{line}");
        assert_eq!(
            cells[3],
            if more.contains("enabled: false") {
                "No"
            } else {
                "Yes"
            },
            "{line}"
        );
        // zypper shows no refresh flag for a disabled repository.
        let refresh = if more.contains("enabled: false") {
            "----"
        } else if more.contains("autorefresh: false") {
            "No"
        } else {
            "Yes"
        };
        assert_eq!(cells[5], refresh, "{line}");
        assert!(
            line.contains(&format!("http://repo.example/{}/", alias.replace(' ', "-"))),
            "{line}"
        );
    }
}
