//! `resizefs` (`resize_rootfs`): the root file system grown to fill its partition with
//! the root's `resize2fs`, `xfs_growfs` or `btrfs`, on the running system only.

use serde::Serialize;

use crate::cloud_config::apply::disk::{carry_out, DiskFacts, Step};
use crate::cloud_config::apply::driver::{self, skipped, ModuleOutcome};
use crate::cloud_config::apply::preview::Look;
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::Reader;
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;

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

/// `resize_rootfs`: true, false or `noblock`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
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

/// `resize_rootfs` (unset: true).
pub(crate) fn plan_resizefs(r: Option<ResizeRootfs>, cc: &Facts, disk: &DiskFacts) -> Step {
    if r == Some(ResizeRootfs::No) {
        return Step::Skip("resize_rootfs: false".into());
    }
    let Some(root) = disk.mounts.iter().find(|m| m.mount_point == "/") else {
        return Step::Skip("resize_rootfs: / is not a mounted block device".into());
    };
    if root.fills_device {
        // What resize2fs would find ("Nothing to do!"), without a process on every boot.
        return Step::Skip("resize_rootfs: / already fills its device".into());
    }
    let (tool, args): (&str, Vec<String>) = match root.fstype.as_str() {
        "ext2" | "ext3" | "ext4" => ("resize2fs", vec![root.device.clone()]),
        "xfs" => ("xfs_growfs", vec!["/".into()]),
        "btrfs" => (
            "btrfs",
            vec![
                "filesystem".into(),
                "resize".into(),
                "max".into(),
                "/".into(),
            ],
        ),
        other => {
            return Step::Skip(format!(
                "resize_rootfs: the root file system is {other}, which vmcust does not resize"
            ))
        }
    };
    if !cc.has(tool) {
        return Step::Skip(format!(
            "resize_rootfs: warning: no {tool} in the root; the file system is not grown"
        ));
    }
    let mut cmd = vec![tool.to_string()];
    cmd.extend(args);
    Step::Run(vec![cmd])
}

/// Grows the root file system, on the running system only.
pub(crate) fn run(s: &driver::Step) -> ModuleOutcome {
    let Some(df) = s.disk() else {
        return skipped("resizefs: the root is not the running system");
    };
    carry_out(s, "resizefs", plan_resizefs(s.cfg.resize_rootfs, s.cc, df))
}

/// What it would grow.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    vec![match l.cfg.resize_rootfs {
        Some(ResizeRootfs::No) => "nothing: resize_rootfs is false".into(),
        _ => "on the running system only: grow the root file system".into(),
    }]
}
