//! `zypper_add_repo` (`zypper.repos`, `zypper.config`): zypper repositories and `zypp.conf`
//! settings, as cloud-init's `cc_zypper_add_repo` writes them — one
//! `<reposdir>/<id>.repo` per repository (spaces of the id as `_` in the file name, the id
//! as given in `[id]`, `enabled` and `autorefresh` `1` unless given), never over a file
//! that is already there, and each `config` setting in `/etc/zypp/zypp.conf` — on a root
//! with zypper only. Unlike cloud-init, which appends a block to `zypp.conf` on every
//! boot, a setting is changed in place (or added once), so the file does not grow.

use serde::Serialize;

use crate::cloud_config::apply::conf_text::{set_assignment, ConfText};
use crate::cloud_config::apply::driver::{absent, failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::preview::{action_lines, Look};
use crate::cloud_config::modules::write_files::absolute;
use crate::cloud_config::modules::yum_add_repo::RepoPlan;
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader, Severity};
use crate::cloud_config::CloudConfig;
use crate::facts::{Current, Facts, Wanted};
use crate::model::quote;
use crate::plan::{Action, Contents};

/// Most repositories, and most options or settings of one map.
pub(crate) const MAX_ENTRIES: usize = 128;
/// The longest value.
pub(crate) const MAX_VALUE: usize = 4096;
/// zypper's repository directory.
pub(crate) const DEFAULT_DIR: &str = "/etc/zypp/repos.d";
/// libzypp's configuration.
pub(crate) const ZYPP_CONF: &str = "/etc/zypp/zypp.conf";

/// One repository of `zypper.repos`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ZypperRepo {
    /// The id as written (the file name has its spaces as `_`).
    pub id: String,
    /// Its options (`baseurl` among them), names normalised, in the order given.
    pub options: Vec<(String, String)>,
}

/// `zypper`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Zypper {
    /// `repos` (those with `id` and `baseurl`).
    pub repos: Vec<ZypperRepo>,
    /// Whether `repos` was given with entries (cloud-init does nothing without).
    pub any_repos: bool,
    /// `config`: `zypp.conf` settings with a true-ish value, in order.
    pub config: Vec<(String, String)>,
    /// `config.reposdir`, if given.
    pub reposdir: Option<String>,
}

/// An id zypper takes that names a file inside the repo directory.
fn id_ok(id: &str) -> bool {
    !id.trim().is_empty()
        && id.len() <= 200
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.: ".contains(&b))
}

/// A value as written: booleans `1`/`0` in a repo file.
fn scalar(r: &mut Reader, at: &str, node: &Node, yes: &str, no: &str) -> Option<String> {
    match &node.value {
        Value::Bool(b) => Some(if *b { yes } else { no }.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Str(_) => r.line(node, at, MAX_VALUE),
        Value::Seq(_) => {
            r.error(
                node,
                at,
                "zypper reads one value per option (cloud-init writes a list in a quoting zypper \
                 does not read); write one value",
            );
            None
        }
        _ => {
            r.wrong_type(node, at, "a string, number, true or false");
            None
        }
    }
}

fn name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.".contains(&b))
}

fn repo(r: &mut Reader, at: &str, i: usize, node: &Node) -> Option<ZypperRepo> {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(
            node,
            at,
            "a mapping with id, baseurl and repository options",
        );
        return None;
    };
    if entries.len() > MAX_ENTRIES {
        r.error(node, at, format!("has more than {MAX_ENTRIES} options"));
        return None;
    }
    let mut id = None;
    let mut options: Vec<(String, String)> = Vec::new();
    let mut ok = true;
    for (k, v) in entries {
        let here = join(at, &k.text);
        let name = k.text.trim().to_ascii_lowercase().replace('-', "_");
        if name.is_empty() {
            continue;
        }
        if !name_ok(&name) {
            r.error(
                v,
                &here,
                format!("{} is not a repository option name", quote(&k.text)),
            );
            ok = false;
            continue;
        }
        let Some(value) = scalar(r, &here, v, "1", "0") else {
            ok = false;
            continue;
        };
        if name == "id" {
            if !id_ok(&value) {
                r.error(
                    v,
                    &here,
                    format!(
                        "{} is not a repository id vmcust writes: letters, digits, -, _, ., : \
                         and spaces, not starting with . (it names the file <id>.repo)",
                        quote(&value)
                    ),
                );
                ok = false;
            }
            id = Some(value);
            continue;
        }
        match options.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => options.push((name, value)),
        }
    }
    let missing: Vec<&str> = [
        ("id", id.is_some()),
        ("baseurl", options.iter().any(|(n, _)| n == "baseurl")),
    ]
    .into_iter()
    .filter(|(_, has)| !has)
    .map(|(k, _)| k)
    .collect();
    if !missing.is_empty() {
        r.report(
            Severity::Warning,
            node,
            at,
            format!(
                "repo config at index {i} is missing required config keys: {}; it is skipped, \
                 as cloud-init skips it",
                missing.join(", ")
            ),
        );
        return None;
    }
    for default in ["enabled", "autorefresh"] {
        if !options.iter().any(|(n, _)| n == default) {
            options.push((default.into(), "1".into()));
        }
    }
    Some(ZypperRepo { id: id?, options }).filter(|_| ok)
}

