//! `growpart`: a clone's disk grown in vCenter, the partition holding `/` (or the
//! devices named) grown to match with the root's `growpart`, on the running system only.

use serde::Serialize;

use crate::cloud_config::apply::disk::{carry_out, DiskFacts, Step};
use crate::cloud_config::apply::driver::{self, skipped, ModuleOutcome};
use crate::cloud_config::apply::preview::Look;
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader};
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;
use crate::model::quote;

/// `growpart.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GrowMode {
    /// Whichever tool the root has (the default).
    Auto,
    /// `growpart`.
    Growpart,
    /// BSD `gpart`.
    Gpart,
    /// Nothing (`off`, or the deprecated `false`).
    Off,
}

/// `growpart`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Growpart {
    /// The tool.
    pub mode: GrowMode,
    /// Mount points or block devices (default `["/"]`).
    pub devices: Vec<String>,
    /// Grow even when `/etc/growroot-disabled` exists (default false).
    pub ignore_growroot_disabled: bool,
}

/// `growpart`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(map) = r.map(node, key, &["mode", "devices", "ignore_growroot_disabled"]) else {
        return;
    };
    let mut g = Growpart {
        mode: GrowMode::Auto,
        devices: vec!["/".into()],
        ignore_growroot_disabled: false,
    };
    for (k, v) in map {
        let at = join(key, &k.text);
        match k.text.as_str() {
            "mode" => {
                g.mode = match &v.value {
                    // YAML 1.1 reads an unquoted `off` as false.
                    Value::Bool(false) => GrowMode::Off,
                    Value::Str(s) => match s.as_str() {
                        "auto" => GrowMode::Auto,
                        "growpart" => GrowMode::Growpart,
                        "gpart" => GrowMode::Gpart,
                        "off" => GrowMode::Off,
                        _ => {
                            r.error(
                                v,
                                &at,
                                format!(
                                    "{} is not a mode; write auto, growpart, gpart or 'off'",
                                    quote(s)
                                ),
                            );
                            continue;
                        }
                    },
                    _ => {
                        r.wrong_type(v, &at, "auto, growpart, gpart or 'off'");
                        continue;
                    }
                }
            }
            "devices" => {
                let Some(items) = r.list(v, &at, 64) else {
                    continue;
                };
                g.devices = items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, d)| {
                        let at = index(&at, i);
                        let s = r.line(d, &at, 4096)?;
                        if s.starts_with('/') {
                            Some(s)
                        } else {
                            r.error(
                                d,
                                &at,
                                format!("{} is not a mount point or /dev path", quote(&s)),
                            );
                            None
                        }
                    })
                    .collect();
            }
            _ => g.ignore_growroot_disabled = r.bool(v, &at).unwrap_or(false),
        }
    }
    cfg.growpart = Some(g);
}

