//! `write_files`: each entry's path, content (decoded here: `b64`, `gzip`, `gz+b64`…),
//! owner, permissions, append and defer, with cloud-init's defaults (`root:root`, 0644,
//! overwrite, early).
//!
//! `write_files` planned as plan actions: each entry's decoded content (appended to what
//! the file holds with `append: true`), its mode, and its owner resolved against the
//! root's `/etc/passwd` and `/etc/group`. Entries with `defer: true` are planned in the
//! late stage (cloud-init's `write_files_deferred`), after users and packages exist.

use crate::cloud_config::apply::driver::{absent, failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::error::ModuleError;
use crate::cloud_config::apply::preview::{actions, Look};
use crate::cloud_config::decode::{base64, base64_bytes, gunzip};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader};
use crate::cloud_config::CloudConfig;
use crate::facts::{gid_of, uid_of, Current, Facts, Wanted};
use crate::model::quote;
use crate::plan::{Action, Contents, FileOwner};
use serde::Serialize;
use sha2::Digest as _;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Most entries.
pub(crate) const MAX_FILES: usize = 1024;
/// Largest decoded content of one file.
pub(crate) const MAX_FILE: usize = 16 * 1024 * 1024;
/// Largest decoded content of all files together.
pub(crate) const MAX_TOTAL: usize = 64 * 1024 * 1024;
/// Longest path.
pub(crate) const MAX_PATH: usize = 4096;

/// The keys of an entry.
const KEYS: &[&str] = &[
    "path",
    "content",
    "source",
    "owner",
    "permissions",
    "encoding",
    "append",
    "defer",
];

/// How `content` is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// As written (`text/plain`, or no `encoding`).
    Text,
    /// `b64`, `base64`.
    Base64,
    /// `gz`, `gzip` (the content is `!!binary`).
    Gzip,
    /// `gz+b64`, `gz+base64`, `gzip+b64`, `gzip+base64`.
    GzipBase64,
}

impl Encoding {
    /// cloud-init's `canonicalize_extraction`, without its fallback to text for an
    /// unknown name (which writes base64 into a file meant to hold what it encodes).
    pub fn parse(s: &str) -> Option<Encoding> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "text/plain" => Some(Encoding::Text),
            "b64" | "base64" => Some(Encoding::Base64),
            "gz" | "gzip" => Some(Encoding::Gzip),
            "gz+b64" | "gz+base64" | "gzip+b64" | "gzip+base64" => Some(Encoding::GzipBase64),
            _ => None,
        }
    }
}

/// A file's decoded contents: may be secret, so never printed; shown as its size and
/// SHA-256.
#[derive(Clone, PartialEq, Eq)]
pub struct Content(pub Zeroizing<Vec<u8>>);

impl Content {
    fn digest(&self) -> String {
        let d = sha2::Sha256::digest(&self.0[..]);
        d.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Debug for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Content({} bytes, sha256 {})",
            self.0.len(),
            self.digest()
        )
    }
}

impl Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("Content", 2)?;
        st.serialize_field("bytes", &self.0.len())?;
        st.serialize_field("sha256", &self.digest())?;
        st.end()
    }
}

/// The owner of a written file: `user` or `user:group` (cloud-init's `extract_usergroup`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Owner {
    /// The user name.
    pub user: String,
    /// The group name, when given.
    pub group: Option<String>,
}

/// One `write_files` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteFile {
    /// The absolute path, normalised as `os.path.abspath` does.
    pub path: String,
    /// The decoded contents.
    pub content: Content,
    /// The encoding it was given in.
    pub encoding: Encoding,
    /// The owner (default `root:root`).
    pub owner: Owner,
    /// The mode (default 0644).
    pub permissions: u32,
    /// Append instead of replacing.
    pub append: bool,
    /// Written in the late stage (after users and packages), not the early one.
    pub defer: bool,
}

/// `write_files`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(items) = r.list(node, key, MAX_FILES) else {
        return;
    };
    let mut total = 0usize;
    for (i, item) in items.iter().enumerate() {
        let at = index(key, i);
        if let Some(f) = entry(r, &at, item) {
            total += f.content.0.len();
            if total > MAX_TOTAL {
                r.error(
                    item,
                    &at,
                    format!("the files' contents add up to more than {MAX_TOTAL} bytes"),
                );
                return;
            }
            cfg.write_files.push(f);
        }
    }
}

