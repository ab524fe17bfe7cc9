//! `yum_add_repo` (`yum_repos`, `yum_repo_dir`): one dnf/yum `.repo` file per repository,
//! as cloud-init's `cc_yum_add_repo` writes them — `<yum_repo_dir>/<id>.repo` (spaces of
//! the id turned into `-`), a dated header comment, `[id]`, then `option = value` lines in
//! the order given (booleans as `1`/`0`, lists as tab-indented continuation lines) — only
//! on a root with dnf or yum, and never over a file that is already there. Unlike
//! cloud-init, an id or option name that could leave the repo directory or break the INI
//! syntax is refused when the document is read.

use serde::Serialize;

use crate::cloud_config::apply::conf_text::ConfText;
use crate::cloud_config::apply::driver::{absent, failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::preview::{action_lines, Look};
use crate::cloud_config::modules::write_files::absolute;
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader, Severity};
use crate::cloud_config::CloudConfig;
use crate::facts::{Current, Facts, Wanted};
use crate::model::quote;
use crate::plan::{Action, Contents};

/// Most repositories in `yum_repos`.
pub(crate) const MAX_REPOS: usize = 128;
/// Most options of one repository, and most entries of a list value.
pub(crate) const MAX_OPTIONS: usize = 128;
/// The longest value.
pub(crate) const MAX_VALUE: usize = 4096;
/// cloud-init's default `yum_repo_dir`.
pub(crate) const DEFAULT_DIR: &str = "/etc/yum.repos.d";
/// The options one of which a repository needs.
pub(crate) const SOURCES: &[&str] = &["baseurl", "metalink", "mirrorlist"];

/// One option's value, as it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RepoValue {
    /// One line (booleans already `1`/`0`).
    One(String),
    /// A list: the first entry on the option's line, the others on continuation lines.
    Many(Vec<String>),
}

/// One repository of `yum_repos`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct YumRepo {
    /// The id as written (the section name and file name have its spaces as `-`).
    pub id: String,
    /// Its options, names normalised (lower case, `-` as `_`), in the order given.
    pub options: Vec<(String, RepoValue)>,
}

impl YumRepo {
    /// The id cloud-init writes: spaces as `-`.
    pub fn canonical_id(&self) -> String {
        self.id.replace(' ', "-")
    }

    fn has_source(&self) -> bool {
        self.options
            .iter()
            .any(|(k, _)| SOURCES.contains(&k.as_str()))
    }
}

/// A repository id dnf takes and that names a file inside the repo directory: letters,
/// digits, `-`, `_`, `.`, `:` and spaces (written `-`), not starting with `.`.
fn id_ok(id: &str) -> bool {
    !id.trim().is_empty()
        && id.len() <= 200
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.: ".contains(&b))
}

/// An option name as cloud-init normalises it (trimmed, lower case, `-` as `_`).
fn option_name(raw: &str) -> String {
    raw.trim().to_ascii_lowercase().replace('-', "_")
}

/// One scalar of an option's value as cloud-init's ConfigParser writes it.
fn scalar(r: &mut Reader, at: &str, node: &Node) -> Option<String> {
    let s = match &node.value {
        Value::Bool(b) => return Some(if *b { "1" } else { "0" }.into()),
        Value::Int(i) => return Some(i.to_string()),
        Value::Float(f) => return Some(f.to_string()),
        Value::Str(_) => r.line(node, at, MAX_VALUE)?,
        _ => {
            r.wrong_type(node, at, "a string, number, true or false");
            return None;
        }
    };
    // ConfigParser's interpolation refuses a lone `%` (and cloud-init then writes no
    // repo file at all); `%%` it passes through as written.
    if s.replace("%%", "").contains('%') {
        r.error(
            node,
            at,
            format!(
                "{} holds a % that is not %%, which cloud-init's repo writer refuses; \
                 write the value without % (dnf reads %% as two percent signs)",
                quote(&s)
            ),
        );
        return None;
    }
    Some(s)
}

