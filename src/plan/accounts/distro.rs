//! The `default` user of `users:`: the root's distro (from its `os-release`) picks the
//! name, gecos, groups, shell and sudo rule that cloud-init's `config/cloud.cfg.tmpl`
//! gives that distro's `system_info.default_user`.

use super::request::{AbsPath, Gecos, GroupName, SudoRule, UserRequest};
use crate::model::UserName;

/// cloud-init's variant for an `os-release` `ID` (then each `ID_LIKE`), and the unknown
/// fallback (`ubuntu` with the "unknown" variant's settings) when none is known.
fn variant(os_release: &str) -> &'static str {
    let value = |key: &str| -> Vec<String> {
        os_release
            .lines()
            .filter_map(|l| l.trim().strip_prefix(key)?.strip_prefix('='))
            .flat_map(|v| {
                v.trim()
                    .trim_matches(|c| c == '"' || c == '\'')
                    .split_whitespace()
                    .map(str::to_ascii_lowercase)
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let known = |id: &str| -> Option<&'static str> {
        Some(match id {
            "debian" => "debian",
            "ubuntu" => "ubuntu",
            "rhel" => "rhel",
            "centos" => "centos",
            "rocky" => "rocky",
            "almalinux" => "almalinux",
            "fedora" => "fedora",
            "amzn" => "amazon",
            "sles" | "sled" | "opensuse" | "opensuse-leap" | "opensuse-tumbleweed" | "suse" => {
                "suse"
            }
            "arch" => "arch",
            "photon" => "photon",
            "alpine" => "alpine",
            "raspbian" => "raspberry-pi-os",
            _ => return None,
        })
    };
    value("ID")
        .iter()
        .chain(value("ID_LIKE").iter())
        .find_map(|id| known(id))
        .unwrap_or("unknown")
}

/// The default user of a root with this `os-release` text (`None`: no os-release, the
/// "unknown" variant).
pub(crate) fn default_user(os_release: Option<&str>) -> UserRequest {
    let v = variant(os_release.unwrap_or(""));
    let is_rhel = matches!(v, "rhel" | "centos" | "rocky" | "almalinux");
    let name = match v {
        "amazon" => "ec2-user",
        "centos" | "rhel" => "cloud-user",
        "raspberry-pi-os" => "pi",
        "unknown" => "ubuntu",
        other => other,
    };
    let gecos = match v {
        "amazon" => "EC2 Default User".to_string(),
        "centos" | "rhel" => "Cloud User".to_string(),
        "debian" => "Debian".to_string(),
        "photon" => "PhotonOS".to_string(),
        "raspberry-pi-os" => "Raspberry Pi OS".to_string(),
        "ubuntu" | "unknown" => "Ubuntu".to_string(),
        other => format!("{other} Cloud User"),
    };
    let groups: &[&str] = match v {
        "alpine" => &["adm", "wheel"],
        "arch" => &["wheel", "users"],
        "debian" => &[
            "adm", "audio", "cdrom", "dialout", "dip", "floppy", "netdev", "plugdev", "sudo",
            "video",
        ],
        "photon" => &["wheel"],
        "raspberry-pi-os" => &[
            "adm", "dialout", "cdrom", "audio", "users", "sudo", "video", "games", "plugdev",
            "input", "gpio", "spi", "i2c", "netdev", "render", "lpadmin",
        ],
        "suse" => &["cdrom", "users"],
        "ubuntu" | "unknown" => &["adm", "cdrom", "dip", "lxd", "sudo"],
        _ if is_rhel => &["adm", "systemd-journal"],
        _ => &["wheel", "adm", "systemd-journal"],
    };
    let shell = if v == "alpine" {
        "/bin/ash"
    } else {
        "/bin/bash"
    };
    let mut user = UserRequest::named(UserName::parse(name).expect("a valid built-in name"));
    user.gecos = Some(Gecos::parse(&gecos).expect("a valid built-in gecos"));
    user.groups = groups
        .iter()
        .map(|g| GroupName::parse(g).expect("a valid built-in group"))
        .collect();
    user.sudo = vec![SudoRule::parse("ALL=(ALL) NOPASSWD:ALL").expect("a valid built-in rule")];
    user.shell = Some(AbsPath::parse(shell, "shell").expect("a valid built-in shell"));
    user.lock_passwd = true;
    user.given = vec!["name", "gecos", "groups", "sudo", "shell", "lock_passwd"];
    user
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_user_per_distro() {
        let table: &[(&str, &str, &str, usize)] = &[
            ("ID=debian\n", "debian", "Debian", 10),
            ("ID=ubuntu\nID_LIKE=debian\n", "ubuntu", "Ubuntu", 5),
            (
                "ID=\"rhel\"\nID_LIKE=\"fedora\"\n",
                "cloud-user",
                "Cloud User",
                2,
            ),
            ("ID=\"centos\"\n", "cloud-user", "Cloud User", 2),
            (
                "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n",
                "rocky",
                "rocky Cloud User",
                2,
            ),
            ("ID=fedora\n", "fedora", "fedora Cloud User", 3),
            ("ID=\"sles\"\n", "suse", "suse Cloud User", 2),
            (
                "ID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\n",
                "suse",
                "suse Cloud User",
                2,
            ),
            (
                "ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n",
                "ubuntu",
                "Ubuntu",
                5,
            ),
            ("ID=plan9\n", "ubuntu", "Ubuntu", 5),
            ("", "ubuntu", "Ubuntu", 5),
        ];
        for (text, name, gecos, groups) in table {
            let u = default_user(Some(text));
            assert_eq!(u.name.as_str(), *name, "{text:?}");
            assert_eq!(u.gecos.as_ref().unwrap().as_str(), *gecos, "{text:?}");
            assert_eq!(u.groups.len(), *groups, "{text:?}");
            assert_eq!(u.sudo[0].as_str(), "ALL=(ALL) NOPASSWD:ALL");
            assert_eq!(u.shell.as_ref().unwrap().as_str(), "/bin/bash");
            assert!(u.lock_passwd);
        }
        assert_eq!(default_user(None).name.as_str(), "ubuntu");
    }
}