fn entry(r: &mut Reader, path: &str, node: &Node) -> Option<WriteFile> {
    let map = r.map(node, path, KEYS)?;
    let get = |k: &str| map.iter().find(|(key, _)| key.text == k).map(|(_, v)| *v);
    let Some(p) = get("path") else {
        r.error(
            node,
            path,
            "has no path; every entry needs `path: /absolute/file`",
        );
        return None;
    };
    let file = absolute(r, &join(path, "path"), p);
    // cloud-init downloads `source`, and writes `content` when the download fails (or
    // skips the entry when there is none). Nothing at boot is fetched here: the entry is
    // written from `content` as after a failed download, or left out; either way named.
    let fetched = get("source").inspect(|src| {
        let instead = if get("content").is_some() {
            "`content` is written instead, as cloud-init writes it when the download fails"
        } else {
            "the entry is not written; put the file into `content`"
        };
        r.not_applied(
            src,
            &join(path, "source"),
            "nothing at boot is fetched from the network",
            instead,
        );
    });
    let encoding = match get("encoding") {
        None => Some(Encoding::Text),
        Some(e) => {
            let at = join(path, "encoding");
            r.line(e, &at, 64).and_then(|s| {
                let enc = Encoding::parse(&s);
                if enc.is_none() {
                    r.error(
                        e,
                        &at,
                        format!(
                            "{} is not an encoding; write b64, gzip, gz+b64 or text/plain",
                            quote(&s)
                        ),
                    );
                }
                enc
            })
        }
    };
    let content = match (get("content"), encoding) {
        (_, None) => None,
        (None, Some(_)) => Some(Vec::new()),
        (Some(c), Some(enc)) => decode(r, &join(path, "content"), c, enc),
    };
    let owner = match get("owner") {
        None => Some(Owner {
            user: "root".into(),
            group: Some("root".into()),
        }),
        Some(o) => owner(r, &join(path, "owner"), o),
    };
    let permissions = match get("permissions") {
        None => Some(0o644),
        Some(m) => permissions(r, &join(path, "permissions"), m),
    };
    let flag = |r: &mut Reader, k: &str| match get(k) {
        None => Some(false),
        Some(v) => r.bool(v, &join(path, k)),
    };
    let append = flag(r, "append");
    let defer = flag(r, "defer");
    if fetched.is_some() && get("content").is_none() {
        return None;
    }
    Some(WriteFile {
        path: file?,
        content: Content(Zeroizing::new(content?)),
        encoding: encoding?,
        owner: owner?,
        permissions: permissions?,
        append: append?,
        defer: defer?,
    })
}

/// An absolute path without NUL or control characters, `.` and `..` resolved as
/// `os.path.abspath` does.
pub(crate) fn absolute(r: &mut Reader, at: &str, node: &Node) -> Option<String> {
    let s = r.line(node, at, MAX_PATH)?;
    if !s.starts_with('/') {
        r.error(
            node,
            at,
            format!("{} is not an absolute path; write it from /", quote(&s)),
        );
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in s.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        r.error(node, at, "names the root directory; name a file");
        return None;
    }
    Some(format!("/{}", parts.join("/")))
}

fn decode(r: &mut Reader, at: &str, node: &Node, enc: Encoding) -> Option<Vec<u8>> {
    let bytes: Vec<u8> = match (&node.value, enc) {
        (Value::Str(s), Encoding::Text) => s.clone().into_bytes(),
        (Value::Binary(b), Encoding::Text | Encoding::Gzip) => b.clone(),
        (Value::Str(s), Encoding::Base64 | Encoding::GzipBase64) => match base64(s) {
            Ok(b) => b,
            Err(why) => {
                r.error(node, at, why);
                return None;
            }
        },
        // PyYAML gives `!!binary` as bytes, which `b64decode` takes as well as text.
        (Value::Binary(b), Encoding::Base64 | Encoding::GzipBase64) => match base64_bytes(b) {
            Ok(b) => b,
            Err(why) => {
                r.error(node, at, why);
                return None;
            }
        },
        (Value::Str(_), Encoding::Gzip) => {
            r.error(
                node,
                at,
                "gzip content must be `!!binary`; or base64 it and write `encoding: gz+b64`",
            );
            return None;
        }
        _ => {
            r.wrong_type(node, at, "a string");
            return None;
        }
    };
    let bytes = if matches!(enc, Encoding::Gzip | Encoding::GzipBase64) {
        match gunzip(&bytes, MAX_FILE) {
            Ok(b) => b,
            Err(e) => {
                r.error(node, at, e.to_string());
                return None;
            }
        }
    } else {
        bytes
    };
    if bytes.len() > MAX_FILE {
        r.error(
            node,
            at,
            format!("is {} bytes; at most {MAX_FILE}", bytes.len()),
        );
        return None;
    }
    Some(bytes)
}

