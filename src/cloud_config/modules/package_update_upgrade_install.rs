//! `packages` (names and `[name, version]` pairs), `package_update`, `package_upgrade`,
//! `package_reboot_if_required` (and their deprecated `apt_` spellings, any true
//! meaning true, as cloud-init ORs them).
//!
//! `packages`, `package_update`, `package_upgrade` (cloud-init's
//! `cc_package_update_upgrade_install`): the package manager the root has — apt-get,
//! dnf, yum or zypper —, non-interactive, with the options and version spellings
//! cloud-init's distro classes use: refresh the sources when anything is to be installed
//! or upgraded, upgrade, then install.

use crate::cloud_config::apply::driver::{absent, failed, from_end, ModuleOutcome, Step};
use crate::cloud_config::apply::exec::Program;
use crate::cloud_config::apply::exec::{self, RunEnd};
use crate::cloud_config::apply::preview::Look;
use crate::cloud_config::modules::power_state_change::{
    run_power_state, Condition, PowerEnd, PowerMode, PowerState,
};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, Reader, Severity};
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;
use crate::model::quote;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// Most packages.
pub(crate) const MAX_PACKAGES: usize = 1024;

/// One package to install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Package {
    /// Its name (an architecture qualifier such as `:amd64` allowed).
    pub name: String,
    /// The version asked for, if any.
    pub version: Option<String>,
}

/// A package name or version no package manager could take as an option or as two
/// words: starts with a letter or digit, then letters, digits and `+ . _ - : ~`.
fn word_ok(s: &str, extra: &[u8]) -> bool {
    !s.is_empty()
        && s.len() <= 256
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+._-".contains(&b) || extra.contains(&b))
}

fn word(r: &mut Reader, at: &str, node: &Node, what: &str, extra: &[u8]) -> Option<String> {
    let s = match &node.value {
        Value::Str(s) => s.clone(),
        Value::Int(n) if what == "version" => n.to_string(),
        Value::Float(f) if what == "version" => f.to_string(),
        _ => {
            r.wrong_type(node, at, &format!("a package {what} (a string)"));
            return None;
        }
    };
    if word_ok(&s, extra) {
        Some(s)
    } else {
        r.error(node, at, format!("{} is not a package {what}; it starts with a letter or digit and holds letters, digits and + . _ - :", quote(&s)));
        None
    }
}

/// `packages`.
pub(crate) fn packages(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(items) = r.list(node, key, MAX_PACKAGES) else {
        return;
    };
    for (i, item) in items.iter().enumerate() {
        let at = index(key, i);
        match &item.value {
            Value::Str(_) => {
                if let Some(name) = word(r, &at, item, "name", b":*") {
                    cfg.packages.push(Package {
                        name,
                        version: None,
                    });
                }
            }
            Value::Seq(pair) if pair.len() == 2 => {
                let name = word(r, &index(&at, 0), &pair[0], "name", b":");
                let version = word(r, &index(&at, 1), &pair[1], "version", b":~");
                if let (Some(name), Some(version)) = (name, version) {
                    cfg.packages.push(Package {
                        name,
                        version: Some(version),
                    });
                }
            }
            Value::Seq(_) => r.error(item, &at, "a list entry is [name, version]: two entries"),
            Value::Map(_) => r.report(
                Severity::Unknown,
                item,
                &at,
                "package-manager lists (apt:, snap:) are not implemented; list the names directly",
            ),
            _ => r.wrong_type(item, &at, "a package name or [name, version]"),
        }
    }
}

fn flag(r: &mut Reader, key: &str, node: &Node, field: &mut bool) {
    if let Some(rest) = key.strip_prefix("apt_") {
        r.report(
            Severity::Warning,
            node,
            key,
            format!("deprecated (cloud-init 22.2); write package_{rest}"),
        );
    }
    if let Some(b) = r.bool(node, key) {
        *field |= b;
    }
}

/// `package_update` / `apt_update`.
pub(crate) fn update(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    flag(r, key, node, &mut cfg.package_update);
}

/// `package_upgrade` / `apt_upgrade`.
pub(crate) fn upgrade(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    flag(r, key, node, &mut cfg.package_upgrade);
}

/// `package_reboot_if_required` / `apt_reboot_if_required`.
pub(crate) fn reboot_if_required(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    flag(r, key, node, &mut cfg.package_reboot_if_required);
}

