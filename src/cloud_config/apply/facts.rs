//! Facts about the root the cloud-config planners need, read in one place so that the
//! planners stay pure: the distribution, `/etc/passwd` and `/etc/group`, the files
//! `write_files` appends to, and which of the programs the modules use are installed.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cloud_config::CloudConfig;
use crate::facts::{RootFacts, ZONEINFO_DIR};
use crate::process::PATH;
use crate::root::{Existing, Root};

/// The distribution family, as cloud-init's distro classes split them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Family {
    /// Debian, Ubuntu and their derivatives.
    Debian,
    /// RHEL, CentOS, Fedora, Rocky, Alma, Oracle.
    Rhel,
    /// SLES, openSUSE.
    Suse,
    /// Anything else.
    #[default]
    Other,
}

/// What a file `write_files` appends to is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    /// Nothing there.
    Missing,
    /// A regular file with these contents.
    File(Vec<u8>),
    /// A directory, link or other non-file.
    NotAFile,
}

/// What the cloud-config planners may know about the root.
#[derive(Debug, Clone, Default)]
pub struct CcFacts {
    /// The engine's own facts (hosts, time zones, Debian family), for the identity
    /// planner this reuses.
    pub engine: RootFacts,
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
    /// What each `write_files` path with `append: true` holds now.
    pub appended: BTreeMap<String, Current>,
    /// Programs found in the root: name → path inside the root.
    pub programs: BTreeMap<String, String>,
    /// What the files the repository and locale modules look at hold now (the
    /// repo files they never overwrite, the files they edit), by path inside the root.
    pub files: BTreeMap<String, Current>,
    /// The permission bits of those of [`CcFacts::files`] that are regular files (an
    /// edited file keeps its mode).
    pub modes: BTreeMap<String, u32>,
    /// What `apt` needs (empty without an `apt` key).
    pub apt: crate::cloud_config::modules::apt_configure::AptFacts,
    /// What `mounts` needs (fstab, mount points, devices, swap), when the document has
    /// `mounts` or `swap`.
    pub mounts: Option<crate::cloud_config::modules::mounts::MountFacts>,
    /// What `disk_setup` and `fs_setup` need (the devices they name, probed on the
    /// running system), when the document has them.
    pub disk_setup: Option<crate::cloud_config::modules::disk_setup::DiskSetupFacts>,
}