/// `zypper`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(map) = r.map(node, key, &["repos", "config"]) else {
        return;
    };
    let mut z = Zypper::default();
    for (k, v) in map {
        let at = join(key, &k.text);
        if k.text == "repos" {
            let Some(items) = r.list(v, &at, MAX_ENTRIES) else {
                continue;
            };
            z.any_repos = !items.is_empty();
            z.repos = items
                .iter()
                .enumerate()
                .filter_map(|(i, n)| repo(r, &index(&at, i), i, n))
                .collect();
            continue;
        }
        let Value::Map(entries) = &v.value else {
            r.wrong_type(v, &at, "a mapping of zypp.conf settings");
            continue;
        };
        if entries.len() > MAX_ENTRIES {
            r.error(v, &at, format!("has more than {MAX_ENTRIES} settings"));
            continue;
        }
        for (name, value) in entries {
            let here = join(&at, &name.text);
            if !name_ok(&name.text) {
                r.error(
                    value,
                    &here,
                    format!("{} is not a zypp.conf setting name", quote(&name.text)),
                );
                continue;
            }
            let Some(s) = scalar(r, &here, value, "true", "false") else {
                continue;
            };
            // cloud-init leaves out settings whose value is false, 0 or empty.
            let falsy = matches!(value.value, Value::Bool(false))
                || matches!(value.value, Value::Int(0))
                || s.is_empty();
            if falsy {
                continue;
            }
            match name.text.as_str() {
                "configdir" => r.report(
                    Severity::Warning,
                    value,
                    &here,
                    "changing the location of the zypper configuration is not supported; the \
                     setting is skipped, as cloud-init skips it",
                ),
                "reposdir" => {
                    z.reposdir = absolute(r, &here, value);
                    if let Some(dir) = &z.reposdir {
                        z.config.push((name.text.clone(), dir.clone()));
                    }
                }
                _ => z.config.push((name.text.clone(), s)),
            }
        }
    }
    cfg.zypper = Some(z);
}

fn dir(z: &Zypper) -> &str {
    z.reposdir.as_deref().unwrap_or(DEFAULT_DIR)
}

fn file_of(z: &Zypper, repo: &ZypperRepo) -> String {
    format!("{}/{}.repo", dir(z), repo.id.replace(' ', "_"))
}

/// The files the module looks at: the repo files it must not overwrite, `zypp.conf`.
pub(crate) fn looked_at(cfg: &CloudConfig) -> Vec<String> {
    let Some(z) = &cfg.zypper else {
        return Vec::new();
    };
    z.repos
        .iter()
        .map(|r| file_of(z, r))
        .chain((!z.config.is_empty()).then(|| ZYPP_CONF.to_string()))
        .collect()
}

/// A zypper `.repo` file's text (every value through the one writer).
pub(crate) fn repo_text(repo: &ZypperRepo) -> Result<String, String> {
    let mut t = ConfText::new();
    t.push("[").value(&repo.id)?.push("]\n");
    for (k, v) in &repo.options {
        t.value(k)?.push(" = ").value(v)?.push("\n");
    }
    Ok(t.finish())
}

