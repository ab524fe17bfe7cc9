//! `growpart` and `resize_rootfs` (cloud-init's `cc_growpart` and `cc_resizefs`): a
//! clone's disk grown in vCenter, its partition grown with `growpart` (cloud-guest-utils)
//! and its file system with `resize2fs`, `xfs_growfs` or `btrfs filesystem resize`, only
//! with the tools the root has. Only on the running system: another root's disk is not
//! this machine's. The commands are planned from [`DiskFacts`] (pure); a missing tool in
//! `auto` mode is a warning and a skip, as in cloud-init.

use std::path::Path;

use crate::cloud_config::disk::{GrowMode, Growpart, ResizeRootfs};

use super::facts::CcFacts;

/// A mounted block device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Where it is mounted.
    pub mount_point: String,
    /// Its device node (`/dev/sda1`).
    pub device: String,
    /// Its file system type.
    pub fstype: String,
    /// The whole disk it is a partition of (`/dev/sda`), if it is one.
    pub disk: Option<String>,
    /// Its partition number, if it is a partition.
    pub partition: Option<u32>,
}

/// What the disk modules need to know about the running system.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskFacts {
    /// `/etc/growroot-disabled` exists.
    pub growroot_disabled: bool,
    /// The mounts.
    pub mounts: Vec<Mount>,
}

/// What a disk module will do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Run these commands (program name first), in order.
    Run(Vec<Vec<String>>),
    /// Nothing, for this reason (a warning where a tool is missing).
    Skip(String),
    /// The module fails, for this reason.
    Fail(String),
}