/// The programs (by name on the fixed `PATH`) the modules of `cfg` may run or look for,
/// as each module's row in the module table says.
pub(crate) fn wanted_programs(cfg: &CloudConfig) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = crate::cloud_config::modules::TABLE
        .iter()
        .flat_map(|m| (m.programs)(cfg).iter().copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The files the repository and locale modules of `cfg` look at.
fn looked_at(cfg: &CloudConfig) -> Vec<String> {
    use crate::cloud_config::modules::{locale, ssh_keys, yum_add_repo, zypper_add_repo};
    let mut out = yum_add_repo::looked_at(cfg);
    out.extend(ssh_keys::looked_at(cfg));
    out.extend(zypper_add_repo::looked_at(cfg));
    out.extend(locale::looked_at(cfg));
    out
}

/// Where systemd keeps `systemd-timesyncd` (it is not on `PATH`).
pub(crate) const TIMESYNCD: &[&str] = &[
    "/lib/systemd/systemd-timesyncd",
    "/usr/lib/systemd/systemd-timesyncd",
];

impl CcFacts {
    /// Reads what planning `cfg` needs from `root`.
    pub fn gather(root: &Root, cfg: &CloudConfig) -> Result<CcFacts> {
        let text = |p: &str| {
            root.read_text(Path::new(p))
                .with_context(|| format!("reading {p} in {}", root.path().display()))
        };
        let os_release = text("/etc/os-release")?.unwrap_or_default();
        let (os_id, family) = family_of(&os_release, |p| root.is_file(Path::new(p)));
        let mut zones_present = std::collections::BTreeSet::new();
        if let Some(zone) = &cfg.timezone {
            if root.is_file(&Path::new(ZONEINFO_DIR).join(zone.as_str())) {
                zones_present.insert(zone.to_string());
            }
        }
        let engine = RootFacts {
            hosts: text("/etc/hosts")?,
            zones_present,
            debian_family: root.is_file(Path::new("/etc/debian_version")),
            has_etc_timezone: root.is_file(Path::new("/etc/timezone")),
            ..Default::default()
        };
        let mut appended = BTreeMap::new();
        for f in cfg.write_files.iter().filter(|f| f.append) {
            let now = match root
                .existing(Path::new(&f.path))
                .with_context(|| format!("reading {} in {}", f.path, root.path().display()))?
            {
                Existing::Missing => Current::Missing,
                Existing::File { contents, .. } => Current::File(contents),
                _ => Current::NotAFile,
            };
            appended.insert(f.path.clone(), now);
        }
        let mut files = BTreeMap::new();
        let mut modes = BTreeMap::new();
        for p in looked_at(cfg) {
            let now = match root
                .existing(Path::new(&p))
                .with_context(|| format!("reading {p} in {}", root.path().display()))?
            {
                Existing::Missing => Current::Missing,
                Existing::File { contents, mode } => {
                    modes.insert(p.clone(), mode);
                    Current::File(contents)
                }
                _ => Current::NotAFile,
            };
            files.insert(p, now);
        }
        // Only the programs this document's modules can use: looking for all of them in
        // every PATH directory was ~200 system calls on every boot.
        let mut programs = BTreeMap::new();
        for name in wanted_programs(cfg) {
            if let Some(p) = which(root, name) {
                programs.insert(name.to_string(), p);
            }
        }
        if cfg.ntp.is_some() {
            for p in TIMESYNCD {
                if root.is_file(Path::new(p)) {
                    programs.insert("systemd-timesyncd".into(), p.to_string());
                    break;
                }
            }
        }
        let apt = crate::cloud_config::modules::apt_configure::gather(root, cfg, &os_id)?;
        Ok(CcFacts {
            apt,
            engine,
            family,
            os_id,
            passwd: text("/etc/passwd")?,
            group: text("/etc/group")?,
            appended,
            programs,
            files,
            modes,
            hostname_file: root.is_file(Path::new("/etc/hostname")),
            mounts: crate::cloud_config::modules::mounts::gather(root, cfg),
            disk_setup: crate::cloud_config::modules::disk_setup::gather(root, cfg),
        })
    }

    /// Whether the root has `program` (a name from [`wanted_programs`] or `systemd-timesyncd`).
    pub fn has(&self, program: &str) -> bool {
        self.programs.contains_key(program)
    }
}

/// The path inside the root of `name` on the fixed `PATH`, as a shell would find it.
pub(crate) fn which(root: &Root, name: &str) -> Option<String> {
    PATH.split(':')
        .map(|dir| format!("{dir}/{name}"))
        .find(|p| root.is_file(Path::new(p)))
}

/// `ID` and the family from `/etc/os-release` text, falling back to the release files
/// (`exists` says whether a path exists in the root).
pub(crate) fn family_of(os_release: &str, exists: impl Fn(&str) -> bool) -> (String, Family) {
    let field = |key: &str| {
        os_release
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches(['"', '\'']).to_ascii_lowercase())
            .unwrap_or_default()
    };
    let id = field("ID");
    let like = field("ID_LIKE");
    let words: Vec<&str> = std::iter::once(id.as_str())
        .chain(like.split_whitespace())
        .collect();
    let any = |names: &[&str]| words.iter().any(|w| names.contains(w));
    let family = if any(&["debian", "ubuntu"]) {
        Family::Debian
    } else if any(&[
        "rhel",
        "fedora",
        "centos",
        "rocky",
        "almalinux",
        "ol",
        "amzn",
    ]) {
        Family::Rhel
    } else if words
        .iter()
        .any(|w| w.starts_with("suse") || w.starts_with("opensuse") || *w == "sles")
    {
        Family::Suse
    } else if exists("/etc/debian_version") {
        Family::Debian
    } else if exists("/etc/redhat-release") {
        Family::Rhel
    } else if exists("/etc/SuSE-release") {
        Family::Suse
    } else {
        Family::Other
    };
    (id, family)
}

/// The uid of `user` in `/etc/passwd` text.
pub(crate) fn uid_of(passwd: &str, user: &str) -> Option<u32> {
    crate::facts::accounts::passwd_entries(passwd)
        .into_iter()
        .find(|e| e.name == user)
        .map(|e| e.uid)
}

/// The gid of `group` in `/etc/group` text (`name:x:gid:members`).
pub(crate) fn gid_of(group: &str, name: &str) -> Option<u32> {
    group.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 3 && f[0] == name)
            .then(|| f[2].parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_from_os_release() {
        let none = |_: &str| false;
        let table: &[(&str, &str, Family)] = &[
            ("ID=debian\n", "debian", Family::Debian),
            ("ID=ubuntu\nID_LIKE=debian\n", "ubuntu", Family::Debian),
            (
                "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n",
                "rocky",
                Family::Rhel,
            ),
            ("ID=\"sles\"\n", "sles", Family::Suse),
            (
                "ID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\n",
                "opensuse-leap",
                Family::Suse,
            ),
            ("ID=arch\n", "arch", Family::Other),
        ];
        for (text, id, fam) in table {
            assert_eq!(family_of(text, none), (id.to_string(), *fam), "{text}");
        }
        assert_eq!(
            family_of("", |p| p == "/etc/redhat-release").1,
            Family::Rhel
        );
    }

    #[test]
    fn ids_from_account_files() {
        let passwd =
            "root:x:0:0:root:/root:/bin/bash\nwww-data:x:33:33::/var/www:/usr/sbin/nologin\n";
        let group = "root:x:0:\n# c\nbad\nwww-data:x:33:\nadm:x:4:syslog\n";
        assert_eq!(uid_of(passwd, "www-data"), Some(33));
        assert_eq!(uid_of(passwd, "nobody"), None);
        assert_eq!(gid_of(group, "adm"), Some(4));
        assert_eq!(gid_of(group, "bad"), None);
        assert_eq!(gid_of(group, "wheel"), None);
    }
}
