//! `apt`: apt's sources, keys, proxy, configuration and debconf answers, as cloud-init's
//! `cc_apt_configure` sets them, on a root with apt-get (other roots: skipped, as
//! cloud-init's `distros` for it are the apt family).
//!
//! In cloud-init's order: `debconf_selections` through the root's
//! `debconf-set-selections`; with `preserve_sources_list: false` the main sources file
//! (the deb822 `/etc/apt/sources.list.d/<distro>.sources` of cloud-init's templates, or
//! the user's `sources_list` where its lines say which format) with the mirrors and
//! `disable_suites`; the proxy and `conf` files (each moved aside when not asked for, where
//! cloud-init deletes it); each `sources` entry's key (dearmoured, or fetched from its
//! keyserver, by the root's `gpg`) and its line (`add-apt-repository` for a `ppa:`-like
//! one); then `apt-get update`, whose failure is noted, not fatal. Every file is one
//! planned action, so the whole set is applied (and rolled back) at once.
//!
//! Differences (docs/differences-from-cloud-init.md): `preserve_sources_list` is true
//! unless written (Debian's shipped `cloud.cfg`); the release is `VERSION_CODENAME` of
//! `/etc/os-release` (what `lsb_release` prints) and the architecture the root's dpkg's;
//! an unknown `$NAME` in a source, or a key that is no ASCII-armoured public key, is
//! refused at its line instead of failing the module at run time; a key gpg cannot
//! dearmour fails the module instead of becoming `/dev/null`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path};
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use crate::cloud_config::apply::driver::{failed, skipped, ModuleOutcome, StageContext, Step};
use crate::cloud_config::apply::exec::{self, Program, RunEnd};
use crate::cloud_config::apply::preview::{action_lines, Look};
use crate::cloud_config::jinja::{self, JinjaError, Vars};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{join, Reader};
use crate::cloud_config::CloudConfig;
pub(crate) use crate::facts::apt::AptFacts;
use crate::facts::apt::{pick, AptWanted, MirrorChoice};
use crate::facts::{Current, Facts, Wanted};
use crate::model::quote;
use crate::plan::{Action, Contents};
use crate::process::{self, Cmd, Ended, Output};
use crate::root::Root;

/// Most `sources` entries, mirrors, `disable_suites` or debconf entries.
pub(crate) const MAX_ENTRIES: usize = 256;
/// Largest ASCII-armoured key.
pub(crate) const MAX_KEY: usize = 64 * 1024;
/// Largest `source`, `sources_list`, `conf` or debconf entry.
pub(crate) const MAX_TEXT: usize = 64 * 1024;
/// Largest keyring gpg may hand back.
pub(crate) const MAX_KEYRING: usize = 1024 * 1024;
/// Tries of a keyserver fetch, as cloud-init's (1 s apart).
pub(crate) const KEY_TRIES: usize = 3;

/// The proxy file cloud-init writes.
pub(crate) const PROXY_FILE: &str = "/etc/apt/apt.conf.d/90cloud-init-aptproxy";
/// The `conf` file cloud-init writes.
pub(crate) const CONF_FILE: &str = "/etc/apt/apt.conf.d/94cloud-init-config";
/// apt's one-line main sources file.
pub(crate) const SOURCES_LIST: &str = "/etc/apt/sources.list";
/// Where `sources` entries' files go.
pub(crate) const SOURCES_DIR: &str = "/etc/apt/sources.list.d";
/// Globally trusted keys.
pub(crate) const TRUSTED_DIR: &str = "/etc/apt/trusted.gpg.d";
/// Keys only a `signed-by=$KEY_FILE` source trusts.
pub(crate) const HARDENED_DIR: &str = "/etc/apt/cloud-init.gpg.d";
/// cloud-init's default `add_apt_repo_match`.
pub(crate) const DEFAULT_REPO_MATCH: &str = r"^[\w-]+:\w";
/// cloud-init's default keyserver.
pub(crate) const DEFAULT_KEYSERVER: &str = "keyserver.ubuntu.com";
/// What a removed file is renamed to: apt reads neither a `.disabled` file of
/// `apt.conf.d` nor one beside `sources.list`, and says nothing about it.
pub(crate) const REMOVED_SUFFIX: &str = ".disabled";

/// The names a `sources` entry's `source` may use.
const SOURCE_NAMES: &[&str] = &["MIRROR", "PRIMARY", "SECURITY", "RELEASE", "KEY_FILE"];
/// The names `sources_list` may use.
const LIST_NAMES: &[&str] = &[
    "MIRROR",
    "mirror",
    "PRIMARY",
    "primary",
    "SECURITY",
    "security",
    "RELEASE",
    "codename",
    "primary_key",
    "security_key",
];

/// One `primary` or `security` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mirror {
    /// The dpkg architectures it is for (`default` for any other).
    pub arches: Vec<String>,
    /// The mirror.
    pub uri: Option<String>,
    /// Mirrors to use, the first whose host resolves.
    pub search: Vec<String>,
    /// Look for `<distro>-mirror` host names in DNS.
    pub search_dns: bool,
    /// The archive key.
    #[serde(flatten)]
    pub key: KeySpec,
}

/// The key of a mirror or `sources` entry.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct KeySpec {
    /// Its id, fetched from the keyserver when no `key` is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyid: Option<String>,
    /// The ASCII-armoured public key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The keyserver (default keyserver.ubuntu.com).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyserver: Option<String>,
}

impl KeySpec {
    fn any(&self) -> bool {
        self.key.is_some() || self.keyid.is_some()
    }
}

/// One `sources` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// Its name (the map key).
    pub name: String,
    /// The line (or template), if any.
    pub source: Option<String>,
    /// Its key.
    #[serde(flatten)]
    pub key: KeySpec,
    /// The file, default the name (under `/etc/apt/sources.list.d/`, `.list` added).
    pub filename: String,
    /// Append to the file (default true) or replace it.
    pub append: bool,
}

/// `apt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Apt {
    /// Leave the main sources file alone (unset: true, Debian's `cloud.cfg`).
    pub preserve_sources_list: Option<bool>,
    /// The main sources file's template.
    pub sources_list: Option<String>,
    /// Suites to comment out of the main sources file.
    pub disable_suites: Vec<String>,
    /// Primary mirrors.
    pub primary: Vec<Mirror>,
    /// Security mirrors.
    pub security: Vec<Mirror>,
    /// Extra sources, in document order.
    pub sources: Vec<Source>,
    /// Sources matching it go to `add-apt-repository` (empty: none).
    pub add_apt_repo_match: String,
    /// `proxy`, `http_proxy`, `ftp_proxy`, `https_proxy`, in that order.
    pub proxies: Vec<(String, String)>,
    /// `conf`, verbatim.
    pub conf: Option<String>,
    /// `debconf_selections`, by name (fed in name order).
    pub debconf_selections: BTreeMap<String, String>,
}

/// The keys of `apt`.
const KEYS: &[&str] = &[
    "preserve_sources_list",
    "sources_list",
    "disable_suites",
    "primary",
    "security",
    "sources",
    "add_apt_repo_match",
    "proxy",
    "http_proxy",
    "https_proxy",
    "ftp_proxy",
    "conf",
    "debconf_selections",
];

/// The proxy keys in the order cloud-init writes them.
const PROXY_KEYS: &[&str] = &["proxy", "http_proxy", "ftp_proxy", "https_proxy"];

/// Substitutes `$NAME` and `${NAME}` as cloud-init's basic renderer does: a name is
/// letters, digits, `_` and `.`; an unknown name, or a dotted one (cloud-init traverses
/// dictionaries there, and every value is a string), is an error; a `$` before anything
/// else stays. There is no escape: `$$RELEASE` is `$` and the release, as in cloud-init.
pub(crate) fn substitute(
    text: &str,
    value: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let braced = after.strip_prefix('{').and_then(|b| {
            let n = b.find(|c: char| !name_char(c)).unwrap_or(b.len());
            (n > 0 && b[n..].starts_with('}')).then(|| (&b[..n], n + 2))
        });
        let (name, used) = match braced {
            Some(found) => found,
            None => {
                let n = after.find(|c: char| !name_char(c)).unwrap_or(after.len());
                (&after[..n], n)
            }
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        if name.contains('.') {
            return Err(format!(
                "${name}: a name with a dot is not a variable here (cloud-init fails with TypeError); remove the dot"
            ));
        }
        match value(name) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(format!(
                    "${name} is not a variable cloud-init knows here (it fails the module with KeyError)"
                ))
            }
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Renders a `source` or `sources_list` with `params`: Jinja when it starts with a
/// `## template: jinja` line, `$NAME` substitution otherwise.
pub(crate) fn render(text: &str, params: &BTreeMap<&str, String>) -> Result<String, String> {
    if text.trim_start().starts_with("##") {
        let tree: serde_json::Map<String, serde_json::Value> = params
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone())))
            .collect();
        match jinja::render(text, &Vars::new(&serde_json::Value::Object(tree))) {
            Ok(r) if r.missing.is_empty() => return Ok(r.text),
            Ok(r) => {
                return Err(format!(
                    "the template names {} that is not a variable here",
                    r.missing.join(", ")
                ))
            }
            Err(JinjaError::NoHeader) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    substitute(text, &|n| params.get(n).cloned())
}