/// `growpart` (unset: cloud-init's default, `auto` on `/`).
pub fn plan_growpart(g: Option<&Growpart>, cc: &CcFacts, disk: &DiskFacts) -> Step {
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
        match (&m.disk, m.partition) {
            (Some(disk), Some(n)) => {
                cmds.push(vec!["growpart".into(), disk.clone(), n.to_string()])
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

/// `resize_rootfs` (unset: true).
pub fn plan_resizefs(r: Option<ResizeRootfs>, cc: &CcFacts, disk: &DiskFacts) -> Step {
    if r == Some(ResizeRootfs::No) {
        return Step::Skip("resize_rootfs: false".into());
    }
    let Some(root) = disk.mounts.iter().find(|m| m.mount_point == "/") else {
        return Step::Skip("resize_rootfs: / is not a mounted block device".into());
    };
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

/// Reads the mounts of the running system from `/proc/self/mountinfo` and `/sys`.
pub fn gather_live(root: &crate::root::Root) -> DiskFacts {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    DiskFacts {
        growroot_disabled: root.is_file(Path::new("/etc/growroot-disabled")),
        mounts: mounts(&mountinfo, |majmin| {
            let link = std::fs::canonicalize(format!("/sys/dev/block/{majmin}")).ok()?;
            let name = link.file_name()?.to_string_lossy().into_owned();
            let partition = std::fs::read_to_string(link.join("partition"))
                .ok()
                .and_then(|p| p.trim().parse().ok());
            let disk = partition
                .and(link.parent())
                .and_then(|p| p.file_name())
                .map(|d| format!("/dev/{}", d.to_string_lossy()));
            Some((format!("/dev/{name}"), disk, partition))
        }),
    }
}

/// The block-device mounts of a mountinfo text; `sys` finds a device's node, disk and
/// partition number from its `major:minor`.
pub fn mounts(
    mountinfo: &str,
    sys: impl Fn(&str) -> Option<(String, Option<String>, Option<u32>)>,
) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let pre: Vec<&str> = pre.split_whitespace().collect();
            let post: Vec<&str> = post.split_whitespace().collect();
            let (majmin, mount_point) = (*pre.get(2)?, *pre.get(4)?);
            let fstype = *post.first()?;
            let (device, disk, partition) = sys(majmin)?;
            Some(Mount {
                mount_point: mount_point.to_string(),
                device,
                fstype: fstype.to_string(),
                disk,
                partition,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    fn cc(tools: &[&str]) -> CcFacts {
        let mut f = CcFacts::default();
        for t in tools {
            f.programs.insert(t.to_string(), format!("/usr/sbin/{t}"));
        }
        f
    }

    fn disk(fstype: &str) -> DiskFacts {
        let info = format!(
            "22 1 8:1 / / rw,relatime shared:1 - {fstype} /dev/sda1 rw\n\
             23 22 0:5 / /proc rw - proc proc rw\n\
             24 22 8:16 / /data rw - ext4 /dev/sdb rw\n"
        );
        DiskFacts {
            growroot_disabled: false,
            mounts: mounts(&info, |mm| match mm {
                "8:1" => Some(("/dev/sda1".into(), Some("/dev/sda".into()), Some(1))),
                "8:16" => Some(("/dev/sdb".into(), None, None)),
                _ => None,
            }),
        }
    }

    fn run(cmds: &[&str]) -> Step {
        Step::Run(
            cmds.iter()
                .map(|c| c.split(' ').map(str::to_string).collect())
                .collect(),
        )
    }

    #[test]
    fn growpart_goldens() {
        let all = cc(&["growpart"]);
        let g = |doc: &str| document::from_text(doc).0.growpart;
        assert_eq!(
            plan_growpart(None, &all, &disk("ext4")),
            run(&["growpart /dev/sda 1"])
        );
        assert_eq!(
            plan_growpart(
                g("growpart: {devices: [/, /data]}").as_ref(),
                &all,
                &disk("ext4")
            ),
            run(&["growpart /dev/sda 1"])
        );
        assert!(
            matches!(plan_growpart(None, &cc(&[]), &disk("ext4")), Step::Skip(w) if w.contains("warning"))
        );
        assert!(matches!(
            plan_growpart(
                g("growpart: {mode: growpart}").as_ref(),
                &cc(&[]),
                &disk("ext4")
            ),
            Step::Fail(_)
        ));
        assert!(matches!(
            plan_growpart(g("growpart: {mode: 'off'}").as_ref(), &all, &disk("ext4")),
            Step::Skip(_)
        ));
        assert!(
            matches!(plan_growpart(g("growpart: {devices: [/srv]}").as_ref(), &all, &disk("ext4")), Step::Fail(e) if e.contains("/srv"))
        );
        let mut off = disk("ext4");
        off.growroot_disabled = true;
        assert!(
            matches!(plan_growpart(None, &all, &off), Step::Skip(w) if w.contains("growroot-disabled"))
        );
        assert_eq!(
            plan_growpart(
                g("growpart: {ignore_growroot_disabled: true}").as_ref(),
                &all,
                &off
            ),
            run(&["growpart /dev/sda 1"])
        );
    }

    #[test]
    fn resizefs_goldens() {
        let all = cc(&["resize2fs", "xfs_growfs", "btrfs"]);
        assert_eq!(
            plan_resizefs(None, &all, &disk("ext4")),
            run(&["resize2fs /dev/sda1"])
        );
        assert_eq!(
            plan_resizefs(Some(ResizeRootfs::Noblock), &all, &disk("xfs")),
            run(&["xfs_growfs /"])
        );
        assert_eq!(
            plan_resizefs(None, &all, &disk("btrfs")),
            run(&["btrfs filesystem resize max /"])
        );
        assert!(matches!(
            plan_resizefs(None, &all, &disk("zfs")),
            Step::Skip(_)
        ));
        assert!(
            matches!(plan_resizefs(None, &cc(&[]), &disk("ext4")), Step::Skip(w) if w.contains("no resize2fs"))
        );
        assert!(matches!(
            plan_resizefs(Some(ResizeRootfs::No), &all, &disk("ext4")),
            Step::Skip(_)
        ));
    }
}