/// A user or group name as useradd takes it (and nothing a file of names could choke on).
pub(crate) fn account_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 32
        && !s.starts_with('-')
        && s.bytes().enumerate().all(|(i, b)| {
            b.is_ascii_alphanumeric()
                || b == b'_'
                || b == b'-'
                || b == b'.'
                || (b == b'$' && i == s.len() - 1)
        })
}

fn owner(r: &mut Reader, at: &str, node: &Node) -> Option<Owner> {
    let s = r.line(node, at, 128)?;
    let (user, group) = match s.split_once(':') {
        Some((u, g)) => (u.trim(), Some(g.trim())),
        None => (s.trim(), None),
    };
    for name in std::iter::once(user).chain(group) {
        if !account_name(name) {
            r.error(
                node,
                at,
                format!(
                    "{} is not a user or group name; write user:group, such as root:root",
                    quote(name)
                ),
            );
            return None;
        }
    }
    Some(Owner {
        user: user.to_string(),
        group: group.map(str::to_string),
    })
}

/// cloud-init's `decode_perms`: an integer as it is (YAML reads `0644` as octal), a string
/// as octal digits (`'0644'`, `'0o644'`, `'644'`); unlike cloud-init, a bad value is an
/// error, not 0644.
pub(crate) fn permissions(r: &mut Reader, at: &str, node: &Node) -> Option<u32> {
    let mode = match &node.value {
        Value::Int(n) => u32::try_from(*n).ok(),
        Value::Str(s) => {
            let t = s.trim().replace('_', "");
            let t = t
                .strip_prefix("0o")
                .or_else(|| t.strip_prefix("0O"))
                .unwrap_or(&t);
            u32::from_str_radix(t, 8)
                .ok()
                .filter(|_| !t.is_empty() && !t.starts_with(['+', '-']))
        }
        _ => {
            r.wrong_type(node, at, "an octal mode such as '0644'");
            return None;
        }
    };
    match mode {
        Some(m) if m <= 0o7777 => Some(m),
        _ => {
            r.error(
                node,
                at,
                "is not a file mode; write octal digits such as '0644' (at most 07777)",
            );
            None
        }
    }
}

#[cfg(test)]
#[allow(clippy::type_complexity)]
mod parse_tests {
    use super::*;
    use crate::cloud_config::node::parse as yaml;
    use crate::cloud_config::read::Severity;

    fn one(entry: &str) -> Result<WriteFile, String> {
        let node = yaml(&format!("- {entry}"), 0).unwrap();
        let mut cfg = CloudConfig::default();
        let mut r = Reader::new();
        parse(&mut cfg, &mut r, "write_files", &node);
        let p = r.into_problems();
        if p.is_empty() {
            Ok(cfg.write_files.remove(0))
        } else {
            Err(p
                .iter()
                .map(|p| format!("{}: {}", p.path, p.message))
                .collect::<Vec<_>>()
                .join("; "))
        }
    }

    #[test]
    fn defaults_are_cloud_inits() {
        let f = one("{path: /etc/x}").unwrap();
        assert_eq!(f.path, "/etc/x");
        assert!(f.content.0.is_empty());
        assert_eq!(f.permissions, 0o644);
        assert_eq!(
            f.owner,
            Owner {
                user: "root".into(),
                group: Some("root".into())
            }
        );
        assert!(!f.append && !f.defer);
        assert_eq!(f.encoding, Encoding::Text);
    }