/// Checks a template against the names it may use (values made up).
fn check_template(r: &mut Reader, node: &Node, at: &str, text: &str, names: &[&str]) -> bool {
    let params: BTreeMap<&str, String> = names.iter().map(|n| (*n, "x".to_string())).collect();
    match render(text, &params) {
        Ok(_) => true,
        Err(e) => {
            let known = names.iter().map(|n| format!("${n}")).collect::<Vec<_>>();
            r.error(node, at, format!("{e}; it may use {}", known.join(", ")));
            false
        }
    }
}

fn armoured(r: &mut Reader, node: &Node, at: &str) -> Option<String> {
    let key = r.string(node, at, MAX_KEY)?;
    let begins = key.contains("-----BEGIN PGP PUBLIC KEY BLOCK-----");
    let ends = key.contains("-----END PGP PUBLIC KEY BLOCK-----");
    if begins && ends && !key.contains('\0') {
        Some(key)
    } else {
        r.error(node, at, "is not an ASCII-armoured public key; paste the whole -----BEGIN PGP PUBLIC KEY BLOCK----- … -----END PGP PUBLIC KEY BLOCK----- block (gpg --armor --export)");
        None
    }
}

/// A word handed to a program as one argument: a line that cannot be read as an option.
fn argument(r: &mut Reader, node: &Node, at: &str) -> Option<String> {
    let s = r.line(node, at, 1024)?;
    if s.is_empty() || s.starts_with('-') {
        r.error(
            node,
            at,
            format!("{} is empty or starts with '-'", quote(&s)),
        );
        return None;
    }
    Some(s)
}

/// Reads `keyid`, `key` or `keyserver` into `spec`; false when the value was refused.
fn key_field(r: &mut Reader, spec: &mut KeySpec, field: &str, node: &Node, at: &str) -> bool {
    let value = match field {
        // YAML reads an all-digit id as an integer; cloud-init takes its text.
        "keyid" => match &node.value {
            Value::Int(n) => Some(n.to_string()),
            _ => argument(r, node, at),
        },
        "key" => armoured(r, node, at),
        _ => argument(r, node, at),
    };
    let ok = value.is_some();
    match field {
        "keyid" => spec.keyid = value,
        "key" => spec.key = value,
        _ => spec.keyserver = value,
    }
    ok
}

fn strings(r: &mut Reader, node: &Node, at: &str) -> Vec<String> {
    let Some(items) = r.list(node, at, MAX_ENTRIES) else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, n)| r.line(n, &crate::cloud_config::read::index(at, i), 1024))
        .collect()
}

fn mirrors(r: &mut Reader, node: &Node, at: &str) -> Vec<Mirror> {
    let Some(items) = r.list(node, at, MAX_ENTRIES) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = crate::cloud_config::read::index(at, i);
        let known = [
            "arches",
            "uri",
            "search",
            "search_dns",
            "keyid",
            "key",
            "keyserver",
        ];
        let Some(map) = r.map(item, &at, &known) else {
            continue;
        };
        let mut m = Mirror {
            arches: Vec::new(),
            uri: None,
            search: Vec::new(),
            search_dns: false,
            key: KeySpec::default(),
        };
        let mut has_arches = false;
        for (k, v) in map {
            let at = join(&at, &k.text);
            match k.text.as_str() {
                "arches" => {
                    has_arches = true;
                    m.arches = strings(r, v, &at);
                }
                "uri" => m.uri = url(r, v, &at),
                "search" => {
                    let list = strings(r, v, &at);
                    m.search = list.into_iter().filter(|u| url_ok(u)).collect();
                }
                "search_dns" => m.search_dns = r.bool(v, &at).unwrap_or(false),
                field => {
                    key_field(r, &mut m.key, field, v, &at);
                }
            }
        }
        if !has_arches {
            r.error(
                item,
                &at,
                "has no arches; write arches: [default] or the dpkg architectures it is for",
            );
            continue;
        }
        out.push(m);
    }
    out
}

fn url_ok(u: &str) -> bool {
    !u.is_empty() && !u.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn url(r: &mut Reader, node: &Node, at: &str) -> Option<String> {
    let u = r.line(node, at, 1024)?;
    if url_ok(&u) {
        Some(u)
    } else {
        r.error(
            node,
            at,
            format!("{} is not a URI (empty or with spaces)", quote(&u)),
        );
        None
    }
}

/// A `filename`: a name under `/etc/apt/sources.list.d/` or an absolute path, no `..`.
fn file_name(r: &mut Reader, node: &Node, at: &str, name: String) -> Option<String> {
    let bad = name.is_empty()
        || name.ends_with('/')
        || name.chars().any(|c| c.is_control())
        || Path::new(&name)
            .components()
            .any(|c| matches!(c, Component::ParentDir));
    if bad {
        r.error(
            node,
            at,
            format!(
                "{} is not a file name (empty, a directory, with .. or a control character)",
                quote(&name)
            ),
        );
        return None;
    }
    Some(name)
}

fn sources(r: &mut Reader, node: &Node, at: &str) -> Vec<Source> {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(node, at, "a mapping of names to sources");
        return Vec::new();
    };
    if entries.len() > MAX_ENTRIES {
        r.error(
            node,
            at,
            format!("has {} entries; at most {MAX_ENTRIES}", entries.len()),
        );
        return Vec::new();
    }
    let mut out = Vec::new();
    for (name, entry) in entries {
        let at = join(at, &name.text);
        let known = ["source", "keyid", "key", "keyserver", "filename", "append"];
        // cloud-init takes an entry without settings as a name only (a file of nothing).
        let map = match &entry.value {
            Value::Null => Vec::new(),
            _ => match r.map(entry, &at, &known) {
                Some(m) => m,
                None => continue,
            },
        };
        let mut s = Source {
            name: name.text.clone(),
            source: None,
            key: KeySpec::default(),
            filename: name.text.clone(),
            append: true,
        };
        let mut ok = true;
        let mut filename_at: (&Node, String) = (entry, at.clone());
        for (k, v) in map {
            let at = join(&at, &k.text);
            match k.text.as_str() {
                "source" => match r.string(v, &at, MAX_TEXT) {
                    Some(text) if check_template(r, v, &at, &text, SOURCE_NAMES) => {
                        s.source = Some(text)
                    }
                    _ => ok = false,
                },
                "filename" => match r.line(v, &at, 255) {
                    Some(f) => {
                        s.filename = f;
                        filename_at = (v, at);
                    }
                    None => ok = false,
                },
                "append" => s.append = r.bool(v, &at).unwrap_or(true),
                field => ok &= key_field(r, &mut s.key, field, v, &at),
            }
        }
        let (fnode, fat) = filename_at;
        match file_name(r, fnode, &fat, s.filename.clone()) {
            Some(f) => s.filename = f,
            None => ok = false,
        }
        if ok {
            out.push(s);
        }
    }
    out
}

fn proxy_value(r: &mut Reader, node: &Node, at: &str) -> Option<String> {
    let v = r.line(node, at, 1024)?;
    if v.contains('"') {
        r.error(
            node,
            at,
            "holds a double quote, which would end apt's quoted value; remove it",
        );
        return None;
    }
    Some(v)
}

