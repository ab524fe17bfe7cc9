//! `growpart` and `resize_rootfs`: a clone's disk grown in vCenter, its partition and
//! file system grown to match.

use serde::Serialize;

use super::node::{Node, Value};
use super::read::{index, join, Reader};
use super::CloudConfig;
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

/// `resize_rootfs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResizeRootfs {
    /// Grow the root file system (the default).
    Yes,
    /// Leave it.
    No,
    /// Grow it in the background.
    Noblock,
}

/// `growpart`.
pub fn growpart(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
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

/// `resize_rootfs`: true, false or `noblock`.
pub fn resize_rootfs(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.resize_rootfs = match &node.value {
        Value::Bool(true) => Some(ResizeRootfs::Yes),
        Value::Bool(false) => Some(ResizeRootfs::No),
        Value::Str(s) if s == "noblock" => Some(ResizeRootfs::Noblock),
        _ => {
            r.wrong_type(node, key, "true, false or noblock");
            None
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
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