/// Plans the repo files and `zypp.conf`; `Ok(Err(why))` when it does nothing.
pub fn plan_zypper(cfg: &CloudConfig, facts: &Facts) -> Result<Result<RepoPlan, String>, String> {
    let Some(z) = &cfg.zypper else {
        return Ok(Err("no zypper".into()));
    };
    if !z.any_repos {
        return Ok(Err(
            "zypper.repos is empty or not given (cloud-init then ignores zypper.config too)".into(),
        ));
    }
    if !facts.has("zypper") {
        return Ok(Err(
            "the root has no zypper (cloud-init's zypper_add_repo runs on SUSE)".into(),
        ));
    }
    let mut plan = RepoPlan::default();
    if !z.config.is_empty() {
        let Some(Current::File(old)) = facts.files.get(ZYPP_CONF) else {
            return Err(format!(
                "zypper.config: {ZYPP_CONF} is not a file in the root; install libzypp in the \
                 template or remove zypper.config"
            ));
        };
        let mut text = String::from_utf8_lossy(old).into_owned();
        for (k, v) in &z.config {
            text = set_assignment(Some(&text), "", k, v)
                .map_err(|e| format!("zypper.config.{k}: {e}"))?;
        }
        if text.as_bytes() != old.as_slice() {
            plan.actions.push(Action::write_file(
                ZYPP_CONF,
                Contents::text(text),
                0o644,
                "libzypp's settings (cloud-config zypper.config)",
            ));
        }
    }
    let mut pending: Vec<String> = Vec::new();
    for repo in &z.repos {
        let path = file_of(z, repo);
        if pending.contains(&path) {
            plan.skipped
                .push(format!("skip {}: {path} is already pending", repo.id));
        } else if !matches!(facts.files.get(&path), None | Some(Current::Missing)) {
            plan.skipped
                .push(format!("skip {}: {path} already exists", repo.id));
        } else {
            let text = repo_text(repo).map_err(|e| format!("zypper.repos {}: {e}", repo.id))?;
            plan.actions.push(Action::write_file(
                path.clone(),
                Contents::text(text),
                0o644,
                "a zypper repository (cloud-config zypper.repos)",
            ));
            pending.push(path);
        }
    }
    if plan.actions.is_empty() {
        let why = if plan.skipped.is_empty() {
            "no repository to add and every setting is in place".to_string()
        } else {
            plan.skipped.join("; ")
        };
        return Ok(Err(why));
    }
    Ok(Ok(plan))
}

/// The program whose presence says the root is a zypper system.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.zypper.is_some() {
        &["zypper"]
    } else {
        &[]
    }
}

/// Writes the repositories' files and the settings.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    if s.cfg.zypper.is_none() {
        return absent("zypper");
    }
    match plan_zypper(s.cfg, s.cc) {
        Err(e) => failed(e),
        Ok(Err(why)) => skipped(why),
        Ok(Ok(p)) => match s.apply(p.actions) {
            Err(e) => failed(e),
            Ok(note) if p.skipped.is_empty() => ModuleOutcome::Ran { note },
            Ok(note) => ModuleOutcome::Ran {
                note: format!("{note}; {}", p.skipped.join("; ")),
            },
        },
    }
}

/// The files, and what is skipped.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    match plan_zypper(l.cfg, l.facts) {
        Err(e) => vec![format!("fails: {e}")],
        Ok(Err(why)) => vec![format!("nothing: {why}")],
        Ok(Ok(p)) => p
            .actions
            .iter()
            .flat_map(action_lines)
            .chain(p.skipped)
            .collect(),
    }
}