/// `apt`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(map) = r.map(node, key, KEYS) else {
        return;
    };
    let mut apt = Apt {
        preserve_sources_list: None,
        sources_list: None,
        disable_suites: Vec::new(),
        primary: Vec::new(),
        security: Vec::new(),
        sources: Vec::new(),
        add_apt_repo_match: DEFAULT_REPO_MATCH.into(),
        proxies: Vec::new(),
        conf: None,
        debconf_selections: BTreeMap::new(),
    };
    let mut proxies = BTreeMap::new();
    for (k, v) in map {
        let at = join(key, &k.text);
        match k.text.as_str() {
            "preserve_sources_list" => apt.preserve_sources_list = r.bool(v, &at),
            "sources_list" => {
                if let Some(t) = r.string(v, &at, MAX_TEXT) {
                    if check_template(r, v, &at, &t, LIST_NAMES) {
                        apt.sources_list = Some(t);
                    }
                }
            }
            "disable_suites" => {
                let list = strings(r, v, &at);
                let mut seen = BTreeSet::new();
                for s in list {
                    if !seen.insert(s.clone()) {
                        r.error(v, &at, format!("{} is listed twice", quote(&s)));
                    } else if check_template(r, v, &at, &s, &["RELEASE"]) {
                        apt.disable_suites.push(s);
                    }
                }
            }
            "primary" => apt.primary = mirrors(r, v, &at),
            "security" => apt.security = mirrors(r, v, &at),
            "sources" => apt.sources = sources(r, v, &at),
            "add_apt_repo_match" => {
                if let Some(re) = r.line(v, &at, 1024) {
                    match repo_regex(&re) {
                        Ok(_) => apt.add_apt_repo_match = re,
                        Err(e) => r.error(v, &at, format!("is not a regular expression: {e}")),
                    }
                }
            }
            "conf" => apt.conf = r.string(v, &at, MAX_TEXT),
            "debconf_selections" => {
                let Value::Map(entries) = &v.value else {
                    r.wrong_type(v, &at, "a mapping of names to debconf-set-selections lines");
                    continue;
                };
                for (name, text) in entries.iter().take(MAX_ENTRIES) {
                    if let Some(t) = r.string(text, &join(&at, &name.text), MAX_TEXT) {
                        apt.debconf_selections.insert(name.text.clone(), t);
                    }
                }
            }
            proxy => {
                if let Some(p) = proxy_value(r, v, &at) {
                    proxies.insert(proxy, p);
                }
            }
        }
    }
    apt.proxies = PROXY_KEYS
        .iter()
        .filter_map(|k| proxies.remove(k).map(|v| (k.to_string(), v)))
        .collect();
    cfg.apt = Some(apt);
}

/// `add_apt_repo_match` compiled (Python's `re.search`: anywhere unless anchored).
fn repo_regex(re: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(re)
        .unicode(false)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| e.to_string())
}

/// The mirror URL an entry gives on this root.
fn mirror_url(
    m: &Mirror,
    facts: &AptFacts,
    distro: &str,
    kind: &str,
    fqdn: Option<&str>,
) -> Option<String> {
    if let Some(u) = &m.uri {
        return Some(u.clone());
    }
    let mut urls = m.search.clone();
    if m.search_dns {
        urls.extend(crate::facts::apt::dns_candidates(distro, kind, fqdn));
    }
    urls.into_iter().find(|u| facts.resolvable.contains(u))
}

/// The distribution's mirrors (cloud-init's `package_mirrors`).
fn default_mirrors(distro: &str, arch: &str) -> Option<(String, String)> {
    match distro {
        "debian" => Some((
            "https://deb.debian.org/debian".into(),
            "https://deb.debian.org/debian-security".into(),
        )),
        "ubuntu" if matches!(arch, "amd64" | "i386") => Some((
            "http://archive.ubuntu.com/ubuntu".into(),
            "http://security.ubuntu.com/ubuntu".into(),
        )),
        "ubuntu" => Some((
            "http://ports.ubuntu.com/ubuntu-ports".into(),
            "http://ports.ubuntu.com/ubuntu-ports".into(),
        )),
        _ => None,
    }
}

/// The file of a `sources` entry's `filename`.
pub(crate) fn source_file(filename: &str) -> String {
    let mut f = if filename.starts_with('/') {
        filename.to_string()
    } else {
        format!("{SOURCES_DIR}/{filename}")
    };
    if !f.ends_with(".list") {
        f.push_str(".list");
    }
    f
}

/// The key file of a `sources` entry: its file name's stem, in the trusted or (for a
/// `$KEY_FILE` source) the hardened directory.
pub(crate) fn key_file(filename: &str, hardened: bool) -> String {
    let base = Path::new(filename)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = match base.rfind('.') {
        Some(i) if i > 0 => base[..i].to_string(),
        _ => base,
    };
    let dir = if hardened { HARDENED_DIR } else { TRUSTED_DIR };
    format!("{dir}/{stem}.gpg")
}

/// Where a key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyFrom {
    /// ASCII armour, dearmoured by `gpg --dearmor`.
    Armoured(String),
    /// A keyserver (network), by id.
    Keyserver {
        /// The key id.
        keyid: String,
        /// The keyserver.
        keyserver: String,
    },
}

/// A key to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyJob {
    /// The keyring written (mode 0644).
    pub path: String,
    /// The key's place in the document (`apt.sources.x`).
    pub what: String,
    /// Where it comes from.
    pub from: KeyFrom,
}

fn key_job(spec: &KeySpec, path: String, what: String) -> Option<KeyJob> {
    let from = match (&spec.key, &spec.keyid) {
        (Some(k), _) => KeyFrom::Armoured(k.clone()),
        (None, Some(id)) => KeyFrom::Keyserver {
            keyid: id.clone(),
            keyserver: spec
                .keyserver
                .clone()
                .unwrap_or_else(|| DEFAULT_KEYSERVER.into()),
        },
        (None, None) => return None,
    };
    Some(KeyJob { path, what, from })
}

/// What `apt` does on this root, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AptPlan {
    /// What `debconf-set-selections` reads.
    pub selections: Option<String>,
    /// Keys, installed before the files are written.
    pub keys: Vec<KeyJob>,
    /// The files (main sources, proxy, conf, sources entries), written together with the
    /// keys.
    pub actions: Vec<Action>,
    /// `add-apt-repository --no-update SOURCE` for each matching source.
    pub repositories: Vec<String>,
    /// Whether `apt-get update` runs at the end (when there are `sources`).
    pub update: bool,
    /// What was left out, and why (cloud-init's warnings).
    pub notes: Vec<String>,
}

/// apt-get's options, as the package module and cloud-init give them.
pub(crate) const APT_UPDATE: &[&str] = &[
    "--option=Dpkg::Options::=--force-confold",
    "--option=Dpkg::options::=--force-unsafe-io",
    "--assume-yes",
    "--quiet",
    "update",
];

/// cloud-init's `disable_suites` names, expanded with the release.
fn disabled_suites(apt: &Apt, release: &str) -> Vec<String> {
    apt.disable_suites
        .iter()
        .filter_map(|s| {
            let s = match s.as_str() {
                "updates" | "backports" | "security" | "proposed" => format!("$RELEASE-{s}"),
                "release" => "$RELEASE".into(),
                other => other.to_string(),
            };
            substitute(&s, &|n| (n == "RELEASE").then(|| release.to_string())).ok()
        })
        .collect()
}

/// Comments the disabled suites out of a one-line sources file.
pub(crate) fn disable_one_line(text: &str, suites: &[String]) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut col = 1;
        if words.get(1).is_some_and(|w| w.starts_with('[')) {
            col = words.iter().position(|w| w.ends_with(']')).unwrap_or(1) + 1;
        }
        let suite = words.get(col + 1);
        let active = words.first().is_some_and(|w| !w.starts_with('#'));
        if active && suite.is_some_and(|s| suites.iter().any(|d| d == s)) {
            out.push_str("# suite disabled by cloud-init: ");
        }
        out.push_str(line);
    }
    out
}

/// Takes the disabled suites out of a deb822 sources file: from `Suites:`, or the whole
/// stanza commented out when none is left.
pub(crate) fn disable_deb822(text: &str, suites: &[String]) -> String {
    let mut out = String::new();
    let mut stanza: Vec<&str> = Vec::new();
    let flush = |stanza: &mut Vec<&str>, out: &mut String| {
        let suites_line = stanza.iter().position(|l| {
            l.trim_start().to_ascii_lowercase().starts_with("suites:")
                && !l.trim_start().starts_with('#')
        });
        if let Some(i) = suites_line {
            let line = stanza[i].trim_end_matches('\n');
            let value = &line[line.find(':').unwrap_or(0) + 1..];
            let have: Vec<&str> = value.split_whitespace().collect();
            let keep: Vec<&str> = have
                .iter()
                .copied()
                .filter(|s| !suites.iter().any(|d| d == s))
                .collect();
            if keep.is_empty() {
                out.push_str("## Entry disabled by cloud-init, due to disable_suites\n");
                for l in stanza.iter() {
                    out.push_str("# disabled by cloud-init: ");
                    out.push_str(l);
                }
                stanza.clear();
                return;
            }
            if keep.len() != have.len() {
                for (j, l) in stanza.iter().enumerate() {
                    if j == i {
                        out.push_str(&format!(
                            "# cloud-init disable_suites redacted: {line}\nSuites: {}\n",
                            keep.join(" ")
                        ));
                    } else {
                        out.push_str(l);
                    }
                }
                stanza.clear();
                return;
            }
        }
        stanza.iter().for_each(|l| out.push_str(l));
        stanza.clear();
    };
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() {
            flush(&mut stanza, &mut out);
            out.push_str(line);
        } else {
            stanza.push(line);
        }
    }
    flush(&mut stanza, &mut out);
    out
}