/// A package manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Manager {
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
    pub(crate) fn program(self) -> &'static str {
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
    pub(crate) fn spell(self, p: &Package) -> String {
        match (&p.version, self) {
            (None, _) => p.name.clone(),
            (Some(v), Manager::Apt | Manager::Zypper) => format!("{}={v}", p.name),
            (Some(v), Manager::Dnf | Manager::Yum) => format!("{}-{v}", p.name),
        }
    }
}

/// The manager the root has (the first of apt-get, dnf, yum, zypper found).
pub(crate) fn detect(facts: &Facts) -> Option<Manager> {
    [Manager::Apt, Manager::Dnf, Manager::Yum, Manager::Zypper]
        .into_iter()
        .find(|m| facts.has(m.program()))
}

/// Whether the document asks the package module for anything.
pub(crate) fn wanted(cfg: &CloudConfig) -> bool {
    cfg.package_update || cfg.package_upgrade || !cfg.packages.is_empty()
}

/// The argument lists (after the program) for `cfg`, in order.
pub(crate) fn command_lines(m: Manager, cfg: &CloudConfig) -> Vec<Vec<String>> {
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
pub(crate) fn programs_of<'a>(
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

/// The package managers it looks for, when it has work.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if wanted(cfg) {
        &["apt-get", "dnf", "yum", "zypper"]
    } else {
        &[]
    }
}

/// Updates, upgrades and installs with the root's package manager, then reboots if
/// asked and the manager says one is needed.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    let (ctx, cfg, cc) = (s.ctx, s.cfg, s.cc);
    if !wanted(cfg) {
        return absent("packages, package_update or package_upgrade");
    }
    let Some(m) = detect(cc) else {
        return failed(
            "packages: the root has no package manager vmcust knows (apt-get, dnf, yum, zypper)",
        );
    };
    let path = cc.programs[m.program()].clone();
    let programs = programs_of(m, &path, cfg, ctx.package_timeout);
    if let Err(o) = s.start() {
        return o;
    }
    let end = exec::run_all(&ctx.root, &programs, ctx.stop);
    let mut note = format!("{} command(s) with {}", programs.len(), m.program());
    if end == RunEnd::Succeeded
        && cfg.package_reboot_if_required
        && (cfg.package_upgrade || !cfg.packages.is_empty())
        && ctx.root.is_file(Path::new("/var/run/reboot-required"))
    {
        let reboot = PowerState {
            mode: PowerMode::Reboot,
            delay_minutes: 0,
            message: Some("package_reboot_if_required".into()),
            timeout: 30,
            condition: Condition::Always(true),
        };
        match run_power_state(&ctx.root, &reboot, cc, ctx.stop) {
            PowerEnd::Scheduled(how) => note.push_str(&format!("; reboot scheduled: {how}")),
            PowerEnd::NotNow(why) => note.push_str(&format!("; no reboot: {why}")),
            PowerEnd::End(e) => return from_end(e, note),
        }
    }
    from_end(end, note)
}

/// The package manager's commands.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    if !wanted(l.cfg) {
        return vec!["nothing: no packages, package_update or package_upgrade".into()];
    }
    match detect(l.facts) {
        None => vec!["fails: the root has no apt-get, dnf, yum or zypper".into()],
        Some(m) => command_lines(m, l.cfg)
            .iter()
            .map(|c| format!("run: {} {}", m.program(), c.join(" ")))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    #[test]
    fn packages_good_and_hostile() {
        let (cfg, p) = document::from_text("packages: [nginx, [libc6, 2.36-9], 'python3-*', [foo, 1.2]]\napt_update: true\npackage_update: false\n");
        assert!(p.iter().all(|p| p.severity == Severity::Warning), "{p:?}");
        let got: Vec<(&str, Option<&str>)> = cfg
            .packages
            .iter()
            .map(|p| (p.name.as_str(), p.version.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("nginx", None),
                ("libc6", Some("2.36-9")),
                ("python3-*", None),
                ("foo", Some("1.2"))
            ]
        );
        assert!(cfg.package_update);
        let table: &[(&str, &str)] = &[
            ("packages: ['--force-yes']", "not a package name"),
            ("packages: ['a b']", "not a package name"),
            ("packages: [[a]]", "two entries"),
            ("packages: [[a, '-1']]", "packages[0][1]"),
            ("packages: [5]", "a package name or [name, version]"),
            ("packages: nginx", "is a string; write a list"),
            ("package_upgrade: 'yes'", "write true or false"),
        ];
        super::super::test_support::assert_refused(table);
    }

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
        let mut f = Facts::default();
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
