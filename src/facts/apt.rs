//! What the `apt` module needs to know about the root: the release codename, the dpkg
//! architecture, the apt files it appends to, replaces or removes, and which mirror
//! candidates resolve.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Result;

use super::files::{current, Current};
use crate::root::Root;

/// The release when the root names none (cloud-init's value when `lsb_release` fails).
pub(crate) const UNAVAILABLE: &str = "UNAVAILABLE";

/// What planning needs to know about the root.
#[derive(Debug, Clone, Default)]
pub struct AptFacts {
    /// The release codename (`VERSION_CODENAME`), or [`UNAVAILABLE`].
    pub codename: String,
    /// The dpkg architecture.
    pub arch: String,
    /// What each file the module appends to, replaces or removes holds now.
    pub files: BTreeMap<String, Current>,
    /// The mirror URLs (`search`, `search_dns` candidates) whose host resolved.
    pub resolvable: BTreeSet<String>,
}

/// What the apt facts are asked for, as plain data the cloud-config side computes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AptWanted {
    /// The files to read (the module's own, the `sources` entries').
    pub files: BTreeSet<String>,
    /// The directory of the distribution's deb822 file (`<dir>/<ID>.sources`, read too).
    pub deb822_dir: String,
    /// The `primary` and `security` lists whose mirror is searched for (only when the
    /// sources list is rewritten): each kind (`mirror`, `security-mirror`) and its entries.
    pub searches: Vec<(String, Vec<MirrorChoice>)>,
    /// The host's FQDN, whose domain the `search_dns` candidates try first.
    pub fqdn: Option<String>,
}

/// One `primary` or `security` entry, as far as finding its mirror goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MirrorChoice {
    /// The dpkg architectures it is for (`default` for any other).
    pub arches: Vec<String>,
    /// It names its mirror (nothing to search).
    pub has_uri: bool,
    /// Mirrors to use, the first whose host resolves.
    pub search: Vec<String>,
    /// Look for `<distro>-mirror` host names in DNS.
    pub search_dns: bool,
}

/// The dpkg architecture of this machine (the root is the machine being customized).
fn machine_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "x86" => "i386",
        "aarch64" => "arm64",
        "arm" => "armhf",
        "powerpc64" => "ppc64el",
        "s390x" => "s390x",
        "riscv64" => "riscv64",
        other => other,
    }
}

/// The entry for `arch` among `list` (each entry's architectures by `arches`): the first
/// listing it, else the last listing `default`.
pub(crate) fn pick<'a, T>(
    list: &'a [T],
    arch: &str,
    arches: impl Fn(&T) -> &[String],
) -> Option<&'a T> {
    list.iter()
        .find(|m| arches(m).iter().any(|a| a == arch))
        .or_else(|| {
            list.iter()
                .rev()
                .find(|m| arches(m).iter().any(|a| a == "default"))
        })
}

/// The `search_dns` candidates for `kind` (`mirror` or `security-mirror`).
pub(crate) fn dns_candidates(distro: &str, kind: &str, fqdn: Option<&str>) -> Vec<String> {
    let mut domains = Vec::new();
    if let Some(domain) = fqdn.and_then(|f| f.split_once('.')).map(|(_, d)| d) {
        domains.push(format!(".{domain}"));
    }
    domains.push(".localdomain".into());
    domains.push(String::new());
    domains
        .iter()
        .map(|d| format!("http://{distro}-{kind}{d}/{distro}"))
        .collect()
}

/// Whether the host of `url` resolves (cloud-init's `is_resolvable_url`), asked of the
/// running system's resolver through `getent ahosts` (bounded to 10 s). Not through
/// glibc's resolver in this process: the portable binary is static, and a static glibc
/// must not load the running system's NSS modules. On a root that is not the running
/// system nothing resolves: its own box has no network.
fn resolves(root: &Root, url: &str) -> bool {
    if root.path() != Path::new("/") {
        return false;
    }
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    // The port, and the brackets of an IPv6 address, are not the host.
    let host = match host.strip_prefix('[') {
        Some(h) => h.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    if host.is_empty() || host.starts_with('-') {
        return false;
    }
    let cmd = crate::process::Cmd::new(
        "getent",
        &["ahosts", host],
        std::time::Duration::from_secs(10),
    );
    let stop = std::sync::atomic::AtomicBool::new(false);
    crate::process::run(&cmd, crate::process::Output::Bytes(4096), &stop)
        .is_ok_and(|f| f.success() && !f.stdout.is_empty())
}

/// Reads what `want` asks of `root`; `os_release` is the root's `/etc/os-release` text
/// and `os_id` its `ID`.
pub(crate) fn gather(
    root: &Root,
    want: &AptWanted,
    os_release: &str,
    os_id: &str,
) -> Result<AptFacts> {
    let codename = os_release
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .map(|v| v.trim().trim_matches(['"', '\'']).to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| UNAVAILABLE.to_string());
    let arch = root
        .read_text(Path::new("/var/lib/dpkg/arch"))
        .ok()
        .flatten()
        .and_then(|t| t.lines().next().map(|l| l.trim().to_string()))
        .filter(|a| !a.is_empty())
        .unwrap_or_else(|| machine_arch().to_string());
    let mut paths = want.files.clone();
    paths.insert(format!("{}/{os_id}.sources", want.deb822_dir));
    let mut files = BTreeMap::new();
    for p in paths {
        let (now, _) = current(root, &p)?;
        files.insert(p, now);
    }
    let mut resolvable = BTreeSet::new();
    for (kind, list) in &want.searches {
        if let Some(m) = pick(list, &arch, |m| &m.arches).filter(|m| !m.has_uri) {
            let mut urls = m.search.clone();
            if m.search_dns {
                urls.extend(dns_candidates(os_id, kind, want.fqdn.as_deref()));
            }
            // The first that resolves is taken; the rest need no look-up.
            if let Some(u) = urls.into_iter().find(|u| resolves(root, u)) {
                resolvable.insert(u);
            }
        }
    }
    Ok(AptFacts {
        codename,
        arch,
        files,
        resolvable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mirror host is never resolved for another root (its box has no network, and the
    /// static binary must not resolve through glibc's NSS): nothing resolves there.
    #[test]
    fn nothing_resolves_for_another_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        for url in [
            "http://localhost/debian",
            "http://[::1]:80/",
            "http://127.0.0.1/",
        ] {
            assert!(!resolves(&root, url), "{url}");
        }
    }

    #[test]
    fn dns_candidates_try_the_domain_first() {
        assert_eq!(
            dns_candidates("debian", "mirror", Some("vm.corp.example")),
            [
                "http://debian-mirror.corp.example/debian",
                "http://debian-mirror.localdomain/debian",
                "http://debian-mirror/debian"
            ]
        );
    }
}
