//! The root's distribution: `ID` of `/etc/os-release` and the family cloud-init's distro
//! classes put it in.

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
}
