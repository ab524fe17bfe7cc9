//! Facts about the target root that planning needs, gathered in one place so that the
//! planners (the engine's and the cloud-config modules') stay pure functions: one
//! [`Facts`], read by one [`Facts::gather`] from one request, [`Wanted`].

pub(crate) mod accounts;
pub(crate) mod apt;
pub(crate) mod disks;
pub(crate) mod files;
pub(crate) mod mounts;
pub(crate) mod network;
pub(crate) mod os;
pub(crate) mod programs;
pub(crate) mod wanted;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, Result};

pub(crate) use accounts::AccountFacts;
pub(crate) use accounts::{gid_of, uid_of};
pub(crate) use apt::AptFacts;
pub(crate) use disks::DiskSetupFacts;
pub use files::Current;
pub use mounts::MountFacts;
pub use network::NetworkFacts;
pub use os::Family;
pub(crate) use programs::which;
pub(crate) use wanted::{AccountsDbWanted, AccountsWanted, Wanted};

use crate::root::Root;

/// Directory holding the compiled time zone database.
pub(crate) const ZONEINFO_DIR: &str = "/usr/share/zoneinfo";

/// What the planners may know about the system they customize. A fact nobody asked for
/// is empty.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Current `/etc/hosts`, if any.
    pub hosts: Option<String>,
    /// Current `/etc/adjtime`, if any (when asked for).
    pub adjtime: Option<String>,
    /// Those of the asked-for time zones that exist in the root's zoneinfo.
    pub zones_present: BTreeSet<String>,
    /// The root is a Debian-family system (it keeps `/etc/timezone`).
    pub debian_family: bool,
    /// `/etc/timezone` exists already.
    pub has_etc_timezone: bool,
    /// What the root's network looks like (devices, stack).
    pub network: NetworkFacts,
    /// Accounts: passwd, shadow, salt and the SSH key user's home (what was asked for).
    pub accounts: AccountFacts,
    /// What the cloud-config accounts planner needs, when asked for.
    pub accounts_db: Option<accounts::AccountDbFacts>,
    /// The distribution family.
    pub family: Family,
    /// `ID` of `/etc/os-release` (`debian`, `ubuntu`, `rhel`, …), empty if unknown.
    pub os_id: String,
    /// `/etc/passwd`, if any.
    pub passwd: Option<String>,
    /// `/etc/group`, if any.
    pub group: Option<String>,
    /// Whether `/etc/hostname` exists (`create_hostname_file: false` keeps a missing one
    /// missing).
    pub hostname_file: bool,
    /// What each file `write_files` appends to holds now.
    pub appended: BTreeMap<String, Current>,
    /// Programs found in the root: name → path inside the root.
    pub programs: BTreeMap<String, String>,
    /// What the asked-for files hold now (the repo files the repository modules never
    /// overwrite, the files the modules edit), by path inside the root.
    pub files: BTreeMap<String, Current>,
    /// The permission bits of those of [`Facts::files`] that are regular files (an
    /// edited file keeps its mode).
    pub modes: BTreeMap<String, u32>,
    /// What the `apt` module needs (empty unless asked for).
    pub apt: AptFacts,
    /// What the `mounts` module needs, when asked for.
    pub mounts: Option<MountFacts>,
    /// What the `disk_setup` module needs (the devices it names, probed on the running
    /// system), when asked for.
    pub disk_setup: Option<DiskSetupFacts>,
}