/// `growpart` (unset: cloud-init's default, `auto` on `/`).
pub(crate) fn plan_growpart(g: Option<&Growpart>, cc: &Facts, disk: &DiskFacts) -> Step {
    let default = Growpart {
        mode: GrowMode::Auto,
        devices: vec!["/".into()],
        ignore_growroot_disabled: false,
    };
    let g = g.unwrap_or(&default);
    match g.mode {
        GrowMode::Off => return Step::Skip("growpart: mode off".into()),
        GrowMode::Gpart => {
            return Step::Fail("growpart: mode gpart is FreeBSD's tool; write auto or growpart".into())
        }
        GrowMode::Growpart if !cc.has("growpart") => {
            return Step::Fail(
                "growpart: mode growpart, but growpart is not installed; install cloud-guest-utils (Debian) or cloud-utils-growpart (RHEL)".into(),
            )
        }
        GrowMode::Auto if !cc.has("growpart") => {
            return Step::Skip(
                "growpart: warning: no growpart in the root (cloud-guest-utils); the partition is not grown".into(),
            )
        }
        _ => {}
    }
    if disk.growroot_disabled && !g.ignore_growroot_disabled {
        return Step::Skip("growpart: /etc/growroot-disabled exists".into());
    }
    let mut cmds = Vec::new();
    for d in &g.devices {
        let Some(m) = disk
            .mounts
            .iter()
            .find(|m| &m.mount_point == d || &m.device == d)
        else {
            return Step::Fail(format!(
                "growpart: {d} is not a mounted device or mount point"
            ));
        };
        match (&m.disk, m.partition, &m.lvm) {
            (Some(disk), Some(n), _) => {
                cmds.push(vec!["growpart".into(), disk.clone(), n.to_string()])
            }
            // An LVM volume on one partition: the partition, its physical volume, then the
            // volume (resizefs grows the file system next, as for a partition).
            (_, _, Some(lvm)) => {
                if let Some(tool) = ["pvresize", "lvextend"].into_iter().find(|t| !cc.has(t)) {
                    let why = format!(
                        "{} is an LVM volume, but the root has no {tool} (lvm2)",
                        m.device
                    );
                    return match g.mode {
                        GrowMode::Growpart => Step::Fail(format!("growpart: {why}")),
                        _ => Step::Skip(format!("growpart: warning: {why}; not grown")),
                    };
                }
                cmds.push(vec![
                    "growpart".into(),
                    lvm.disk.clone(),
                    lvm.partition.to_string(),
                ]);
                cmds.push(vec!["pvresize".into(), lvm.pv.clone()]);
                cmds.push(vec![
                    "lvextend".into(),
                    "-l".into(),
                    "+100%FREE".into(),
                    lvm.lv.clone(),
                ]);
            }
            _ => {
                tracing::info!("growpart: {} is not a partition; nothing to grow", m.device);
            }
        }
    }
    if cmds.is_empty() {
        return Step::Skip("growpart: no partition to grow".into());
    }
    Step::Run(cmds)
}

/// The disk tools it and `resizefs` look for (both run by default).
pub(crate) fn programs(_: &CloudConfig) -> &'static [&'static str] {
    &[
        "growpart",
        "resize2fs",
        "xfs_growfs",
        "btrfs",
        "pvresize",
        "lvextend",
    ]
}

/// Grows the partitions, on the running system only.
pub(crate) fn run(s: &driver::Step) -> ModuleOutcome {
    let Some(df) = s.disk() else {
        return skipped("growpart: the root is not the running system");
    };
    carry_out(
        s,
        "growpart",
        plan_growpart(s.cfg.growpart.as_ref(), s.cc, df),
    )
}

/// What it would grow.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    let g = l.cfg.growpart.as_ref();
    vec![format!(
        "on the running system only: grow the partitions of {} (mode {:?})",
        g.map_or("/".to_string(), |g| g.devices.join(", ")),
        g.map_or(GrowMode::Auto, |g| g.mode)
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
    use crate::cloud_config::modules::resizefs::ResizeRootfs;
    use crate::cloud_config::read::Severity;

    #[test]
    fn growpart_and_resize_good_and_hostile() {
        let (cfg, p) = document::from_text("growpart: {mode: off}\nresize_rootfs: noblock\n");
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(cfg.growpart.unwrap().mode, GrowMode::Off);
        assert_eq!(cfg.resize_rootfs, Some(ResizeRootfs::Noblock));
        let (cfg, _) = document::from_text("growpart: {}");
        let g = cfg.growpart.unwrap();
        assert_eq!(
            (g.mode, g.devices.as_slice(), g.ignore_growroot_disabled),
            (GrowMode::Auto, &["/".to_string()][..], false)
        );
        for (doc, want) in [
            ("growpart: {mode: fast}", "not a mode"),
            ("growpart: {mode: true}", "is a boolean"),
            ("growpart: {devices: [sda1]}", "not a mount point"),
            ("resize_rootfs: 'yes'", "write true, false or noblock"),
        ] {
            let (_, p) = document::from_text(doc);
            assert!(
                p.iter()
                    .any(|p| p.severity == Severity::Error && p.message.contains(want)),
                "{doc}: {p:?}"
            );
        }
    }
}