/// Whether a sources text is deb822 (cloud-init's sniffing: a `deb `/`deb-src ` line
/// makes it one-line first).
fn is_deb822(text: &str) -> bool {
    let starts = |p: &[&str]| {
        text.lines()
            .any(|l| p.iter().any(|p| l.trim_start().starts_with(p)))
    };
    !starts(&["deb ", "deb-src "]) && starts(&["Types: ", "Suites: ", "Components: ", "URIs: "])
}

/// The built-in main sources file of `distro` (cloud-init's deb822 templates' shape).
fn builtin_sources(distro: &str, p: &BTreeMap<&str, String>) -> Option<String> {
    let release = &p["RELEASE"];
    let (types, components, security_suite) = match distro {
        "debian" => (
            "deb deb-src",
            "main",
            if matches!(release.as_str(), "buster" | "stretch") {
                format!("{release}/updates")
            } else {
                format!("{release}-security")
            },
        ),
        "ubuntu" => (
            "deb",
            "main universe restricted multiverse",
            format!("{release}-security"),
        ),
        _ => return None,
    };
    Some(format!(
        "# Written by vmcust from the cloud-config's apt key (preserve_sources_list: false).\n\
         Types: {types}\nURIs: {}\nSuites: {release} {release}-updates {release}-backports\n\
         Components: {components}\nSigned-By: {}\n\n\
         Types: {types}\nURIs: {}\nSuites: {security_suite}\nComponents: {components}\nSigned-By: {}\n",
        p["PRIMARY"], p["primary_key"], p["SECURITY"], p["security_key"]
    ))
}

/// Whether `text` holds a URL with a user (and so probably a password) in it:
/// `scheme://user:password@host`.
pub(crate) fn has_credentials(text: &str) -> bool {
    text.match_indices("://").any(|(at, _)| {
        let rest = &text[at + 3..];
        let end = rest
            .find(|c: char| c == '/' || c == ']' || c == '"' || c.is_whitespace())
            .unwrap_or(rest.len());
        rest[..end].contains('@')
    })
}

/// A file of apt's: 0644 as cloud-init writes it, unless it holds a URL with
/// credentials: then 0600, and its contents are never shown.
fn write(path: &str, text: String, purpose: &'static str) -> Action {
    let secret = has_credentials(&text);
    Action::write_file(
        path,
        if secret {
            Contents::sensitive(text.into_bytes())
        } else {
            Contents::text(text)
        },
        if secret { 0o600 } else { 0o644 },
        purpose,
    )
}

fn remove(path: &str, purpose: &'static str) -> Action {
    Action::Rename {
        from: path.into(),
        to: format!("{path}{REMOVED_SUFFIX}").into(),
        purpose,
    }
}

fn exists(facts: &AptFacts, path: &str) -> bool {
    !matches!(facts.files.get(path), None | Some(Current::Missing))
}

/// Plans `cfg.apt`; `Ok(None)` without it; `Err` when it cannot be done on this root.
pub(crate) fn plan_apt(cfg: &CloudConfig, cc: &Facts, facts: &AptFacts) -> Result<AptPlan, String> {
    let Some(apt) = &cfg.apt else {
        return Err("apt is not in the cloud-config".into());
    };
    let mut p = AptPlan {
        selections: None,
        keys: Vec::new(),
        actions: Vec::new(),
        repositories: Vec::new(),
        update: !apt.sources.is_empty(),
        notes: Vec::new(),
    };
    if !apt.debconf_selections.is_empty() {
        let mut text = apt
            .debconf_selections
            .values()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        if !text.ends_with('\n') {
            text.push('\n');
        }
        p.selections = Some(text);
    }
    let distro = cc.os_id.as_str();
    let release = facts.codename.clone();
    let fqdn = cfg.fqdn.as_ref().map(|f| f.to_string());
    let found = |list: &[Mirror], kind: &str| {
        pick(list, &facts.arch, |m: &Mirror| &m.arches)
            .and_then(|m| mirror_url(m, facts, distro, kind, fqdn.as_deref()))
    };
    let (mut primary, mut security) = (
        found(&apt.primary, "mirror"),
        found(&apt.security, "security-mirror"),
    );
    if security.is_none() {
        security = primary.clone();
    }
    if primary.is_none() {
        if let Some((pm, sm)) = default_mirrors(distro, &facts.arch) {
            primary = Some(pm);
            security = security.or(Some(sm));
        }
    }
    let (primary, security) = (primary.unwrap_or_default(), security.unwrap_or_default());
    if apt.preserve_sources_list == Some(false) {
        let mut keyring = |list: &[Mirror], name: &str| {
            let path = format!("{TRUSTED_DIR}/{name}.gpg");
            match list.iter().rev().find(|m| m.key.any()) {
                Some(m) => {
                    p.keys
                        .extend(key_job(&m.key, path.clone(), format!("apt.{name}")));
                    path
                }
                None => format!("/usr/share/keyrings/{distro}-archive-keyring.gpg"),
            }
        };
        let primary_key = keyring(&apt.primary, "primary");
        let security_key = keyring(&apt.security, "security");
        let params: BTreeMap<&str, String> = [
            ("MIRROR", primary.clone()),
            ("mirror", primary.clone()),
            ("PRIMARY", primary.clone()),
            ("primary", primary.clone()),
            ("SECURITY", security.clone()),
            ("security", security.clone()),
            ("RELEASE", release.clone()),
            ("codename", release.clone()),
            ("primary_key", primary_key),
            ("security_key", security_key),
        ]
        .into_iter()
        .collect();
        let rendered = match &apt.sources_list {
            Some(t) => Some(render(t, &params).map_err(|e| format!("apt.sources_list: {e}"))?),
            None => builtin_sources(distro, &params),
        };
        match rendered {
            None => p.notes.push(format!(
                "no sources template for {}; the main sources file is not rendered (cloud-init: \"No template found\")",
                quote(distro)
            )),
            Some(text) => {
                let suites = disabled_suites(apt, &release);
                let deb822 = apt.sources_list.as_ref().is_none_or(|t| is_deb822(t));
                if deb822 {
                    let text = disable_deb822(&text, &suites);
                    let path = format!("{SOURCES_DIR}/{distro}.sources");
                    p.actions.push(write(&path, text, "cloud-config apt sources"));
                    if exists(facts, SOURCES_LIST) {
                        p.actions.push(if distro == "ubuntu" {
                            write(
                                SOURCES_LIST,
                                format!("# Ubuntu sources have moved to {path}\n"),
                                "cloud-config apt sources",
                            )
                        } else {
                            remove(SOURCES_LIST, "cloud-config apt: deb822 sources replace it")
                        });
                    }
                } else {
                    let text = disable_one_line(&text, &suites);
                    p.actions.push(write(SOURCES_LIST, text, "cloud-config apt sources"));
                }
            }
        }
    }
    if apt.proxies.is_empty() {
        if exists(facts, PROXY_FILE) {
            p.actions
                .push(remove(PROXY_FILE, "cloud-config apt: no proxy"));
        }
    } else {
        let lines: Vec<String> = apt
            .proxies
            .iter()
            .map(|(k, v)| {
                let scheme = match k.as_str() {
                    "ftp_proxy" => "ftp",
                    "https_proxy" => "https",
                    _ => "http",
                };
                format!("Acquire::{scheme}::Proxy \"{v}\";")
            })
            .collect();
        p.actions.push(write(
            PROXY_FILE,
            lines.join("\n") + "\n",
            "cloud-config apt proxy",
        ));
    }
    match &apt.conf {
        Some(c) => p
            .actions
            .push(write(CONF_FILE, c.clone(), "cloud-config apt conf")),
        None if exists(facts, CONF_FILE) => p
            .actions
            .push(remove(CONF_FILE, "cloud-config apt: no conf")),
        None => {}
    }
    let matcher = (!apt.add_apt_repo_match.is_empty())
        .then(|| repo_regex(&apt.add_apt_repo_match))
        .transpose()?;
    let mut key_file_now: Option<String> = None;
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for s in &apt.sources {
        let at = format!("apt.sources.{}", s.name);
        if s.key.any() {
            let hardened = s.source.as_deref().is_some_and(|t| t.contains("$KEY_FILE"));
            let path = key_file(&s.filename, hardened);
            p.keys.extend(key_job(&s.key, path.clone(), at.clone()));
            key_file_now = Some(path);
        }
        let Some(source) = &s.source else {
            continue;
        };
        let params: BTreeMap<&str, String> = [
            ("MIRROR", Some(primary.clone())),
            ("PRIMARY", Some(primary.clone())),
            ("SECURITY", Some(security.clone())),
            ("RELEASE", Some(release.clone())),
            ("KEY_FILE", key_file_now.clone()),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect();
        let line = render(source, &params).map_err(|e| format!("{at}.source: {e}"))?;
        if matcher.as_ref().is_some_and(|m| m.is_match(&line)) {
            p.repositories.push(line);
            continue;
        }
        let path = source_file(&s.filename);
        let now = files.entry(path.clone()).or_insert_with(|| {
            order.push(path.clone());
            match facts.files.get(&path) {
                Some(Current::File(b)) => b.clone(),
                _ => Vec::new(),
            }
        });
        if matches!(facts.files.get(&path), Some(Current::NotAFile)) {
            return Err(format!(
                "{at}: {path} exists and is not a regular file; remove it or write another filename"
            ));
        }
        if !s.append {
            now.clear();
        }
        now.extend_from_slice(line.as_bytes());
        now.push(b'\n');
    }
    for path in order {
        let bytes = files.remove(&path).unwrap_or_default();
        p.actions.push(write(
            &path,
            String::from_utf8_lossy(&bytes).into_owned(),
            "cloud-config apt sources",
        ));
    }
    Ok(p)
}

/// The programs it may run.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.apt.is_some() {
        &[
            "apt-get",
            "gpg",
            "gpgconf",
            "debconf-set-selections",
            "add-apt-repository",
        ]
    } else {
        &[]
    }
}