impl Facts {
    /// Reads from `root` the facts `want` asks for, each file once.
    pub fn gather(root: &Root, want: &Wanted) -> Result<Facts> {
        let text = |p: &str| {
            read_log::note(p);
            root.read_text(Path::new(p))
                .with_context(|| format!("reading {p} in {}", root.path().display()))
        };
        let mut f = Facts {
            hosts: text("/etc/hosts")?,
            debian_family: root.is_file(Path::new("/etc/debian_version")),
            has_etc_timezone: root.is_file(Path::new("/etc/timezone")),
            ..Default::default()
        };
        for zone in &want.zones {
            if root.is_file(&Path::new(ZONEINFO_DIR).join(zone)) {
                f.zones_present.insert(zone.clone());
            }
        }
        if want.adjtime {
            f.adjtime = text("/etc/adjtime")?;
        }
        if want.network {
            f.network = NetworkFacts::gather(root)?;
        }
        // `/etc/passwd`, `/etc/group` and `os-release` are read once, for whoever asked:
        // the cloud-config accounts planner needs them with their bytes and modes, the
        // others as text, derived from those bytes then.
        let shared = match &want.accounts_db {
            Some(_) => Some(accounts::SharedFiles::read(root)?),
            None => None,
        };
        let shared_text = |file: Option<&accounts::DbFile>, path: &str| {
            file.map(|f| accounts::db_file_text(root, f, path))
                .transpose()
        };
        let accounts_passwd = want
            .accounts
            .as_ref()
            .is_some_and(|a| a.password || a.ssh_user.is_some());
        let passwd = if !(want.account_files || accounts_passwd) {
            None
        } else if let Some(s) = &shared {
            shared_text(s.passwd.as_ref(), accounts::PASSWD)?
        } else {
            text(accounts::PASSWD)?
        };
        if let Some(a) = &want.accounts {
            f.accounts = AccountFacts::gather(root, a, passwd.clone())?;
        }
        if want.account_files {
            f.passwd = passwd;
            f.group = match &shared {
                Some(s) => shared_text(s.group.as_ref(), accounts::GROUP)?,
                None => text(accounts::GROUP)?,
            };
        }
        let os_release = if let Some(s) = &shared {
            s.os_release.clone().unwrap_or_default()
        } else if want.os || want.apt.is_some() {
            text(accounts::OS_RELEASE)?.unwrap_or_default()
        } else {
            String::new()
        };
        if want.os {
            // The release files only when os-release names no family; Debian's is
            // already known.
            let debian = f.debian_family;
            (f.os_id, f.family) = os::family_of(&os_release, |p| {
                if p == "/etc/debian_version" {
                    debian
                } else {
                    root.is_file(Path::new(p))
                }
            });
        }
        if want.hostname_file {
            f.hostname_file = root.is_file(Path::new("/etc/hostname"));
        }
        for p in &want.appended {
            let (now, _) = files::current(root, p)?;
            f.appended.insert(p.clone(), now);
        }
        for p in &want.files {
            let (now, mode) = files::current(root, p)?;
            if let Some(mode) = mode {
                f.modes.insert(p.clone(), mode);
            }
            f.files.insert(p.clone(), now);
        }
        // Only the programs asked for: looking for all of them in every PATH directory
        // was ~200 system calls on every boot.
        for name in &want.programs {
            if let Some(p) = programs::find(root, name) {
                f.programs.insert(name.clone(), p);
            }
        }
        if let Some(a) = &want.apt {
            f.apt = apt::gather(root, a, &os_release, &f.os_id)?;
        }
        f.mounts = want.mounts.as_ref().map(|m| mounts::gather(root, m));
        f.disk_setup = want.disks.as_ref().map(|d| disks::gather(root, d));
        if let (Some(a), Some(shared)) = (&want.accounts_db, shared) {
            f.accounts_db = Some(accounts::AccountDbFacts::gather_with(
                root, shared, a.salts, &*a.homes,
            )?);
        }
        Ok(f)
    }