    #[test]
    fn entries_good_and_hostile() {
        // "aGVsbG8=" is "hello"; the gzip+base64 one is gzip("hello").
        let table: &[(&str, Result<(&str, &[u8], u32), &str>)] = &[
            ("{path: /a/./b/../c, content: hi}", Ok(("/a/c", b"hi", 0o644))),
            ("{path: /x, content: aGVsbG8=, encoding: b64}", Ok(("/x", b"hello", 0o644))),
            ("{path: /x, content: aGVsbG8=, encoding: ' BASE64 '}", Ok(("/x", b"hello", 0o644))),
            ("{path: /x, content: H4sIAAAAAAAAA8tIzcnJBwCGphA2BQAAAA==, encoding: gz+b64}", Ok(("/x", b"hello", 0o644))),
            ("{path: /x, content: !!binary H4sIAAAAAAAAA8tIzcnJBwCGphA2BQAAAA==, encoding: gzip}", Ok(("/x", b"hello", 0o644))),
            ("{path: /x, permissions: 0600}", Ok(("/x", b"", 0o600))),
            ("{path: /x, permissions: '0755'}", Ok(("/x", b"", 0o755))),
            ("{path: /x, permissions: '0o640'}", Ok(("/x", b"", 0o640))),
            ("{path: /x, permissions: 644}", Ok(("/x", b"", 644))),
            ("{path: x/y}", Err("not an absolute path")),
            ("{path: '/'}", Err("root directory")),
            ("{path: \"/a\\0b\"}", Err("control character")),
            ("{content: x}", Err("has no path")),
            ("{path: /x, permissions: '0999'}", Err("not a file mode")),
            ("{path: /x, permissions: 070000}", Err("not a file mode")),
            ("{path: /x, permissions: rw}", Err("not a file mode")),
            ("{path: /x, encoding: rot13}", Err("not an encoding")),
            ("{path: /x, content: '!!notb64', encoding: b64}", Err("not valid base64")),
            ("{path: /x, content: aGVsbG8=, encoding: gz+b64}", Err("gzip")),
            ("{path: /x, content: abc, encoding: gz}", Err("!!binary")),
            ("{path: /x, owner: 'bad user'}", Err("not a user or group name")),
            ("{path: /x, owner: '-x:root'}", Err("not a user or group name")),
            ("{path: /x, append: 'yes'}", Err("append: is a string; write true or false")),
            ("{path: /x, permission: '0600'}", Err("did you mean permissions?")),
            ("{path: /x, content: [a]}", Err("is a list; write a string")),
        ];
        for (entry, want) in table {
            match (one(entry), want) {
                (Ok(f), Ok((p, c, m))) => {
                    assert_eq!(
                        (f.path.as_str(), &f.content.0[..], f.permissions),
                        (*p, *c, *m),
                        "{entry}"
                    )
                }
                (Err(e), Err(w)) => assert!(e.contains(w), "{entry}: {e} lacks {w}"),
                (got, _) => panic!("{entry}: {got:?}"),
            }
        }
        let f = one("{path: /x, owner: 'www-data', append: true, defer: true}").unwrap();
        assert_eq!(f.owner.group, None);
        assert!(f.append && f.defer);
    }

    /// What cloud-init takes and vmcust cannot apply is named, not refused: `source` (a
    /// download) with or without `content` to fall back on.
    #[test]
    fn a_source_is_not_applied_and_content_is_its_fallback() {
        for (entry, written) in [
            ("{path: /x, source: {uri: 'http://x'}, content: hi}", true),
            (
                "{path: /x, source: {uri: 'http://x', headers: {Authorization: s3cr3t}}}",
                false,
            ),
        ] {
            let node = yaml(&format!("- {entry}"), 0).unwrap();
            let mut cfg = CloudConfig::default();
            let mut r = Reader::new();
            parse(&mut cfg, &mut r, "write_files", &node);
            let p = r.into_problems();
            assert_eq!(p.len(), 1, "{entry}: {p:?}");
            assert_eq!(
                (p[0].severity, p[0].path.as_str()),
                (Severity::Unknown, "write_files[0].source")
            );
            assert!(
                p[0].message.contains("not applied") && !p[0].message.contains("s3cr3t"),
                "{p:?}"
            );
            assert_eq!(cfg.write_files.len(), usize::from(written), "{entry}");
        }
        assert_eq!(
            &one("{path: /x, content: hi}").unwrap().content.0[..],
            b"hi"
        );
    }