/// What it needs of the root's facts: what the files it looks at hold now, and their
/// modes.
pub(crate) fn wants(cfg: &CloudConfig, w: &mut Wanted) {
    w.files.extend(looked_at(cfg));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    fn suse(zypp_conf: Option<&str>) -> Facts {
        let mut f = Facts::default();
        f.programs.insert("zypper".into(), "/usr/bin/zypper".into());
        if let Some(c) = zypp_conf {
            f.files
                .insert(ZYPP_CONF.into(), Current::File(c.as_bytes().to_vec()));
        }
        f
    }

    fn planned(doc: &str, facts: &Facts) -> Result<Result<Vec<(String, String)>, String>, String> {
        let (cfg, p) = document::from_text(doc);
        assert!(
            p.iter().all(|p| p.severity != Severity::Error),
            "{doc}: {p:?}"
        );
        plan_zypper(&cfg, facts).map(|r| {
            r.map(|p| {
                p.actions
                    .iter()
                    .map(|a| match a {
                        Action::WriteFile { path, contents, .. } => (
                            path.display().to_string(),
                            String::from_utf8(contents.bytes().to_vec()).unwrap(),
                        ),
                        other => panic!("{other:?}"),
                    })
                    .collect()
            })
        })
    }

    #[test]
    fn repos_and_settings_as_cloud_init_writes_them() {
        let doc = "zypper:\n  repos:\n    - id: my repo\n      name: My Repo\n      baseurl: http://repo.example/leap/\n      Auto-Refresh: false\n      gpgcheck: true\n  config:\n    download.use_deltarpm: true\n    solver.onlyRequires: true\n    reposdir: /etc/zypp/repos.d\n    rpm.install.excludedocs: false\n";
        let got = planned(
            doc,
            &suse(Some(
                "[main]\n# download.use_deltarpm = true\ndownload.use_deltarpm = false\n",
            )),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            got,
            [
                (
                    ZYPP_CONF.to_string(),
                    "[main]\n# download.use_deltarpm = true\ndownload.use_deltarpm=true\nsolver.onlyRequires=true\nreposdir=/etc/zypp/repos.d\n".to_string()
                ),
                (
                    "/etc/zypp/repos.d/my_repo.repo".to_string(),
                    "[my repo]\nname = My Repo\nbaseurl = http://repo.example/leap/\nauto_refresh = 0\ngpgcheck = 1\nenabled = 1\nautorefresh = 1\n".to_string()
                ),
            ]
        );
        // A second boot changes nothing.
        let again = planned(doc, &{
            let mut f = suse(Some(&got[0].1));
            f.files.insert(
                "/etc/zypp/repos.d/my_repo.repo".into(),
                Current::File(got[1].1.clone().into_bytes()),
            );
            f
        })
        .unwrap();
        assert!(
            again.as_ref().is_err_and(|w| w.contains("already exists")),
            "{again:?}"
        );
    }

    #[test]
    fn nothing_or_failure_where_cloud_init_does_nothing_or_fails() {
        let repo =
            "zypper: {repos: [{id: a, baseurl: 'http://x'}], config: {solver.onlyRequires: true}}";
        let table: &[(&str, Facts, &str)] = &[
            (
                "zypper: {config: {a: 1}}",
                suse(Some("")),
                "ignores zypper.config",
            ),
            (
                "zypper: {repos: []}",
                suse(Some("")),
                "ignores zypper.config",
            ),
            (repo, Facts::default(), "the root has no zypper"),
            (
                "zypper: {repos: [{id: a}]}",
                suse(None),
                "no repository to add",
            ),
        ];
        for (doc, facts, want) in table {
            match planned(doc, facts) {
                Ok(Err(why)) => assert!(why.contains(want), "{doc}: {why}"),
                other => panic!("{doc}: {other:?}"),
            }
        }
        let err = planned(repo, &suse(None)).unwrap_err();
        assert!(err.contains("zypp.conf is not a file"), "{err}");
        let (_, p) = document::from_text("zypper: {repos: [{name: a}]}");
        assert!(
            p[0].message
                .contains("missing required config keys: id, baseurl"),
            "{p:?}"
        );
        let (_, p) = document::from_text("zypper: {repos: [{id: a, baseurl: x}], cfg: {}}");
        assert_eq!(p[0].severity, Severity::Unknown, "{p:?}");
    }

    #[test]
    fn hostile_values_are_refused_at_their_key() {
        super::super::test_support::assert_refused(&[
            (
                "zypper: {repos: [{id: '../x', baseurl: 'http://x'}]}",
                "zypper.repos[0].id: ",
            ),
            (
                "zypper: {repos: [{id: 'a/b', baseurl: 'http://x'}]}",
                "not a repository id",
            ),
            (
                "zypper: {repos: [{id: a, baseurl: \"http://x\\n[evil]\"}]}",
                "zypper.repos[0].baseurl",
            ),
            (
                "zypper: {repos: [{id: a, baseurl: [a, b]}]}",
                "one value per option",
            ),
            (
                "zypper: {repos: [{id: a, 'base url': 'http://x'}]}",
                "not a repository option name",
            ),
            (
                "zypper: {config: {'a=b': 1}}",
                "not a zypp.conf setting name",
            ),
            (
                "zypper: {config: {reposdir: relative}}",
                "not an absolute path",
            ),
            ("zypper: {repos: {id: a}}", "write a list"),
        ]);
    }
}
