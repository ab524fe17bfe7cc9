//! Living next to a real cloud-init: find it in the root, read whether it is configured
//! for VMware customization exactly as open-vm-tools decides it, and decide whether
//! vmcust steps aside for the IMC spec.
//!
//! open-vm-tools copies a spec into `/var/run/vmware-imc` only for a "cloud-init"
//! consumer, so when a real cloud-init is that consumer the `cust.cfg` is meant for it;
//! two engines applying the same spec would fight over the same files, NIC handshake
//! and final state (reference open-vm-tools.md §2.5–§2.7).

use std::path::{Path, PathBuf};

use crate::root::{Existing, Root};
use crate::settings::Settings;

/// Where open-vm-tools looks for cloud-init (a fixed path, no PATH search).
pub(crate) const CLOUD_INIT_BIN: &str = "/usr/bin/cloud-init";
/// cloud-init's main configuration file.
pub(crate) const CLOUD_CFG: &str = "/etc/cloud/cloud.cfg";
/// cloud-init's configuration drop-in directory.
pub(crate) const CLOUD_CFG_D: &str = "/etc/cloud/cloud.cfg.d";
/// The file that disables cloud-init entirely (cloud-init's own documented switch).
pub(crate) const CLOUD_INIT_DISABLED: &str = "/etc/cloud/cloud-init.disabled";

/// Bytes found only in the vmcust binary, so a copy of vmcust installed as
/// `/usr/bin/cloud-init` (rather than a symlink) is still recognised as the stand-in. The
/// value keeps the word an earlier release wrote into its binaries: a copy installed by
/// one must still be recognised after an upgrade (otherwise it would pass for a real
/// cloud-init and vmcust would step aside for itself).
pub const STAND_IN_MARKER: &str = "vmcust-cloud-init-persona-c3a1f7";

/// What the root's cloud-init configuration says about VMware customization, by
/// open-vm-tools' rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VmwareCustomization {
    /// `disable_vmware_customization: false` decides: the spec goes to cloud-init.
    Enabled {
        /// The file whose setting decided.
        file: PathBuf,
    },
    /// `disable_vmware_customization: true` decides.
    Disabled {
        /// The file whose setting decided.
        file: PathBuf,
    },
    /// No file sets it; tools treats this as disabled (cloud-init's default).
    Unset,
}

impl VmwareCustomization {
    /// Whether open-vm-tools would hand a (traditional) spec to cloud-init.
    pub fn enabled(&self) -> bool {
        matches!(self, VmwareCustomization::Enabled { .. })
    }
}

/// A cloud-init that is not vmcust, found in the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealCloudInit {
    /// Its VMware customization setting.
    pub vmware: VmwareCustomization,
    /// `/etc/cloud/cloud-init.disabled` exists, so it will not run at boot.
    pub disabled: bool,
}