    /// PyYAML gives `!!binary` as bytes, which cloud-init's `b64decode` takes like text;
    /// base64 with characters outside the alphabet is read as Python reads it.
    #[test]
    fn binary_and_lenient_base64_content() {
        let table: &[(&str, &[u8])] = &[
            // base64("aGVsbG8=") is "YUdWc2JHOD0=": a !!binary of base64 text.
            (
                "{path: /x, content: !!binary YUdWc2JHOD0=, encoding: b64}",
                b"hello",
            ),
            ("{path: /x, content: !!binary aGVs*bG8=}", b"hello"),
            ("{path: /x, content: 'aGVs bG8*=', encoding: b64}", b"hello"),
        ];
        for (entry, want) in table {
            let f = one(entry).unwrap_or_else(|e| panic!("{entry}: {e}"));
            assert_eq!(&f.content.0[..], *want, "{entry}");
        }
    }

    #[test]
    fn content_is_never_printed() {
        let f = one("{path: /x, content: s3cr3t}").unwrap();
        assert!(!format!("{f:?}").contains("s3cr3t"));
        let json = serde_json::to_string(&f).unwrap();
        assert!(
            !json.contains("s3cr3t") && json.contains("\"bytes\":6"),
            "{json}"
        );
    }
}

/// Which entries to plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    /// Entries without `defer` (the early stage's `write_files`).
    Now,
    /// Entries with `defer: true` (the late stage's `write_files_deferred`).
    Deferred,
}

/// The actions writing the `which` entries of `cfg`, in order. An owner that does not
/// exist in the root is an error naming the entry, as cloud-init fails the module; then
/// nothing of the module is written. Entries for one path apply in order, as cloud-init
/// writes them one after the other: an `append: true` entry appends to what the entries
/// before it wrote (deferred ones, planned in the late stage, to what the early stage's
/// left), not to the file as it was before the module.
pub(crate) fn plan_write_files(
    cfg: &CloudConfig,
    facts: &Facts,
    which: Which,
) -> Result<Vec<Action>, ModuleError> {
    let mut actions = Vec::new();
    // What the entries planned so far leave at each path.
    let mut written: HashMap<PathBuf, Vec<u8>> = HashMap::new();
    for (index, f) in cfg.write_files.iter().enumerate() {
        if f.defer != (which == Which::Deferred) {
            continue;
        }
        // `/etc//motd` and `/etc/./motd` are the file `/etc/motd` is.
        let key: PathBuf = Path::new(&f.path).components().collect();
        let action = plan_one(index, f, facts, written.get(&key))?;
        if let Action::WriteFile {
            owner: FileOwner::Chown { .. },
            contents,
            ..
        } = &action
        {
            written.insert(key, contents.bytes().to_vec());
        }
        actions.push(action);
    }
    Ok(actions)
}

fn plan_one(
    index: usize,
    f: &WriteFile,
    facts: &Facts,
    before: Option<&Vec<u8>>,
) -> Result<Action, ModuleError> {
    let uid = uid_of(facts.passwd.as_deref().unwrap_or(""), &f.owner.user).ok_or_else(|| {
        ModuleError::NoSuchUser {
            index,
            path: f.path.clone(),
            user: f.owner.user.clone(),
        }
    })?;
    // `user` alone leaves the group as the writer's (root's), as chown user does.
    let gid = match &f.owner.group {
        None => 0,
        Some(g) => gid_of(facts.group.as_deref().unwrap_or(""), g).ok_or_else(|| {
            ModuleError::NoSuchGroup {
                index,
                path: f.path.clone(),
                group: g.clone(),
            }
        })?,
    };
    let mut bytes = Vec::new();
    if let (true, Some(before)) = (f.append, before) {
        bytes.extend_from_slice(before);
    } else if f.append {
        match facts.appended.get(&f.path) {
            Some(Current::File(now)) => bytes.extend_from_slice(now),
            Some(Current::NotAFile) => {
                return Err(ModuleError::NotAFile {
                    index,
                    path: f.path.clone(),
                })
            }
            Some(Current::Missing) | None => {}
        }
    }
    bytes.extend_from_slice(&f.content.0);
    // User-data files may hold secrets: their contents are never printed.
    Ok(Action::write_file_as(
        f.path.clone(),
        Contents::sensitive(bytes),
        f.permissions,
        FileOwner::Chown { uid, gid },
        if f.defer {
            "cloud-config write_files (deferred)"
        } else {
            "cloud-config write_files"
        },
    ))
}