    /// Whether the root has `program` (one asked for in [`Wanted::programs`]).
    pub fn has(&self, program: &str) -> bool {
        self.programs.contains_key(program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each fact is read when asked for, and only then; `/etc/passwd` once for both who
    /// may ask for it.
    #[test]
    fn reads_what_is_asked_for() {
        let (_dir, root) = scratch_root_with_etc(&[
            ("hosts", "127.0.0.1 localhost\n"),
            ("passwd", "root:x:0:0:root:/root:/bin/sh\n"),
            ("group", "root:x:0:\n"),
            ("os-release", "ID=debian\nVERSION_CODENAME=bookworm\n"),
        ]);
        let keys = Some(AccountsWanted {
            ssh_user: Some("root".into()),
            ..Default::default()
        });
        let table: &[(Wanted, &[&str])] = &[
            (Wanted::default(), &["/etc/hosts"]),
            (
                Wanted {
                    adjtime: true,
                    ..Default::default()
                },
                &["/etc/hosts", "/etc/adjtime"],
            ),
            (
                Wanted {
                    account_files: true,
                    os: true,
                    ..Default::default()
                },
                &["/etc/hosts", "/etc/passwd", "/etc/group", "/etc/os-release"],
            ),
            (
                Wanted {
                    accounts: keys.clone(),
                    ..Default::default()
                },
                &["/etc/hosts", "/etc/passwd"],
            ),
            (
                Wanted {
                    accounts: keys.clone(),
                    account_files: true,
                    ..Default::default()
                },
                &["/etc/hosts", "/etc/passwd", "/etc/group"],
            ),
        ];
        for (want, reads) in table {
            read_log::take();
            let f = Facts::gather(&root, want).unwrap();
            assert_eq!(read_log::take(), *reads, "{want:?}");
            assert_eq!(f.passwd.is_some(), want.account_files, "{want:?}");
            assert_eq!(
                f.accounts.passwd.is_some(),
                want.accounts.is_some(),
                "{want:?}"
            );
            assert_eq!(f.os_id == "debian", want.os, "{want:?}");
        }
    }

    /// The accounts planner's databases share `/etc/passwd`, `/etc/group` and
    /// `os-release` with the other facts: each read once, the text the same bytes, invalid
    /// UTF-8 refused as when it is read as text only; the homes it names are inspected.
    #[test]
    fn the_accounts_databases_share_the_files_read_once() {
        let (dir, root) = scratch_root_with_etc(&[
            ("passwd", "root:x:0:0:root:/root:/bin/sh\n"),
            ("group", "root:x:0:\n"),
            ("os-release", "ID=debian\n"),
        ]);
        std::fs::create_dir_all(dir.path().join("srv/u")).unwrap();
        let db = Wanted {
            accounts_db: Some(AccountsDbWanted {
                salts: 2,
                homes: std::sync::Arc::new(|_| vec!["/srv/u".to_string()]),
            }),
            account_files: true,
            os: true,
            ..Default::default()
        };
        read_log::take();
        let f = Facts::gather(&root, &db).unwrap();
        let reads = read_log::take();
        for file in ["/etc/passwd", "/etc/group", "/etc/os-release"] {
            assert_eq!(reads.iter().filter(|r| *r == file).count(), 1, "{reads:?}");
        }
        let a = f.accounts_db.unwrap();
        assert_eq!(f.passwd.unwrap().as_bytes(), a.passwd.unwrap().contents);
        assert_eq!(f.group.unwrap().as_bytes(), a.group.unwrap().contents);
        assert_eq!(a.os_release.as_deref(), Some("ID=debian\n"));
        assert_eq!(f.os_id, "debian");
        assert_eq!(a.entropy.len(), 2);
        assert_eq!(
            a.homes.keys().collect::<Vec<_>>(),
            ["/srv", "/srv/u"],
            "{:?}",
            a.homes
        );
        assert_eq!(a.homes["/srv/u"].home, accounts::PathState::Dir);

        std::fs::write(
            dir.path().join("etc/passwd"),
            b"r\xffoot:x:0:0::/root:/bin/sh\n",
        )
        .unwrap();
        let text_only = Wanted {
            account_files: true,
            ..Default::default()
        };
        let e1 = Facts::gather(&root, &text_only).unwrap_err();
        let e2 = Facts::gather(&root, &db).unwrap_err();
        assert_eq!(format!("{e1:#}"), format!("{e2:#}"));
        assert!(
            format!("{e2:#}").contains("/etc/passwd is not valid UTF-8"),
            "{e2:#}"
        );
    }

    #[test]
    fn a_union_asks_for_what_either_asks_for() {
        let a = Wanted {
            zones: ["UTC".to_string()].into(),
            adjtime: true,
            accounts: Some(AccountsWanted {
                password: true,
                ..Default::default()
            }),
            ..Default::default()
        };
        let b = Wanted {
            zones: ["Europe/Berlin".to_string()].into(),
            account_files: true,
            programs: ["chronyd".to_string()].into(),
            accounts: Some(AccountsWanted {
                ssh_user: Some("ubuntu".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let u = a.clone().union(b.clone());
        assert_eq!(u.zones.len(), 2);
        assert!(u.adjtime && u.account_files && u.programs.contains("chronyd"));
        assert_eq!(
            u.accounts,
            Some(AccountsWanted {
                password: true,
                salt: false,
                ssh_user: Some("ubuntu".into()),
            })
        );
        assert_eq!(b.union(a), u);
    }
}

/// In tests, the files [`Facts::gather`] read as text, in order (a plan that gathers its
/// facts once reads each once).
#[cfg(test)]
pub(crate) mod read_log {
    use std::cell::RefCell;

    thread_local! {
        static READ: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    /// Notes that `path` is read.
    pub(crate) fn note(path: &str) {
        READ.with(|r| r.borrow_mut().push(path.to_string()));
    }

    /// The paths read on this thread since the last call, and forgets them.
    pub(crate) fn take() -> Vec<String> {
        READ.with(|r| std::mem::take(&mut *r.borrow_mut()))
    }
}

/// A scratch root holding `files` (paths under `/etc`, with their text), for the tests
/// of what facts are read.
#[cfg(test)]
pub(crate) fn scratch_root_with_etc(files: &[(&str, &str)]) -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    let etc = dir.path().join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    for (name, text) in files {
        std::fs::write(etc.join(name), text).unwrap();
    }
    let root = Root::new(dir.path()).unwrap();
    (dir, root)
}

#[cfg(not(test))]
mod read_log {
    /// Nothing outside tests.
    #[inline(always)]
    pub(super) fn note(_: &str) {}
}
