//! `write_files` planned as plan actions: each entry's decoded content (appended to what
//! the file holds with `append: true`), its mode, and its owner resolved against the
//! root's `/etc/passwd` and `/etc/group`. Entries with `defer: true` are planned in the
//! late stage (cloud-init's `write_files_deferred`), after users and packages exist.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::cloud_config::files::WriteFile;
use crate::cloud_config::CloudConfig;
use crate::plan::{Action, Contents};

use super::error::ModuleError;
use super::facts::{gid_of, uid_of, CcFacts, Current};

/// Which entries to plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
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
pub fn plan_write_files(
    cfg: &CloudConfig,
    facts: &CcFacts,
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
        if let Action::WriteOwnedFile { contents, .. } = &action {
            written.insert(key, contents.bytes().to_vec());
        }
        actions.push(action);
    }
    Ok(actions)
}

fn plan_one(
    index: usize,
    f: &WriteFile,
    facts: &CcFacts,
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
    Ok(Action::WriteOwnedFile {
        path: f.path.clone().into(),
        mode: f.permissions,
        uid,
        gid,
        // User-data files may hold secrets: their contents are never printed.
        contents: Contents::sensitive(bytes),
        purpose: if f.defer {
            "cloud-config write_files (deferred)"
        } else {
            "cloud-config write_files"
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    const PASSWD: &str =
        "root:x:0:0:root:/root:/bin/bash\nwww-data:x:33:33::/var/www:/usr/sbin/nologin\n";
    const GROUP: &str = "root:x:0:\nwww-data:x:33:\nadm:x:4:\n";

    fn facts() -> CcFacts {
        let mut f = CcFacts {
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
                Action::WriteOwnedFile {
                    path,
                    mode,
                    uid,
                    gid,
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
            let (cfg, p) = document::from_text(doc);
            assert!(p.is_empty(), "{doc}: {p:?}");
            match (plan_write_files(&cfg, &facts(), *which), want) {
                (Ok(a), Ok(w)) => assert_eq!(show(&a), *w, "{doc}"),
                (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{doc}: {e}"),
                (got, _) => panic!("{doc}: {got:?}"),
            }
        }
    }

    #[test]
    fn contents_are_never_shown() {
        let (cfg, _) = document::from_text("write_files: [{path: /etc/token, content: s3cr3t}]");
        let a = plan_write_files(&cfg, &facts(), Which::Now).unwrap();
        assert!(!format!("{a:?}").contains("s3cr3t"));
        assert!(!serde_json::to_string(&a).unwrap().contains("s3cr3t"));
    }
}