fn repo(r: &mut Reader, at: &str, id: &str, node: &Node) -> Option<YumRepo> {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(node, at, "a mapping of repository options (baseurl: …)");
        return None;
    };
    if entries.len() > MAX_OPTIONS {
        r.error(node, at, format!("has more than {MAX_OPTIONS} options"));
        return None;
    }
    let mut options: Vec<(String, RepoValue)> = Vec::new();
    let mut ok = true;
    for (k, v) in entries {
        let here = join(at, &k.text);
        let name = option_name(&k.text);
        if name.is_empty() {
            continue;
        }
        if name.len() > 64 || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            r.error(
                v,
                &here,
                format!(
                    "{} is not a repository option name (letters, digits, _ and -)",
                    quote(&k.text)
                ),
            );
            ok = false;
            continue;
        }
        let value = match &v.value {
            Value::Seq(_) => {
                let Some(items) = r.list(v, &here, MAX_OPTIONS) else {
                    ok = false;
                    continue;
                };
                let vals: Vec<Option<String>> = items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| scalar(r, &index(&here, i), n))
                    .collect();
                if vals.iter().any(Option::is_none) {
                    ok = false;
                    continue;
                }
                RepoValue::Many(vals.into_iter().flatten().collect())
            }
            _ => match scalar(r, &here, v) {
                Some(s) => RepoValue::One(s),
                None => {
                    ok = false;
                    continue;
                }
            },
        };
        // A later spelling of the same option replaces the earlier, as ConfigParser does.
        match options.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => options.push((name, value)),
        }
    }
    let repo = YumRepo {
        id: id.to_string(),
        options,
    };
    if ok && !repo.has_source() {
        r.report(
            Severity::Warning,
            node,
            at,
            format!(
                "has none of {}; the repository is skipped, as cloud-init skips it",
                SOURCES.join(", ")
            ),
        );
    }
    ok.then_some(repo)
}

/// `yum_repos`.
pub(crate) fn parse_repos(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(node, key, "a mapping of repository ids to their options");
        return;
    };
    if entries.len() > MAX_REPOS {
        r.error(node, key, format!("has more than {MAX_REPOS} repositories"));
        return;
    }
    let mut repos = Vec::new();
    for (k, v) in entries {
        let at = join(key, &k.text);
        if !id_ok(&k.text) {
            r.error(
                v,
                &at,
                format!(
                    "{} is not a repository id vmcust writes: letters, digits, -, _, ., : \
                     and spaces, not starting with . (it names the file <id>.repo)",
                    quote(&k.text)
                ),
            );
            continue;
        }
        if let Some(repo) = repo(r, &at, &k.text, v) {
            repos.push(repo);
        }
    }
    cfg.yum_repos = Some(repos);
}

/// `yum_repo_dir`.
pub(crate) fn parse_dir(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.yum_repo_dir = absolute(r, key, node);
}

/// The repo directory (`yum_repo_dir`, else cloud-init's default), without a final `/`.
pub(crate) fn repo_dir(cfg: &CloudConfig) -> &str {
    cfg.yum_repo_dir.as_deref().unwrap_or(DEFAULT_DIR)
}

fn file_of(cfg: &CloudConfig, repo: &YumRepo) -> String {
    format!("{}/{}.repo", repo_dir(cfg), repo.canonical_id())
}

/// The files the module must not overwrite: one per repository.
pub(crate) fn looked_at(cfg: &CloudConfig) -> Vec<String> {
    cfg.yum_repos
        .iter()
        .flatten()
        .map(|r| file_of(cfg, r))
        .collect()
}

/// A `.repo` file's text, dated `stamp` (RFC 2822). Every value passes the one writer
/// that refuses a line break.
pub(crate) fn repo_text(repo: &YumRepo, stamp: &str) -> Result<String, String> {
    let mut t = ConfText::new();
    t.push("# Created by vmcust (cloud-config yum_repos) on ")
        .value(stamp)?
        .push("\n[")
        .value(&repo.canonical_id())?
        .push("]\n");
    for (name, value) in &repo.options {
        t.value(name)?.push(" = ");
        match value {
            RepoValue::One(v) => {
                t.value(v)?;
            }
            RepoValue::Many(vs) => {
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        t.push("\n\t");
                    }
                    t.value(v)?;
                }
            }
        }
        t.push("\n");
    }
    t.push("\n");
    Ok(t.finish())
}