/// `write_files`: the entries without `defer: true`.
pub(crate) fn run_now(s: &Step) -> ModuleOutcome {
    match plan_write_files(s.cfg, s.cc, Which::Now) {
        Err(e) => failed(e.to_string()),
        Ok(a) if a.is_empty() => absent("write_files"),
        Ok(a) => s.apply_outcome(a),
    }
}

/// `write_files_deferred`: the entries with `defer: true`.
pub(crate) fn run_deferred(s: &Step) -> ModuleOutcome {
    match plan_write_files(s.cfg, s.cc, Which::Deferred) {
        Err(e) => failed(e.to_string()),
        Ok(a) if a.is_empty() => skipped("no write_files entry has defer: true"),
        Ok(a) => s.apply_outcome(a),
    }
}

/// `write_files`' files.
pub(crate) fn preview_now(l: &Look) -> Vec<String> {
    actions(
        plan_write_files(l.cfg, l.facts, Which::Now),
        "nothing: no write_files entry without defer",
    )
}

/// `write_files_deferred`'s files. An owner that neither the root nor this document's
/// accounts have may still be made by the packages this document installs before the
/// late stage writes the files: the plan cannot know, and says so in words rather than
/// calling it a failure.
pub(crate) fn preview_deferred(l: &Look) -> Vec<String> {
    let planned = plan_write_files(l.cfg, l.facts, Which::Deferred);
    let installs = !l.cfg.packages.is_empty();
    match &planned {
        Err(ModuleError::NoSuchUser { path, user, .. }) if installs => {
            return vec![format!(
                "not known before the late stage: {path} is for owner {user}, who is not in the root nor made by this document's \
                 accounts; a package it installs must create it before write_files_deferred \
                 runs, else the module fails"
            )];
        }
        Err(ModuleError::NoSuchGroup { path, group, .. }) if installs => {
            return vec![format!(
                "not known before the late stage: {path} is for group {group}, which is not in the root nor made by this document's \
                 accounts; a package it installs must create it before write_files_deferred \
                 runs, else the module fails"
            )];
        }
        _ => {}
    }
    actions(planned, "nothing: no write_files entry with defer: true")
}