/// Why it does nothing on this root, if so.
fn not_here(cfg: &CloudConfig, cc: &Facts) -> Option<String> {
    if cfg.apt.is_none() {
        return Some("apt is not in the cloud-config".into());
    }
    if !cc.has("apt-get") {
        return Some(
            "the root has no apt-get (not an apt-family system); cloud-init skips apt_configure there too"
                .into(),
        );
    }
    None
}

/// The program the plan needs and the root lacks, as the module's reason.
fn missing_tool(p: &AptPlan, cc: &Facts) -> Option<String> {
    let needs = [
        (
            p.selections.is_some(),
            "debconf-set-selections",
            "debconf-set-selections (debconf)",
            "debconf_selections",
        ),
        (!p.keys.is_empty(), "gpg", "gpg (gnupg)", "a key"),
        (
            !p.repositories.is_empty(),
            "add-apt-repository",
            "add-apt-repository (software-properties-common)",
            "a ppa-like source",
        ),
    ];
    needs.iter().find(|(needed, program, _, _)| *needed && !cc.has(program)).map(|(_, _, name, why)| {
        format!("apt_configure: {why} needs {name}, which is not in the root; install it in the template")
    })
}

/// How a captured program ended.
enum Captured {
    Out(Vec<u8>),
    Failed(String),
    Interrupted,
}

/// Runs a program of the root with `stdin`, keeping its output (sealed inside the root
/// when it is not `/`).
fn capture(
    ctx: &StageContext,
    program: &str,
    args: Vec<String>,
    stdin: Vec<u8>,
    timeout: Duration,
) -> Captured {
    let what = format!("{program} {}", args.join(" "));
    tracing::info!(module = "apt_configure", command = %what, "running");
    let cmd = Cmd {
        program: program.into(),
        args,
        cwd: None,
        env: Vec::new(),
        timeout,
        grace: Duration::from_secs(5),
        stdin,
    };
    let done = if ctx.live() {
        process::run(&cmd, Output::Bytes(MAX_KEYRING + 1), ctx.stop)
    } else {
        match process::Sandbox::new(ctx.root.path()) {
            Ok(b) => process::run_sandboxed(&cmd, &b, Output::Bytes(MAX_KEYRING + 1), ctx.stop),
            Err(e) => return Captured::Failed(format!("{what}: {e}")),
        }
    };
    match done {
        Err(e) => Captured::Failed(format!("{what} could not be started: {e}")),
        Ok(f) if f.ended == Ended::Stopped => Captured::Interrupted,
        Ok(f) if f.success() && f.stdout.len() <= MAX_KEYRING => Captured::Out(f.stdout),
        Ok(f) if f.success() => {
            Captured::Failed(format!("{what}: its output is over {MAX_KEYRING} bytes"))
        }
        Ok(f) => {
            let said = String::from_utf8_lossy(&f.stderr);
            let said: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
            Captured::Failed(format!("{what}: {}: {}", f.ended, said.join(" | ")))
        }
    }
}