/// What a repository module (this one, `zypper_add_repo`) does with a document on a
/// root.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RepoPlan {
    /// The files to write.
    pub actions: Vec<Action>,
    /// What is skipped (a repository, a setting), and why.
    pub skipped: Vec<String>,
}

/// Plans the `.repo` files (dated `stamp`); `Ok(None)` with the reason it does nothing.
pub fn plan_yum_repos(
    cfg: &CloudConfig,
    facts: &Facts,
    stamp: &str,
) -> Result<Result<RepoPlan, String>, String> {
    let Some(repos) = cfg.yum_repos.as_ref().filter(|r| !r.is_empty()) else {
        return Ok(Err("no yum_repos".into()));
    };
    if !facts.has("dnf") && !facts.has("yum") {
        return Ok(Err(
            "the root has neither dnf nor yum (cloud-init's yum_add_repo runs on the dnf/yum \
             distributions)"
                .into(),
        ));
    }
    let mut plan = RepoPlan::default();
    let mut pending: Vec<String> = Vec::new();
    for repo in repos {
        let path = file_of(cfg, repo);
        let id = repo.canonical_id();
        if !repo.has_source() {
            plan.skipped.push(format!(
                "skip {}: it has none of {}",
                repo.id,
                SOURCES.join(", ")
            ));
        } else if pending.contains(&id) {
            plan.skipped
                .push(format!("skip {}: {path} is already pending", repo.id));
        } else if !matches!(facts.files.get(&path), None | Some(Current::Missing)) {
            plan.skipped
                .push(format!("skip {}: {path} already exists", repo.id));
        } else {
            let text = repo_text(repo, stamp).map_err(|e| format!("yum_repos.{}: {e}", repo.id))?;
            plan.actions.push(Action::write_file(
                path,
                Contents::text(text),
                0o644,
                "a dnf/yum repository (cloud-config yum_repos)",
            ));
            pending.push(id);
        }
    }
    if plan.actions.is_empty() {
        return Ok(Err(plan.skipped.join("; ")));
    }
    Ok(Ok(plan))
}

/// The programs whose presence says the root is a dnf/yum system.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.yum_repos.is_some() {
        &["dnf", "yum"]
    } else {
        &[]
    }
}