/// What it needs of the root's facts: what each file it appends to holds now.
pub(crate) fn wants(cfg: &CloudConfig, w: &mut Wanted) {
    w.appended.extend(
        cfg.write_files
            .iter()
            .filter(|f| f.append)
            .map(|f| f.path.clone()),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
    use crate::cloud_config::modules::test_support::clean_config;

    const PASSWD: &str =
        "root:x:0:0:root:/root:/bin/bash\nwww-data:x:33:33::/var/www:/usr/sbin/nologin\n";
    const GROUP: &str = "root:x:0:\nwww-data:x:33:\nadm:x:4:\n";

    fn facts() -> Facts {
        let mut f = Facts {
            passwd: Some(PASSWD.into()),
            group: Some(GROUP.into()),
            ..Default::default()
        };
        f.appended
            .insert("/etc/motd".into(), Current::File(b"hello\n".to_vec()));
        f.appended.insert("/etc/dir".into(), Current::NotAFile);
        f
    }

    /// One line per action: path, mode, owner, contents.
    fn show(actions: &[Action]) -> String {
        actions
            .iter()
            .map(|a| match a {
                Action::WriteFile {
                    path,
                    mode,
                    owner: FileOwner::Chown { uid, gid },
                    contents,
                    purpose,
                } => format!(
                    "{} {mode:04o} {uid}:{gid} {:?} ({purpose})",
                    path.display(),
                    String::from_utf8_lossy(contents.bytes())
                ),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn write_files_goldens() {
        let table: &[(&str, Which, Result<&str, &str>)] = &[
            (
                "write_files: [{path: /etc/a, content: x}]",
                Which::Now,
                Ok("/etc/a 0644 0:0 \"x\" (cloud-config write_files)"),
            ),
            (
                "write_files: [{path: /var/www/i.html, content: hi, owner: 'www-data:adm', permissions: '0640'}]",
                Which::Now,
                Ok("/var/www/i.html 0640 33:4 \"hi\" (cloud-config write_files)"),
            ),
            (
                "write_files: [{path: /srv/x, owner: www-data}]",
                Which::Now,
                Ok("/srv/x 0644 33:0 \"\" (cloud-config write_files)"),
            ),
            (
                "write_files: [{path: /etc/motd, content: \"more\\n\", append: true}]",
                Which::Now,
                Ok("/etc/motd 0644 0:0 \"hello\\nmore\\n\" (cloud-config write_files)"),
            ),
            // Entries for one path apply in order: each append sees the entries before.
            (
                "write_files: [{path: /etc/motd, content: a}, {path: /etc//motd, content: b, append: true}]",
                Which::Now,
                Ok("/etc/motd 0644 0:0 \"a\" (cloud-config write_files)\n\
                    /etc/motd 0644 0:0 \"ab\" (cloud-config write_files)"),
            ),
            (
                "write_files: [{path: /etc/motd, content: x, append: true}, {path: /etc/motd, content: y, append: true, owner: www-data}]",
                Which::Now,
                Ok("/etc/motd 0644 0:0 \"hello\\nx\" (cloud-config write_files)\n\
                    /etc/motd 0644 33:0 \"hello\\nxy\" (cloud-config write_files)"),
            ),
            (
                "write_files: [{path: /etc/new, content: n, append: true}, {path: /etc/new, content: m}]",
                Which::Now,
                Ok("/etc/new 0644 0:0 \"n\" (cloud-config write_files)\n\
                    /etc/new 0644 0:0 \"m\" (cloud-config write_files)"),
            ),
            (
                "write_files: [{path: /etc/new, content: n, append: true}]",
                Which::Now,
                Ok("/etc/new 0644 0:0 \"n\" (cloud-config write_files)"),
            ),
            (
                "write_files: [{path: /a, content: '1'}, {path: /b, content: '2', defer: true}]",
                Which::Now,
                Ok("/a 0644 0:0 \"1\" (cloud-config write_files)"),
            ),
            (
                "write_files: [{path: /a, content: '1'}, {path: /b, content: '2', defer: true}]",
                Which::Deferred,
                Ok("/b 0644 0:0 \"2\" (cloud-config write_files (deferred))"),
            ),
            (
                "write_files: [{path: /a}, {path: /b, owner: 'alice:alice'}]",
                Which::Now,
                Err("write_files[1] (/b): the owner \"alice\" does not exist"),
            ),
            (
                "write_files: [{path: /b, owner: 'root:wheel'}]",
                Which::Now,
                Err("the group \"wheel\" does not exist"),
            ),
            (
                "write_files: [{path: /etc/dir, append: true}]",
                Which::Now,
                Err("append needs a regular file"),
            ),
        ];
        for (doc, which, want) in table {
            let cfg = clean_config(doc);
            match (plan_write_files(&cfg, &facts(), *which), want) {
                (Ok(a), Ok(w)) => assert_eq!(show(&a), *w, "{doc}"),
                (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{doc}: {e}"),
                (got, _) => panic!("{doc}: {got:?}"),
            }
        }
    }

    /// A deferred file's owner that only a package may create: the plan says so in
    /// words, never a failure; without packages an unknown owner is the failure it will be.
    #[test]
    fn a_deferred_owner_a_package_may_create_is_not_a_false_failure() {
        let scripts = crate::cloud_config::apply::scripts::Scripts::default();
        let look = |doc: &str| {
            let cfg = clean_config(doc);
            preview_deferred(&Look {
                cfg: &cfg,
                facts: &facts(),
                fallback: None,
                scripts: &scripts,
            })
        };
        let lines = look(
            "packages: [nginx]\nwrite_files: [{path: /srv/x, owner: 'nginx:nginx', defer: true}]",
        );
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("not known before the late stage: /srv/x is for owner nginx"),
            "{lines:?}"
        );
        let lines = look("write_files: [{path: /srv/x, owner: 'nginx:nginx', defer: true}]");
        assert!(lines[0].starts_with("fails: "), "{lines:?}");
    }

    #[test]
    fn contents_are_never_shown() {
        let (cfg, _) = document::from_text("write_files: [{path: /etc/token, content: s3cr3t}]");
        let a = plan_write_files(&cfg, &facts(), Which::Now).unwrap();
        assert!(!format!("{a:?}").contains("s3cr3t"));
        assert!(!serde_json::to_string(&a).unwrap().contains("s3cr3t"));
    }
}
