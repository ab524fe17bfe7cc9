//! `packages`, `package_update`, `package_upgrade` (cloud-init's
//! `cc_package_update_upgrade_install`): the package manager the root has — apt-get,
//! dnf, yum or zypper —, non-interactive, with the options and version spellings
//! cloud-init's distro classes use: refresh the sources when anything is to be installed
//! or upgraded, upgrade, then install.

use std::time::Duration;

use crate::cloud_config::packages::Package;
use crate::cloud_config::CloudConfig;

use super::exec::Program;
use super::facts::CcFacts;

/// A package manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    /// Debian's apt-get.
    Apt,
    /// dnf (RHEL 8 and later, Fedora).
    Dnf,
    /// yum (RHEL 7).
    Yum,
    /// SUSE's zypper.
    Zypper,
}

impl Manager {
    /// Its program's name.
    pub fn program(self) -> &'static str {
        match self {
            Manager::Apt => "apt-get",
            Manager::Dnf => "dnf",
            Manager::Yum => "yum",
            Manager::Zypper => "zypper",
        }
    }

    /// The options every command of it gets.
    fn prefix(self) -> &'static [&'static str] {
        match self {
            Manager::Apt => &[
                "--option=Dpkg::Options::=--force-confold",
                "--option=Dpkg::options::=--force-unsafe-io",
                "--assume-yes",
                "--quiet",
            ],
            Manager::Dnf => &["-y"],
            Manager::Yum => &["-t", "-y"],
            Manager::Zypper => &["--non-interactive"],
        }
    }

    /// A package as an install argument: `name=version` (apt, zypper), `name-version`
    /// (dnf, yum).
    pub fn spell(self, p: &Package) -> String {
        match (&p.version, self) {
            (None, _) => p.name.clone(),
            (Some(v), Manager::Apt | Manager::Zypper) => format!("{}={v}", p.name),
            (Some(v), Manager::Dnf | Manager::Yum) => format!("{}-{v}", p.name),
        }
    }
}

/// The manager the root has (the first of apt-get, dnf, yum, zypper found).
pub fn detect(facts: &CcFacts) -> Option<Manager> {
    [Manager::Apt, Manager::Dnf, Manager::Yum, Manager::Zypper]
        .into_iter()
        .find(|m| facts.has(m.program()))
}

/// Whether the document asks the package module for anything.
pub fn wanted(cfg: &CloudConfig) -> bool {
    cfg.package_update || cfg.package_upgrade || !cfg.packages.is_empty()
}

/// The argument lists (after the program) for `cfg`, in order.
pub fn command_lines(m: Manager, cfg: &CloudConfig) -> Vec<Vec<String>> {
    let cmd = |words: &[&str], extra: Vec<String>| -> Vec<String> {
        m.prefix()
            .iter()
            .chain(words)
            .map(|s| s.to_string())
            .chain(extra)
            .collect()
    };
    let mut out = Vec::new();
    if wanted(cfg) {
        out.push(cmd(
            &[match m {
                Manager::Apt => "update",
                Manager::Dnf | Manager::Yum => "makecache",
                Manager::Zypper => "refresh",
            }],
            Vec::new(),
        ));
    }
    if cfg.package_upgrade {
        out.push(cmd(
            &[match m {
                Manager::Apt => "dist-upgrade",
                Manager::Dnf => "upgrade",
                Manager::Yum | Manager::Zypper => "update",
            }],
            Vec::new(),
        ));
    }
    if !cfg.packages.is_empty() {
        let words: &[&str] = match m {
            Manager::Zypper => &["install", "--auto-agree-with-licenses"],
            _ => &["install"],
        };
        out.push(cmd(
            words,
            cfg.packages.iter().map(|p| m.spell(p)).collect(),
        ));
    }
    out
}

/// The programs to run for `cfg` with manager `m` found at `path` (inside the root).
pub fn programs<'a>(
    m: Manager,
    path: &'a str,
    cfg: &CloudConfig,
    timeout: Duration,
) -> Vec<Program<'a>> {
    let env = match m {
        Manager::Apt => vec![("DEBIAN_FRONTEND".to_string(), "noninteractive".to_string())],
        _ => Vec::new(),
    };
    command_lines(m, cfg)
        .into_iter()
        .map(|args| Program {
            module: "packages",
            program: path,
            args,
            env: env.clone(),
            timeout,
            hide_args: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    #[test]
    fn command_lines_per_manager() {
        let (cfg, _) =
            document::from_text("packages: [nginx, [libc6, 2.36-9]]\npackage_upgrade: true\n");
        let table: &[(Manager, &[&str])] = &[
            (
                Manager::Apt,
                &[
                    "--option=Dpkg::Options::=--force-confold --option=Dpkg::options::=--force-unsafe-io --assume-yes --quiet update",
                    "--option=Dpkg::Options::=--force-confold --option=Dpkg::options::=--force-unsafe-io --assume-yes --quiet dist-upgrade",
                    "--option=Dpkg::Options::=--force-confold --option=Dpkg::options::=--force-unsafe-io --assume-yes --quiet install nginx libc6=2.36-9",
                ],
            ),
            (Manager::Dnf, &["-y makecache", "-y upgrade", "-y install nginx libc6-2.36-9"]),
            (Manager::Yum, &["-t -y makecache", "-t -y update", "-t -y install nginx libc6-2.36-9"]),
            (
                Manager::Zypper,
                &[
                    "--non-interactive refresh",
                    "--non-interactive update",
                    "--non-interactive install --auto-agree-with-licenses nginx libc6=2.36-9",
                ],
            ),
        ];
        for (m, want) in table {
            let got: Vec<String> = command_lines(*m, &cfg)
                .iter()
                .map(|c| c.join(" "))
                .collect();
            assert_eq!(got, *want, "{m:?}");
        }
        let (cfg, _) = document::from_text("package_update: true");
        assert_eq!(command_lines(Manager::Dnf, &cfg), [["-y", "makecache"]]);
        let (cfg, _) = document::from_text("{}");
        assert!(command_lines(Manager::Apt, &cfg).is_empty());
    }

    #[test]
    fn detection_prefers_apt_then_dnf() {
        let mut f = CcFacts::default();
        assert_eq!(detect(&f), None);
        f.programs.insert("yum".into(), "/usr/bin/yum".into());
        assert_eq!(detect(&f), Some(Manager::Yum));
        f.programs.insert("dnf".into(), "/usr/bin/dnf".into());
        assert_eq!(detect(&f), Some(Manager::Dnf));
        f.programs
            .insert("apt-get".into(), "/usr/bin/apt-get".into());
        assert_eq!(detect(&f), Some(Manager::Apt));
    }
}