/// Writes the repositories' files.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    if s.cfg.yum_repos.is_none() {
        return absent("yum_repos");
    }
    let stamp = crate::state::rfc2822(crate::state::now());
    match plan_yum_repos(s.cfg, s.cc, &stamp) {
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

/// What `plan` shows for the header's date (the time of the run).
pub(crate) const STAMP_SHOWN: &str = "<the time it is written>";

/// The files, and the repositories skipped.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    match plan_yum_repos(l.cfg, l.facts, STAMP_SHOWN) {
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

    fn dnf_root() -> Facts {
        let mut f = Facts::default();
        f.programs.insert("dnf".into(), "/usr/bin/dnf".into());
        f
    }

    fn files(doc: &str, facts: &Facts) -> Result<Vec<(String, String)>, String> {
        let (cfg, p) = document::from_text(doc);
        assert!(
            p.iter().all(|p| p.severity != Severity::Error),
            "{doc}: {p:?}"
        );
        plan_yum_repos(&cfg, facts, "Fri, 04 Dec 2026 19:10:58 +0000")
            .unwrap()
            .map(|p| {
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
    }

    #[test]
    fn repo_files_are_written_as_cloud_init_writes_them() {
        let doc = "yum_repos:\n  epel testing:\n    name: Extra Packages\n    baseurl: https://mirror.example/epel/$releasever/$basearch\n    enabled: false\n    gpgcheck: true\n    Skip-If-Unavailable: 1\n    gpgkey: [file:///etc/pki/a, https://keys.example/b]\n";
        let got = files(doc, &dnf_root()).unwrap();
        assert_eq!(
            got,
            [(
                "/etc/yum.repos.d/epel-testing.repo".to_string(),
                "# Created by vmcust (cloud-config yum_repos) on Fri, 04 Dec 2026 19:10:58 +0000\n\
                 [epel-testing]\n\
                 name = Extra Packages\n\
                 baseurl = https://mirror.example/epel/$releasever/$basearch\n\
                 enabled = 0\n\
                 gpgcheck = 1\n\
                 skip_if_unavailable = 1\n\
                 gpgkey = file:///etc/pki/a\n\thttps://keys.example/b\n\n"
                    .to_string()
            )]
        );
        let got = files(
            "yum_repo_dir: /srv/repos/\nyum_repos: {a: {metalink: 'https://m.example/?r=x'}}",
            &dnf_root(),
        )
        .unwrap();
        assert_eq!(got[0].0, "/srv/repos/a.repo");
    }

    #[test]
    fn skips_as_cloud_init_does() {
        let mut facts = dnf_root();
        facts.files.insert(
            "/etc/yum.repos.d/old.repo".into(),
            Current::File(b"[old]\n".to_vec()),
        );
        /// The files written, or why nothing is.
        type Want<'a> = Result<&'a [&'a str], &'a str>;
        let table: &[(&str, &Facts, Want)] = &[
            (
                "yum_repos: {old: {baseurl: 'http://x'}, new: {baseurl: 'http://y'}}",
                &facts,
                Ok(&["/etc/yum.repos.d/new.repo"]),
            ),
            (
                "yum_repos: {old: {baseurl: 'http://x'}}",
                &facts,
                Err("/etc/yum.repos.d/old.repo already exists"),
            ),
            (
                "yum_repos: {a b: {baseurl: 'http://x'}, a-b: {baseurl: 'http://y'}}",
                &facts,
                Ok(&["/etc/yum.repos.d/a-b.repo"]),
            ),
            (
                "yum_repos: {a: {name: x}}",
                &facts,
                Err("none of baseurl, metalink, mirrorlist"),
            ),
            (
                "yum_repos: {a: {baseurl: 'http://x'}}",
                &Facts::default(),
                Err("neither dnf nor yum"),
            ),
            ("yum_repos: {}", &facts, Err("no yum_repos")),
        ];
        for (doc, f, want) in table {
            let got = files(doc, f);
            match (want, got) {
                (Ok(paths), Ok(got)) => {
                    let got: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
                    assert_eq!(got, *paths, "{doc}");
                }
                (Err(why), Err(got)) => assert!(got.contains(why), "{doc}: {got}"),
                (_, got) => panic!("{doc}: {got:?}"),
            }
        }
    }

    #[test]
    fn hostile_ids_options_and_values_are_refused_at_their_key() {
        super::super::test_support::assert_refused(&[
            (
                "yum_repos: {'../../etc/cron.d/x': {baseurl: 'http://x'}}",
                "yum_repos.../../etc/cron.d/x: ",
            ),
            (
                "yum_repos: {'a/b': {baseurl: 'http://x'}}",
                "not a repository id",
            ),
            (
                "yum_repos: {'.hidden': {baseurl: 'http://x'}}",
                "not a repository id",
            ),
            (
                "yum_repos: {\"a]\\n[b\": {baseurl: 'http://x'}}",
                "not a repository id",
            ),
            (
                "yum_repos: {a: {baseurl: \"http://x\\n[evil]\"}}",
                "yum_repos.a.baseurl: ",
            ),
            (
                "yum_repos: {a: {'base url=': 'http://x'}}",
                "not a repository option name",
            ),
            (
                "yum_repos: {a: {baseurl: 'http://x/%20'}}",
                "% that is not %%",
            ),
            (
                "yum_repos: {a: {gpgkey: ['a', {b: c}]}}",
                "yum_repos.a.gpgkey[1]",
            ),
            (
                "yum_repos: {a: [baseurl]}",
                "a mapping of repository options",
            ),
            ("yum_repos: [a]", "a mapping of repository ids"),
            ("yum_repo_dir: etc/yum", "not an absolute path"),
        ]);
        let (cfg, p) = document::from_text("yum_repos: {a: {baseurl: 'http://x/%%'}}");
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(
            cfg.yum_repos.unwrap()[0].options[0].1,
            RepoValue::One("http://x/%%".into())
        );
    }
}