/// Whether `/usr/bin/cloud-init` in the root is vmcust answering as cloud-init: a symlink
/// (possibly through others) to a file named `vmcust`, or a copy of the vmcust binary.
pub fn is_vmcust_stand_in(root: &Root) -> bool {
    let path = Path::new(CLOUD_INIT_BIN);
    if let Ok(Existing::Symlink(_)) = root.existing(path) {
        if let Ok(real) = root.resolve(path, true) {
            if real.file_name().is_some_and(|n| n == "vmcust") {
                return true;
            }
        }
    }
    match root.read(path) {
        Ok(Some(bytes)) => contains(&bytes, STAND_IN_MARKER.as_bytes()),
        _ => false,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Finds a real cloud-init in the root: `/usr/bin/cloud-init` exists (a dangling or
/// foreign symlink counts: it is not ours) and is not vmcust.
pub fn real_cloud_init(root: &Root) -> Option<RealCloudInit> {
    let path = Path::new(CLOUD_INIT_BIN);
    match root.existing(path) {
        Ok(Existing::Missing) | Err(_) => return None,
        Ok(_) => {}
    }
    if is_vmcust_stand_in(root) {
        return None;
    }
    Some(RealCloudInit {
        vmware: vmware_customization(root),
        disabled: root
            .existing(Path::new(CLOUD_INIT_DISABLED))
            .is_ok_and(|e| e != Existing::Missing),
    })
}

/// Reads `disable_vmware_customization` as open-vm-tools does (reference §2.6): regular
/// `*.cfg` files in `cloud.cfg.d`, sorted, examined from last to first, the first that
/// sets it decides; then `cloud.cfg`. Within a file the last matching line wins.
pub fn vmware_customization(root: &Root) -> VmwareCustomization {
    let dir = Path::new(CLOUD_CFG_D);
    let mut candidates: Vec<PathBuf> = root
        .list_dir(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|name| name.ends_with(".cfg"))
        .map(|name| dir.join(name))
        .filter(|p| root.is_file(p))
        .collect();
    candidates.reverse();
    candidates.push(PathBuf::from(CLOUD_CFG));
    for file in candidates {
        // A read error makes the file count as unset, as in tools.
        let Ok(Some(bytes)) = root.read(&file) else {
            continue;
        };
        match flag_in(&bytes) {
            Some(false) => return VmwareCustomization::Enabled { file },
            Some(true) => return VmwareCustomization::Disabled { file },
            None => {}
        }
    }
    VmwareCustomization::Unset
}

/// The value of the last line in `bytes` matching tools' extended regex
/// `^\s*disable_vmware_customization\s*:\s*(true|false)\s*(\s+#.*)?$`. Tools reads with
/// `fgets` into a 255-byte buffer, so longer lines are matched in 254-byte pieces (each
/// anchored on its own); that is reproduced so a very long line decides the same way.
pub fn flag_in(bytes: &[u8]) -> Option<bool> {
    let mut result = None;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        for piece in line.chunks(254) {
            if let Some(v) = match_flag_line(piece) {
                result = Some(v);
            }
        }
    }
    result
}

/// `\s` in glibc's POSIX regex: space, tab, newline, vertical tab, form feed, CR.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn match_flag_line(line: &[u8]) -> Option<bool> {
    let skip = |s: &[u8]| -> usize { s.iter().take_while(|&&b| is_space(b)).count() };
    let mut rest = &line[skip(line)..];
    rest = rest.strip_prefix(b"disable_vmware_customization")?;
    rest = &rest[skip(rest)..];
    rest = rest.strip_prefix(b":")?;
    rest = &rest[skip(rest)..];
    let value = if let Some(r) = rest.strip_prefix(b"true") {
        rest = r;
        true
    } else if let Some(r) = rest.strip_prefix(b"false") {
        rest = r;
        false
    } else {
        return None;
    };
    // `\s*(\s+#.*)?$`: only whitespace, or at least one whitespace then a `#` comment.
    let ws = skip(rest);
    let tail = &rest[ws..];
    if tail.is_empty() || (ws > 0 && tail[0] == b'#') {
        Some(value)
    } else {
        None
    }
}

/// Whether vmcust leaves the IMC spec to a real cloud-init, and why (a sentence for the
/// log and `vmcust status`). It does when `[cloud-init] step_aside` is on and a real,
/// not disabled, cloud-init is configured for VMware customization: tools then delivers
/// every spec to it. Independent of `[imc] enabled`.
pub fn should_step_aside(root: &Root, settings: &Settings) -> Option<String> {
    if !settings.step_aside {
        return None;
    }
    let real = real_cloud_init(root)?;
    if real.disabled {
        return None;
    }
    match &real.vmware {
        VmwareCustomization::Enabled { file } => Some(format!(
            "a real cloud-init ({CLOUD_INIT_BIN}) is installed and configured for VMware \
             customization (disable_vmware_customization: false in {}), so open-vm-tools \
             hands the spec to it and vmcust leaves /var/run/vmware-imc alone; to have vmcust \
             customize instead, set disable_vmware_customization: true for cloud-init and \
             [cloud-init] step_aside = false in /etc/vmcust/vmcust.conf",
            file.display()
        )),
        _ => None,
    }
}

/// Like [`should_step_aside`] for a spec carrying raw cloud-init data (`metadata` file):
/// tools hands those to any installed cloud-init without consulting
/// `disable_vmware_customization`, so a real, not disabled cloud-init always owns them.
pub(crate) fn should_step_aside_for_raw_data(root: &Root, settings: &Settings) -> Option<String> {
    if !settings.step_aside {
        return None;
    }
    let real = real_cloud_init(root)?;
    if real.disabled {
        return None;
    }
    Some(format!(
        "a real cloud-init ({CLOUD_INIT_BIN}) is installed and the spec carries raw cloud-init \
         data, which open-vm-tools hands to it whatever disable_vmware_customization says, so \
         vmcust leaves /var/run/vmware-imc alone; set [cloud-init] step_aside = false in \
         /etc/vmcust/vmcust.conf to have vmcust handle it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_lines_match_like_tools() {
        let cases: &[(&str, Option<bool>)] = &[
            ("disable_vmware_customization: false\n", Some(false)),
            ("disable_vmware_customization: true\n", Some(true)),
            ("  disable_vmware_customization  :  false  \n", Some(false)),
            ("\tdisable_vmware_customization:false", Some(false)),
            (
                "disable_vmware_customization: false # for vmcust\n",
                Some(false),
            ),
            ("disable_vmware_customization: false\t#x\n", Some(false)),
            ("disable_vmware_customization: false#x\n", None),
            ("disable_vmware_customization: False\n", None),
            ("disable_vmware_customization: no\n", None),
            ("disable_vmware_customization: 0\n", None),
            ("disable_vmware_customization: \"false\"\n", None),
            ("disable_vmware_customization: falsey\n", None),
            ("# disable_vmware_customization: false\n", None),
            ("xdisable_vmware_customization: false\n", None),
            ("disable_vmware_customization false\n", None),
            ("disable_vmware_customization: false\r\n", Some(false)),
            // The last matching line in a file wins.
            (
                "disable_vmware_customization: false\ndisable_vmware_customization: true\n",
                Some(true),
            ),
            (
                "disable_vmware_customization: true\nfoo: 1\ndisable_vmware_customization: false",
                Some(false),
            ),
            ("datasource_list: [VMware]\n", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(flag_in(text.as_bytes()), *want, "{text:?}");
        }
    }

    #[test]
    fn long_lines_are_matched_in_fgets_pieces() {
        // 254 bytes of padding ending a piece, then the setting alone in the next piece.
        let line = format!("{}disable_vmware_customization: false\n", "x".repeat(254));
        assert_eq!(flag_in(line.as_bytes()), Some(false));
        let line = format!("disable_vmware_customization: false{}\n", " ".repeat(300));
        assert_eq!(flag_in(line.as_bytes()), Some(false));
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        root: Root,
    }

    fn root_with(files: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        for (path, contents) in files {
            if let Some(target) = contents.strip_prefix("->") {
                root.symlink(Path::new(path), Path::new(target)).unwrap();
            } else if *contents == "<dir>" {
                std::fs::create_dir_all(root.path().join(path.trim_start_matches('/'))).unwrap();
            } else {
                root.write_file(Path::new(path), contents.as_bytes(), 0o755)
                    .unwrap();
            }
        }
        Fixture { _dir: dir, root }
    }

    const PY: &str = "#!/usr/bin/python3\nfrom cloudinit.cmd.main import main\n";
    const ON: &str = "disable_vmware_customization: false\n";
    const OFF: &str = "disable_vmware_customization: true\n";

    #[test]
    fn file_order_follows_tools() {
        use VmwareCustomization::*;
        let d = "/etc/cloud/cloud.cfg.d/";
        let cases: Vec<(Vec<(String, &str)>, VmwareCustomization)> = vec![
            (vec![], Unset),
            (
                vec![(CLOUD_CFG.into(), ON)],
                Enabled {
                    file: CLOUD_CFG.into(),
                },
            ),
            (
                vec![(CLOUD_CFG.into(), OFF)],
                Disabled {
                    file: CLOUD_CFG.into(),
                },
            ),
            // A drop-in beats cloud.cfg.
            (
                vec![(CLOUD_CFG.into(), OFF), (format!("{d}10-vmware.cfg"), ON)],
                Enabled {
                    file: format!("{d}10-vmware.cfg").into(),
                },
            ),
            // Reverse alphabetical: 99 is examined before 10.
            (
                vec![(format!("{d}10-a.cfg"), ON), (format!("{d}99-b.cfg"), OFF)],
                Disabled {
                    file: format!("{d}99-b.cfg").into(),
                },
            ),
            // A later-sorting file that does not set it does not decide.
            (
                vec![
                    (format!("{d}10-a.cfg"), ON),
                    (format!("{d}99-b.cfg"), "users: []\n"),
                ],
                Enabled {
                    file: format!("{d}10-a.cfg").into(),
                },
            ),
            // Only names ending in .cfg count.
            (
                vec![(CLOUD_CFG.into(), OFF), (format!("{d}99-b.cfg.bak"), ON)],
                Disabled {
                    file: CLOUD_CFG.into(),
                },
            ),
            // Directories named *.cfg are skipped.
            (
                vec![(CLOUD_CFG.into(), ON), (format!("{d}99-x.cfg"), "<dir>")],
                Enabled {
                    file: CLOUD_CFG.into(),
                },
            ),
            // A value tools does not understand leaves the file unset.
            (
                vec![(CLOUD_CFG.into(), "disable_vmware_customization: False\n")],
                Unset,
            ),
        ];
        for (files, want) in cases {
            let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
            let fx = root_with(&refs);
            assert_eq!(vmware_customization(&fx.root), want, "{files:?}");
        }
    }

    /// (files in the root, settings, steps aside for traditional specs, for raw data)
    type StepAsideCase<'a> = (Vec<(&'a str, &'a str)>, &'a Settings, bool, bool);

    #[test]
    fn step_aside_table() {
        let s = Settings::default();
        let no_step = Settings {
            step_aside: false,
            ..Settings::default()
        };
        let cfgd = "/etc/cloud/cloud.cfg.d/90-vmware.cfg";
        let cases: Vec<StepAsideCase> = vec![
            (vec![], &s, false, false),
            // Only the config, no binary: nothing to step aside for.
            (vec![(CLOUD_CFG, ON)], &s, false, false),
            (vec![(CLOUD_INIT_BIN, PY), (CLOUD_CFG, ON)], &s, true, true),
            (vec![(CLOUD_INIT_BIN, PY), (cfgd, ON)], &s, true, true),
            (
                vec![(CLOUD_INIT_BIN, PY), (CLOUD_CFG, OFF)],
                &s,
                false,
                true,
            ),
            (vec![(CLOUD_INIT_BIN, PY)], &s, false, true),
            (
                vec![(CLOUD_INIT_BIN, PY), (CLOUD_CFG, ON)],
                &no_step,
                false,
                false,
            ),
            (
                vec![
                    (CLOUD_INIT_BIN, PY),
                    (CLOUD_CFG, ON),
                    (CLOUD_INIT_DISABLED, ""),
                ],
                &s,
                false,
                false,
            ),
            // vmcust's own stand-in and drop-in are not a real cloud-init.
            (
                vec![
                    ("/usr/bin/vmcust", "ELF"),
                    (CLOUD_INIT_BIN, "->vmcust"),
                    (cfgd, ON),
                ],
                &s,
                false,
                false,
            ),
            (
                vec![
                    ("/usr/sbin/vmcust", "ELF"),
                    (CLOUD_INIT_BIN, "->/usr/sbin/vmcust"),
                    (cfgd, ON),
                ],
                &s,
                false,
                false,
            ),
            (
                vec![(CLOUD_INIT_BIN, STAND_IN_MARKER), (cfgd, ON)],
                &s,
                false,
                false,
            ),
            // A symlink to something else (or nothing) is someone else's cloud-init.
            (
                vec![(CLOUD_INIT_BIN, "->/opt/ci/bin/cloud-init"), (cfgd, ON)],
                &s,
                true,
                true,
            ),
        ];
        for (files, settings, trad, raw) in cases {
            let fx = root_with(&files);
            let got = should_step_aside(&fx.root, settings);
            assert_eq!(got.is_some(), trad, "{files:?} {settings:?}: {got:?}");
            if let Some(reason) = got {
                assert!(reason.contains("step_aside = false"), "{reason}");
                assert!(
                    reason.contains("disable_vmware_customization: false in /etc/cloud"),
                    "{reason}"
                );
            }
            let got = should_step_aside_for_raw_data(&fx.root, settings);
            assert_eq!(got.is_some(), raw, "raw {files:?} {settings:?}: {got:?}");
        }
    }
}