/// A throw-away `GNUPGHOME` inside the root (its `/tmp`), and its path there.
fn gnupg_home(root: &Root) -> std::io::Result<(tempfile::TempDir, String)> {
    if !root.is_dir_here(Path::new("/tmp"))? {
        return Err(std::io::Error::other(
            "the root's /tmp is not a directory (gpg needs a scratch home there)",
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix("vmcust-apt-gpg.")
        .tempdir_in(root.path().join("tmp"))?;
    let inside = format!(
        "/tmp/{}",
        dir.path().file_name().unwrap_or_default().to_string_lossy()
    );
    Ok((dir, inside))
}

/// Installs one key: the keyring bytes.
fn key_bytes(s: &Step, gpg: &str, job: &KeyJob) -> Result<Vec<u8>, Captured> {
    let ctx = s.ctx;
    let home = gnupg_home(&ctx.root)
        .map_err(|e| Captured::Failed(format!("{}: a scratch GNUPGHOME: {e}", job.what)))?;
    let homedir = |rest: &[&str]| -> Vec<String> {
        ["--homedir", home.1.as_str(), "--batch", "--no-tty"]
            .iter()
            .chain(rest)
            .map(|a| a.to_string())
            .collect()
    };
    let out = match &job.from {
        KeyFrom::Armoured(text) => capture(
            ctx,
            gpg,
            homedir(&["--dearmor"]),
            text.clone().into_bytes(),
            ctx.tool_timeout,
        ),
        KeyFrom::Keyserver { keyid, keyserver } => {
            let mut last = Captured::Failed(String::new());
            for attempt in 0..KEY_TRIES {
                if attempt > 0 {
                    std::thread::sleep(Duration::from_secs(1));
                }
                let server = format!("--keyserver={keyserver}");
                last = capture(
                    ctx,
                    gpg,
                    homedir(&[&server, "--recv-keys", keyid]),
                    Vec::new(),
                    ctx.tool_timeout,
                );
                if !matches!(last, Captured::Failed(_)) {
                    break;
                }
            }
            match last {
                Captured::Out(_) => capture(
                    ctx,
                    gpg,
                    homedir(&["--export", keyid]),
                    Vec::new(),
                    ctx.tool_timeout,
                ),
                Captured::Failed(why) => Captured::Failed(format!(
                    "{}: failed to import key {keyid} from {keyserver} after {KEY_TRIES} tries ({why}); \
                     cloud-init fails the module the same way — check the network, or paste the key as key:",
                    job.what
                )),
                Captured::Interrupted => Captured::Interrupted,
            }
        }
    };
    if ctx.live() {
        if let Some(gpgconf) = s.cc.programs.get("gpgconf") {
            // gpg's agents outlive the command; cloud-init stops them the same way.
            let _ = capture(
                ctx,
                gpgconf,
                vec![
                    "--homedir".into(),
                    home.1.clone(),
                    "--kill".into(),
                    "all".into(),
                ],
                Vec::new(),
                ctx.tool_timeout,
            );
        }
    }
    match out {
        Captured::Out(b) if b.is_empty() => {
            Err(Captured::Failed(format!("{}: gpg gave no key", job.what)))
        }
        Captured::Out(b) => Ok(b),
        Captured::Failed(why) => Err(Captured::Failed(format!("{}: {why}", job.what))),
        other => Err(other),
    }
}

fn outcome_of(c: Captured) -> ModuleOutcome {
    match c {
        Captured::Failed(why) => failed(format!("apt_configure: {why}")),
        Captured::Interrupted | Captured::Out(_) => ModuleOutcome::Interrupted,
    }
}

/// Sets apt up: debconf answers, keys and files, repositories, then `apt-get update`.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    if let Some(why) = not_here(s.cfg, s.cc) {
        return skipped(why);
    }
    let p = match plan_apt(s.cfg, s.cc, &s.cc.apt) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let tool = |name: &str| s.cc.programs.get(name).cloned();
    if let Some(why) = missing_tool(&p, s.cc) {
        return failed(why);
    }
    if let Err(o) = s.start() {
        return o;
    }
    let mut note = Vec::new();
    if let (Some(text), Some(prog)) = (&p.selections, tool("debconf-set-selections")) {
        match capture(
            s.ctx,
            &prog,
            Vec::new(),
            text.clone().into_bytes(),
            s.ctx.tool_timeout,
        ) {
            Captured::Out(_) => note.push("debconf selections set".to_string()),
            other => return outcome_of(other),
        }
    }
    let mut actions = Vec::new();
    if let Some(gpg) = tool("gpg") {
        for job in &p.keys {
            match key_bytes(s, &gpg, job) {
                Ok(bytes) => actions.push(Action::write_file(
                    job.path.clone(),
                    keyring(bytes),
                    0o644,
                    "cloud-config apt key",
                )),
                Err(c) => return outcome_of(c),
            }
        }
    }
    actions.extend(p.actions.iter().cloned());
    match s.apply(actions) {
        Ok(n) => note.push(n),
        Err(e) => return failed(e),
    }
    for source in &p.repositories {
        let path = tool("add-apt-repository").unwrap_or_default();
        let prog = Program {
            module: "apt_configure",
            program: &path,
            args: vec!["--no-update".into(), source.clone()],
            env: Vec::new(),
            timeout: s.ctx.package_timeout,
            hide_args: false,
        };
        match exec::run(&s.ctx.root, &prog, s.ctx.stop) {
            RunEnd::Succeeded => note.push(format!("added {source}")),
            RunEnd::Failed(why) => return failed(why),
            RunEnd::Interrupted => return ModuleOutcome::Interrupted,
        }
    }
    if p.update {
        let apt_get = tool("apt-get").unwrap_or_default();
        let prog = Program {
            module: "apt_configure",
            program: &apt_get,
            args: APT_UPDATE.iter().map(|a| a.to_string()).collect(),
            env: vec![("DEBIAN_FRONTEND".into(), "noninteractive".into())],
            timeout: s.ctx.package_timeout,
            hide_args: false,
        };
        match exec::run(&s.ctx.root, &prog, s.ctx.stop) {
            RunEnd::Succeeded => note.push("apt-get update".into()),
            // As cloud-init: the update's failure is logged, not the module's.
            RunEnd::Failed(why) => {
                tracing::warn!(module = "apt_configure", "apt-get update failed: {why}");
                note.push(format!(
                    "apt-get update failed (not fatal, as in cloud-init): {why}"
                ));
            }
            RunEnd::Interrupted => return ModuleOutcome::Interrupted,
        }
    }
    note.extend(p.notes);
    ModuleOutcome::Ran {
        note: note.join("; "),
    }
}

/// A binary keyring as file contents (never printed: it is not text).
fn keyring(bytes: Vec<u8>) -> Contents {
    Contents::sensitive(bytes)
}

/// The commands, keys and files.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    if let Some(why) = not_here(l.cfg, l.facts) {
        return vec![format!("nothing: {why}")];
    }
    let p = match plan_apt(l.cfg, l.facts, &l.facts.apt) {
        Ok(p) => p,
        Err(e) => return vec![format!("fails: {e}")],
    };
    if let Some(why) = missing_tool(&p, l.facts) {
        return vec![format!("fails: {why}")];
    }
    let mut out = Vec::new();
    if let Some(t) = &p.selections {
        out.push(format!(
            "run: debconf-set-selections ({} selection(s) on its standard input, not shown)",
            t.lines()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                .count()
        ));
    }
    for k in &p.keys {
        match &k.from {
            KeyFrom::Armoured(_) => out.push(format!("run: gpg --dearmor ({}.key)", k.what)),
            KeyFrom::Keyserver { keyid, keyserver } => out.push(format!(
                "run: gpg --keyserver={keyserver} --recv-keys {keyid} in a scratch GNUPGHOME, then gpg --export ({}.keyid; network)",
                k.what
            )),
        }
        out.push(format!(
            "write {} (0644, the binary keyring gpg gives)",
            k.path
        ));
    }
    out.extend(p.actions.iter().flat_map(action_lines));
    out.extend(
        p.repositories
            .iter()
            .map(|s| format!("run: add-apt-repository --no-update {s} (network)")),
    );
    if p.update {
        out.push(format!(
            "run: apt-get {} (network; its failure is logged, not fatal)",
            APT_UPDATE.join(" ")
        ));
    }
    out.extend(p.notes.iter().map(|n| format!("note: {n}")));
    out
}

/// What it needs of the root's facts (only with an `apt` key): the apt files it
/// appends to, replaces or removes, and, when it rewrites the sources list, the mirror
/// searches of `primary` and `security`.
pub(crate) fn wants(cfg: &CloudConfig, w: &mut Wanted) {
    let Some(apt) = &cfg.apt else {
        return;
    };
    let mut files: BTreeSet<String> = [PROXY_FILE, CONF_FILE, SOURCES_LIST]
        .into_iter()
        .map(String::from)
        .collect();
    files.extend(apt.sources.iter().map(|s| source_file(&s.filename)));
    let choices = |list: &[Mirror]| -> Vec<MirrorChoice> {
        list.iter()
            .map(|m| MirrorChoice {
                arches: m.arches.clone(),
                has_uri: m.uri.is_some(),
                search: m.search.clone(),
                search_dns: m.search_dns,
            })
            .collect()
    };
    let searches = if apt.preserve_sources_list == Some(false) {
        vec![
            ("mirror".to_string(), choices(&apt.primary)),
            ("security-mirror".to_string(), choices(&apt.security)),
        ]
    } else {
        Vec::new()
    };
    w.apt = Some(AptWanted {
        files,
        deb822_dir: SOURCES_DIR.to_string(),
        searches,
        fqdn: cfg.fqdn.as_ref().map(|f| f.to_string()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cloud_config::document;
    use crate::cloud_config::read::Severity;

    const KEY: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEaxNOlhYJKwYBBAHaRw8BAQdA\n-----END PGP PUBLIC KEY BLOCK-----\n";

    fn doc_with_key(body: &str) -> String {
        let key: String = KEY.lines().map(|l| format!("        {l}\n")).collect();
        body.replace("KEY\n", &format!("|\n{key}"))
    }

    #[test]
    fn parses_every_key() {
        let doc = doc_with_key(
            "apt:\n  preserve_sources_list: false\n  disable_suites: [backports, $RELEASE-proposed]\n  primary:\n    - arches: [amd64, i386]\n      uri: http://mirror.example/debian\n    - arches: [default]\n      search: [http://a.example/debian, 'bad url']\n      search_dns: true\n  security: [{arches: [default], uri: http://sec.example/debian}]\n  sources:\n    local:\n      source: deb [signed-by=$KEY_FILE] http://repo.example/ $RELEASE main\n      key: KEY\n    byid: {keyid: 0123ABCD, keyserver: 'hkps://keys.example', filename: other.list, append: false}\n    ppa: {source: 'ppa:me/tools'}\n  add_apt_repo_match: '^ppa:'\n  proxy: http://proxy.example:3128\n  https_proxy: http://sproxy.example:3128\n  conf: |\n    APT::Get::Assume-Yes \"true\";\n  debconf_selections:\n    b: 'pkg pkg/q boolean true'\n    a: 'tzdata tzdata/Areas select Europe'\n",
        );
        let (cfg, p) = document::from_text(&doc);
        assert!(p.is_empty(), "{p:?}");
        let apt = cfg.apt.unwrap();
        assert_eq!(apt.preserve_sources_list, Some(false));
        assert_eq!(apt.disable_suites, ["backports", "$RELEASE-proposed"]);
        assert_eq!(apt.primary.len(), 2);
        assert_eq!(apt.primary[1].search, ["http://a.example/debian"]);
        assert!(apt.primary[1].search_dns);
        let names: Vec<_> = apt.sources.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["local", "byid", "ppa"]);
        assert_eq!(apt.sources[1].key.keyid.as_deref(), Some("0123ABCD"));
        assert_eq!(apt.sources[1].filename, "other.list");
        assert!(!apt.sources[1].append && apt.sources[0].append);
        assert_eq!(
            apt.proxies,
            [
                ("proxy".to_string(), "http://proxy.example:3128".to_string()),
                (
                    "https_proxy".to_string(),
                    "http://sproxy.example:3128".to_string()
                )
            ]
        );
        assert_eq!(
            apt.debconf_selections.keys().collect::<Vec<_>>(),
            ["a", "b"]
        );
    }

    #[test]
    fn refuses_at_the_line_and_key() {
        let table: &[(&str, &str)] = &[
            ("apt: [a]", "apt: is a list; write a mapping"),
            (
                "apt: {preserve_sources_list: 1}",
                "apt.preserve_sources_list: is an integer",
            ),
            (
                "apt: {sources: {x: {source: 'deb $ARCH main'}}}",
                "apt.sources.x.source: $ARCH is not a variable",
            ),
            (
                "apt: {sources: {x: {source: 'deb ${RELEASE.x} main'}}}",
                "a name with a dot",
            ),
            (
                "apt: {sources: {x: {source: 'deb $mirror main'}}}",
                "$mirror is not a variable",
            ),
            (
                "apt: {sources_list: 'deb $ARCH main'}",
                "apt.sources_list: $ARCH",
            ),
            (
                "apt: {sources: {x: {filename: ../../etc/passwd}}}",
                "apt.sources.x.filename",
            ),
            (
                "apt: {sources: {x: {key: 'hello'}}}",
                "apt.sources.x.key: is not an ASCII-armoured",
            ),
            (
                "apt: {sources: {x: {keyid: '--import'}}}",
                "apt.sources.x.keyid",
            ),
            ("apt: {sources: [a]}", "apt.sources: is a list"),
            (
                "apt: {proxy: 'http://a\"; Evil \"x'}",
                "apt.proxy: holds a double quote",
            ),
            (
                "apt: {primary: [{uri: 'http://m/'}]}",
                "apt.primary[0]: has no arches",
            ),
            (
                "apt: {primary: [{arches: [default], uri: 'a b'}]}",
                "apt.primary[0].uri",
            ),
            (
                "apt: {add_apt_repo_match: '('}",
                "apt.add_apt_repo_match: is not a regular expression",
            ),
            ("apt: {disable_suites: [a, a]}", "listed twice"),
            (
                "apt: {debconf_selections: [a]}",
                "apt.debconf_selections: is a list",
            ),
        ];
        super::super::test_support::assert_refused(table);
        let (cfg, p) = document::from_text("apt:\n  sources: {}\n  preserve: true\n");
        assert_eq!(
            (p[0].severity, p[0].path.as_str(), p[0].line),
            (Severity::Unknown, "apt.preserve", 3)
        );
        assert!(cfg.apt.is_some());
    }

    #[test]
    fn substitution_as_cloud_init_renders() {
        let params = |n: &str| match n {
            "RELEASE" => Some("bookworm".to_string()),
            "MIRROR" => Some("http://m/debian".to_string()),
            _ => None,
        };
        let table: &[(&str, Result<&str, &str>)] = &[
            (
                "deb $MIRROR $RELEASE main",
                Ok("deb http://m/debian bookworm main"),
            ),
            (
                "deb ${MIRROR} ${RELEASE}-updates main",
                Ok("deb http://m/debian bookworm-updates main"),
            ),
            ("cost $ 5 and $", Ok("cost $ 5 and $")),
            ("$$RELEASE", Ok("$bookworm")),
            ("${RELEASE", Ok("${RELEASE")),
            ("$RELEASE_x", Err("$RELEASE_x is not")),
            ("$RELEASE.x", Err("with a dot")),
            ("$ARCH", Err("$ARCH is not")),
        ];
        for (text, want) in table {
            match (substitute(text, &params), want) {
                (Ok(got), Ok(w)) => assert_eq!(got, *w, "{text}"),
                (Err(got), Err(w)) => assert!(got.contains(w), "{text}: {got}"),
                (got, _) => panic!("{text}: {got:?}"),
            }
        }
        let p: BTreeMap<&str, String> = [("RELEASE", "trixie".to_string())].into_iter().collect();
        assert_eq!(
            render("## template: jinja\ndeb http://m {{ RELEASE }} main\n", &p).unwrap(),
            "deb http://m trixie main\n"
        );
    }

    #[test]
    fn disable_suites_in_both_formats() {
        let one = "deb http://m/debian bookworm main\n# deb http://m/debian bookworm-updates main\ndeb [arch=amd64 signed-by=/x] http://m/debian bookworm-updates main\ndeb-src http://m/debian bookworm-updates main\n";
        assert_eq!(
            disable_one_line(one, &["bookworm-updates".into()]),
            "deb http://m/debian bookworm main\n# deb http://m/debian bookworm-updates main\n# suite disabled by cloud-init: deb [arch=amd64 signed-by=/x] http://m/debian bookworm-updates main\n# suite disabled by cloud-init: deb-src http://m/debian bookworm-updates main\n"
        );
        let deb822 = "Types: deb\nURIs: http://m\nSuites: bookworm bookworm-updates bookworm-backports\nComponents: main\n\nTypes: deb\nURIs: http://s\nSuites: bookworm-security\nComponents: main\n";
        let suites: Vec<String> = ["bookworm-backports", "bookworm-security"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            disable_deb822(deb822, &suites),
            "Types: deb\nURIs: http://m\n# cloud-init disable_suites redacted: Suites: bookworm bookworm-updates bookworm-backports\nSuites: bookworm bookworm-updates\nComponents: main\n\n## Entry disabled by cloud-init, due to disable_suites\n# disabled by cloud-init: Types: deb\n# disabled by cloud-init: URIs: http://s\n# disabled by cloud-init: Suites: bookworm-security\n# disabled by cloud-init: Components: main\n"
        );
        let (cfg, _) =
            document::from_text("apt: {disable_suites: [updates, release, $RELEASE-x, other]}");
        assert_eq!(
            disabled_suites(cfg.apt.as_ref().unwrap(), "trixie"),
            ["trixie-updates", "trixie", "trixie-x", "other"]
        );
    }

    fn facts(os: &str) -> (Facts, AptFacts) {
        let mut cc = Facts {
            os_id: os.into(),
            ..Default::default()
        };
        cc.programs
            .insert("apt-get".into(), "/usr/bin/apt-get".into());
        let apt = AptFacts {
            codename: "bookworm".into(),
            arch: "amd64".into(),
            ..Default::default()
        };
        (cc, apt)
    }

    /// Each action on one line: `write PATH\n<contents>` or `move FROM TO`.
    fn show(p: &AptPlan) -> Vec<String> {
        p.actions
            .iter()
            .map(|a| match a {
                Action::WriteFile {
                    path,
                    contents,
                    mode,
                    ..
                } => {
                    format!("write {} {mode:o}\n{}", path.display(), contents.display())
                }
                Action::Rename { from, to, .. } => {
                    format!("move {} {}", from.display(), to.display())
                }
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn sources_keys_proxy_and_conf() {
        let doc = doc_with_key(
            "apt:\n  sources:\n    hard:\n      source: deb [signed-by=$KEY_FILE] http://repo.example/ $RELEASE main\n      key: KEY\n    soft:\n      source: deb $MIRROR $RELEASE contrib\n      key: KEY\n      filename: extra.list\n    again:\n      source: deb [signed-by=$KEY_FILE] http://two.example/ ./\n      filename: extra\n    fetched: {keyid: 0123ABCD}\n    ppa: {source: 'ppa:me/tools'}\n    fresh: {source: deb http://f.example/ ./, append: false}\n  proxy: http://p:3128\n  ftp_proxy: ftp://f:21\n  http_proxy: http://h:3128\n  conf: 'APT::Get::Assume-Yes \"true\";'\n",
        );
        let (cfg, p) = document::from_text(&doc);
        assert!(p.is_empty(), "{p:?}");
        let (cc, mut apt) = facts("debian");
        apt.files.insert(
            "/etc/apt/sources.list.d/extra.list".into(),
            Current::File(b"deb http://old.example/ ./\n".to_vec()),
        );
        apt.files.insert(
            "/etc/apt/sources.list.d/fresh.list".into(),
            Current::File(b"deb http://old.example/ ./\n".to_vec()),
        );
        let plan = plan_apt(&cfg, &cc, &apt).unwrap();
        let keys: Vec<(&str, &str)> = plan
            .keys
            .iter()
            .map(|k| (k.path.as_str(), k.what.as_str()))
            .collect();
        assert_eq!(
            keys,
            [
                ("/etc/apt/cloud-init.gpg.d/hard.gpg", "apt.sources.hard"),
                ("/etc/apt/trusted.gpg.d/extra.gpg", "apt.sources.soft"),
                ("/etc/apt/trusted.gpg.d/fetched.gpg", "apt.sources.fetched"),
            ]
        );
        assert_eq!(
            plan.keys[2].from,
            KeyFrom::Keyserver {
                keyid: "0123ABCD".into(),
                keyserver: DEFAULT_KEYSERVER.into()
            }
        );
        assert_eq!(
            show(&plan),
            [
                "write /etc/apt/apt.conf.d/90cloud-init-aptproxy 644\nAcquire::http::Proxy \"http://p:3128\";\nAcquire::http::Proxy \"http://h:3128\";\nAcquire::ftp::Proxy \"ftp://f:21\";\n",
                "write /etc/apt/apt.conf.d/94cloud-init-config 644\nAPT::Get::Assume-Yes \"true\";",
                "write /etc/apt/sources.list.d/hard.list 644\ndeb [signed-by=/etc/apt/cloud-init.gpg.d/hard.gpg] http://repo.example/ bookworm main\n",
                // soft's key went to trusted.gpg.d, yet $KEY_FILE keeps its path for `again`, as in cloud-init.
                "write /etc/apt/sources.list.d/extra.list 644\ndeb http://old.example/ ./\ndeb https://deb.debian.org/debian bookworm contrib\ndeb [signed-by=/etc/apt/trusted.gpg.d/extra.gpg] http://two.example/ ./\n",
                "write /etc/apt/sources.list.d/fresh.list 644\ndeb http://f.example/ ./\n",
            ]
        );
        assert_eq!(plan.repositories, ["ppa:me/tools"]);
        assert!(plan.update);
        let why = missing_tool(&plan, &cc).unwrap();
        assert!(why.contains("a key needs gpg (gnupg)"), "{why}");

        // No proxy and no conf: cloud-init's files are taken away.
        let (cfg, _) = document::from_text("apt: {sources: {}}");
        apt.files
            .insert(PROXY_FILE.into(), Current::File(b"x".to_vec()));
        apt.files
            .insert(CONF_FILE.into(), Current::File(b"x".to_vec()));
        let plan = plan_apt(&cfg, &cc, &apt).unwrap();
        assert_eq!(
            show(&plan),
            [
                "move /etc/apt/apt.conf.d/90cloud-init-aptproxy /etc/apt/apt.conf.d/90cloud-init-aptproxy.disabled",
                "move /etc/apt/apt.conf.d/94cloud-init-config /etc/apt/apt.conf.d/94cloud-init-config.disabled",
            ]
        );
        assert!(!plan.update && plan.keys.is_empty());

        let (cfg, _) = document::from_text(
            "apt: {sources: {x: {source: 'deb [signed-by=$KEY_FILE] http://x/ ./'}}}",
        );
        assert!(plan_apt(&cfg, &cc, &apt)
            .unwrap_err()
            .contains("apt.sources.x.source: $KEY_FILE"));
        let (cfg, _) = document::from_text(
            "apt: {add_apt_repo_match: '', sources: {p: {source: 'ppa:me/tools'}}}",
        );
        let plan = plan_apt(&cfg, &cc, &apt).unwrap();
        assert!(plan.repositories.is_empty());
        assert!(
            show(&plan)[2].ends_with("p.list 644\nppa:me/tools\n"),
            "{:?}",
            show(&plan)
        );
    }

    #[test]
    fn main_sources_file() {
        let (cc, mut apt) = facts("debian");
        apt.files
            .insert(SOURCES_LIST.into(), Current::File(b"deb x y z\n".to_vec()));
        // Preserved unless written false.
        let (cfg, _) =
            document::from_text("apt: {primary: [{arches: [default], uri: 'http://m/debian'}]}");
        assert!(plan_apt(&cfg, &cc, &apt).unwrap().actions.is_empty());
        let (cfg, _) = document::from_text("apt:\n  preserve_sources_list: false\n  primary: [{arches: [arm64], uri: 'http://arm/'}, {arches: [amd64], uri: 'http://m/debian'}]\n  disable_suites: [backports]\n");
        assert_eq!(
            show(&plan_apt(&cfg, &cc, &apt).unwrap()),
            [
                "write /etc/apt/sources.list.d/debian.sources 644\n# Written by vmcust from the cloud-config's apt key (preserve_sources_list: false).\nTypes: deb deb-src\nURIs: http://m/debian\n# cloud-init disable_suites redacted: Suites: bookworm bookworm-updates bookworm-backports\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb deb-src\nURIs: http://m/debian\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
                "move /etc/apt/sources.list /etc/apt/sources.list.disabled",
            ]
        );
        // A one-line sources_list goes to sources.list; search takes the entry that resolved.
        let (cfg, _) = document::from_text("apt:\n  preserve_sources_list: false\n  primary: [{arches: [default], search: ['http://a/', 'http://b/']}]\n  sources_list: |\n    deb $MIRROR $RELEASE main\n    deb $security $codename-security main\n");
        apt.resolvable.insert("http://b/".into());
        assert_eq!(
            show(&plan_apt(&cfg, &cc, &apt).unwrap()),
            ["write /etc/apt/sources.list 644\ndeb http://b/ bookworm main\ndeb http://b/ bookworm-security main\n"]
        );
        // Ubuntu keeps a note in sources.list; a mirror key signs the stanza.
        let (cc, apt) = facts("ubuntu");
        let mut apt = apt;
        apt.files
            .insert(SOURCES_LIST.into(), Current::File(b"deb x y z\n".to_vec()));
        let doc = doc_with_key("apt:\n  preserve_sources_list: false\n  primary:\n    - arches: [default]\n      uri: http://u/ubuntu\n      key: KEY\n");
        let (cfg, p) = document::from_text(&doc);
        assert!(p.is_empty(), "{p:?}");
        let plan = plan_apt(&cfg, &cc, &apt).unwrap();
        assert_eq!(plan.keys[0].path, "/etc/apt/trusted.gpg.d/primary.gpg");
        let shown = show(&plan);
        assert!(shown[0].contains("URIs: http://u/ubuntu\nSuites: bookworm bookworm-updates bookworm-backports\nComponents: main universe restricted multiverse\nSigned-By: /etc/apt/trusted.gpg.d/primary.gpg\n"), "{}", shown[0]);
        assert!(
            shown[0].contains("URIs: http://u/ubuntu\nSuites: bookworm-security"),
            "{}",
            shown[0]
        );
        assert_eq!(shown[1], "write /etc/apt/sources.list 644\n# Ubuntu sources have moved to /etc/apt/sources.list.d/ubuntu.sources\n");
        // No template for another distribution: a note, nothing written.
        let (cc, apt) = facts("raspbian");
        let (cfg, _) = document::from_text("apt: {preserve_sources_list: false}");
        let plan = plan_apt(&cfg, &cc, &apt).unwrap();
        assert!(plan.actions.is_empty() && plan.notes[0].contains("no sources template"));
    }

    #[test]
    fn credentials_are_neither_shown_nor_world_readable() {
        let table: &[(&str, bool)] = &[
            ("Acquire::http::Proxy \"http://user:pw@proxy:3128\";", true),
            ("deb https://u:p@repo.example/debian ./", true),
            ("deb [signed-by=/k] https://repo.example/debian ./", false),
            ("deb mailto://repo.example/a@b ./", false),
            (
                "Acquire::http::Proxy \"http://proxy:3128\"; // ops@example.com",
                false,
            ),
        ];
        for (text, want) in table {
            assert_eq!(has_credentials(text), *want, "{text}");
        }
        let (cfg, _) = document::from_text(
            "apt: {proxy: 'http://user:s3cret@proxy:3128', sources: {x: {source: 'deb https://u:s3cret@r/ ./'}}}",
        );
        let (cc, apt) = facts("debian");
        let plan = plan_apt(&cfg, &cc, &apt).unwrap();
        for a in &plan.actions {
            let Action::WriteFile { mode, contents, .. } = a else {
                panic!("{a:?}")
            };
            assert_eq!(*mode, 0o600);
            assert!(!contents.display().contains("s3cret"));
            assert!(action_lines(a).iter().all(|l| !l.contains("s3cret")));
        }
    }

    #[test]
    fn file_names_as_cloud_init_makes_them() {
        let table: &[(&str, &str, &str)] = &[
            (
                "x",
                "/etc/apt/sources.list.d/x.list",
                "/etc/apt/trusted.gpg.d/x.gpg",
            ),
            (
                "x.list",
                "/etc/apt/sources.list.d/x.list",
                "/etc/apt/trusted.gpg.d/x.gpg",
            ),
            (
                "x.sources",
                "/etc/apt/sources.list.d/x.sources.list",
                "/etc/apt/trusted.gpg.d/x.gpg",
            ),
            (
                "/etc/apt/my.list",
                "/etc/apt/my.list",
                "/etc/apt/trusted.gpg.d/my.gpg",
            ),
            (
                "a.b.c",
                "/etc/apt/sources.list.d/a.b.c.list",
                "/etc/apt/trusted.gpg.d/a.b.gpg",
            ),
        ];
        for (name, file, key) in table {
            assert_eq!(source_file(name), *file, "{name}");
            assert_eq!(key_file(name, false), *key, "{name}");
        }
        assert_eq!(key_file("x", true), "/etc/apt/cloud-init.gpg.d/x.gpg");
    }
}
