//! `growpart` and `resize_rootfs` (cloud-init's `cc_growpart` and `cc_resizefs`): a
//! clone's disk grown in vCenter, its partition grown with `growpart` (cloud-guest-utils)
//! and its file system with `resize2fs`, `xfs_growfs` or `btrfs filesystem resize`, only
//! with the tools the root has. Only on the running system: another root's disk is not
//! this machine's. The commands are planned from [`DiskFacts`] (pure); a missing tool in
//! `auto` mode is a warning and a skip, as in cloud-init.

use std::path::Path;

use super::driver::{self, failed, from_end, skipped, ModuleOutcome};
use super::exec::RunEnd;

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
    /// The file system is known to span its whole device already (an ext2/3/4
    /// superblock's size against the device's): resizing it would change nothing.
    pub fills_device: bool,
    /// The LVM logical volume it is, on one physical volume that is a partition.
    pub lvm: Option<Lvm>,
}

/// An LVM logical volume whose one physical volume is a partition: what `growpart`,
/// `pvresize` and `lvextend` are given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lvm {
    /// The volume's path (`/dev/mapper/vg-root`).
    pub lv: String,
    /// The physical volume (`/dev/sda3`).
    pub pv: String,
    /// The disk the physical volume is a partition of (`/dev/sda`).
    pub disk: String,
    /// Its partition number.
    pub partition: u32,
}

/// [`lvm_of`] read from a `/sys/block` directory.
pub(crate) fn lvm_in(sys_block: &Path, dm: &str) -> Option<Lvm> {
    lvm_of(
        dm,
        &|p| std::fs::read_to_string(sys_block.join(p)).ok(),
        &|p| {
            let mut names: Vec<String> = std::fs::read_dir(sys_block.join(p))
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names
        },
    )
}

/// The LVM volume a device-mapper device `dm` (`dm-0`) is, from its `/sys/block` entry
/// (`read(path)`: a file's text under `/sys/block`; `list(path)`: a directory's names):
/// an LVM volume (`dm/uuid` starts with `LVM-`) on exactly one device (`slaves/`) that is
/// a partition. Anything else (LUKS, multipath, several physical volumes) is `None`.
pub(crate) fn lvm_of(
    dm: &str,
    read: &dyn Fn(&str) -> Option<String>,
    list: &dyn Fn(&str) -> Vec<String>,
) -> Option<Lvm> {
    if !read(&format!("{dm}/dm/uuid"))?.starts_with("LVM-") {
        return None;
    }
    let name = read(&format!("{dm}/dm/name"))?;
    let name = name.trim();
    let slaves = list(&format!("{dm}/slaves"));
    let [pv] = slaves.as_slice() else {
        return None;
    };
    if name.is_empty() || name.contains('/') || pv.contains('/') {
        return None;
    }
    // `slaves/<pv>` links to the partition's directory, which sits in its disk's (the
    // kernel resolves `..` after the link): the disk's `uevent` names it.
    let partition: u32 = read(&format!("{dm}/slaves/{pv}/partition"))?
        .trim()
        .parse()
        .ok()?;
    let disk = read(&format!("{dm}/slaves/{pv}/../uevent"))?
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME=").map(str::to_string))?;
    if disk.is_empty() || disk.contains('/') {
        return None;
    }
    Some(Lvm {
        lv: format!("/dev/mapper/{name}"),
        pv: format!("/dev/{pv}"),
        disk: format!("/dev/{disk}"),
        partition,
    })
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
pub(crate) enum Step {
    /// Run these commands (program name first), in order.
    Run(Vec<Vec<String>>),
    /// Nothing, for this reason (a warning where a tool is missing).
    Skip(String),
    /// The module fails, for this reason.
    Fail(String),
}

/// Reads the mounts of the running system from `/proc/self/mountinfo` and `/sys`, and for
/// an ext2/3/4 `/` whether it already fills its device.
pub(crate) fn gather_live(root: &crate::root::Root) -> DiskFacts {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut mounts = mounts(&mountinfo, |majmin| {
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
    });
    for m in mounts.iter_mut() {
        if let Some(dm) = m
            .device
            .strip_prefix("/dev/")
            .filter(|d| d.starts_with("dm-"))
        {
            m.lvm = lvm_in(Path::new("/sys/block"), dm);
        }
    }
    for m in mounts
        .iter_mut()
        .filter(|m| m.mount_point == "/" && m.fstype.starts_with("ext"))
    {
        m.fills_device = ext_fills_device(&m.device).unwrap_or(false);
    }
    DiskFacts {
        growroot_disabled: root.is_file(Path::new("/etc/growroot-disabled")),
        mounts,
    }
}

/// Whether the ext2/3/4 file system on `device` spans the device to its last whole block.
fn ext_fills_device(device: &str) -> Option<bool> {
    use std::io::Read;
    let name = device.strip_prefix("/dev/")?;
    let sectors: u64 = std::fs::read_to_string(format!("/sys/class/block/{name}/size"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let mut superblock = [0u8; 1024];
    let mut f = std::fs::File::open(device).ok()?;
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(1024)).ok()?;
    f.read_exact(&mut superblock).ok()?;
    let (blocks, block_size) = ext_size(&superblock)?;
    Some(sectors.checked_mul(512)? / block_size == blocks)
}

/// An ext2/3/4 superblock's block count and block size, `None` if it is not one.
pub(crate) fn ext_size(sb: &[u8; 1024]) -> Option<(u64, u64)> {
    let u32_at = |o: usize| u32::from_le_bytes([sb[o], sb[o + 1], sb[o + 2], sb[o + 3]]);
    if u16::from_le_bytes([sb[0x38], sb[0x39]]) != 0xEF53 {
        return None;
    }
    let log = u32_at(0x18);
    if log > 6 {
        return None;
    }
    let mut blocks = u64::from(u32_at(0x04));
    // INCOMPAT_64BIT: the high half of the count.
    if u32_at(0x60) & 0x80 != 0 {
        blocks |= u64::from(u32_at(0x150)) << 32;
    }
    Some((blocks, 1024 << log))
}

/// The block-device mounts of a mountinfo text; `sys` finds a device's node, disk and
/// partition number from its `major:minor`.
pub(crate) fn mounts(
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
                fills_device: false,
                lvm: None,
            })
        })
        .collect()
}

/// Carries out a disk module's [`Step`]: its commands run with the tool timeout.
pub(crate) fn carry_out(s: &driver::Step, module: &str, step: Step) -> ModuleOutcome {
    match step {
        Step::Skip(why) => {
            tracing::warn!("{why}");
            skipped(why)
        }
        Step::Fail(why) => failed(why),
        Step::Run(cmds) => {
            for c in &cmds {
                match s.run_tool(module, c) {
                    RunEnd::Succeeded => {}
                    // lvextend's answer when the physical volume brought no free extent.
                    RunEnd::Failed(why)
                        if c[0] == "lvextend"
                            && (why.contains("matches existing size")
                                || why.contains("not larger than existing size")) => {}
                    // growpart's answer for a partition that fills its disk.
                    RunEnd::Failed(why) if why.contains("NOCHANGE") => {
                        return ModuleOutcome::Ran {
                            note: "the partition already fills the disk".into(),
                        }
                    }
                    other => return from_end(other, ""),
                }
            }
            ModuleOutcome::Ran {
                note: cmds
                    .iter()
                    .map(|c| c.join(" "))
                    .collect::<Vec<_>>()
                    .join("; "),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
    use crate::cloud_config::modules::growpart::plan_growpart;
    use crate::cloud_config::modules::resizefs::{plan_resizefs, ResizeRootfs};
    use crate::facts::Facts;

    fn cc(tools: &[&str]) -> Facts {
        let mut f = Facts::default();
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

    /// A `/sys/block` holding dm-0 (an LVM volume `vg-root` on sda3), dm-1 (LUKS on sda4)
    /// and dm-2 (an LVM volume on two physical volumes).
    fn sys_block(p: &str) -> Option<String> {
        Some(
            match p {
                "dm-0/dm/uuid" => "LVM-abcdef\n",
                "dm-0/dm/name" => "vg-root\n",
                "dm-0/slaves/sda3/partition" => "3\n",
                "dm-0/slaves/sda3/../uevent" => "MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk\n",
                "dm-1/dm/uuid" => "CRYPT-LUKS2-abc\n",
                "dm-1/dm/name" => "cryptroot\n",
                "dm-2/dm/uuid" => "LVM-xyz\n",
                "dm-2/dm/name" => "vg-data\n",
                "dm-3/dm/uuid" => "LVM-whole\n",
                "dm-3/dm/name" => "vg-whole\n",
                _ => return None,
            }
            .to_string(),
        )
    }

    fn sys_list(p: &str) -> Vec<String> {
        match p {
            "dm-0/slaves" => vec!["sda3".into()],
            "dm-1/slaves" => vec!["sda4".into()],
            "dm-2/slaves" => vec!["sdb1".into(), "sdc1".into()],
            // A physical volume on a whole disk: no partition to grow.
            "dm-3/slaves" => vec!["sdd".into()],
            _ => vec![],
        }
    }

    #[test]
    fn lvm_volumes_found_in_sys_block() {
        assert_eq!(
            lvm_of("dm-0", &sys_block, &sys_list),
            Some(Lvm {
                lv: "/dev/mapper/vg-root".into(),
                pv: "/dev/sda3".into(),
                disk: "/dev/sda".into(),
                partition: 3,
            })
        );
        for dm in ["dm-1", "dm-2", "dm-3", "dm-9"] {
            assert_eq!(lvm_of(dm, &sys_block, &sys_list), None, "{dm}");
        }
    }

    /// The kernel's layout (`/sys/block/*` links into `/sys/devices`, `slaves/<pv>` a link
    /// to the partition's directory inside its disk's) as real links in a directory: the
    /// disk is found through the link, as on a real system.
    #[test]
    fn lvm_found_through_sysfs_links() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let dev = d.path().join("devices/virtual/block/dm-0");
        let sda = d.path().join("devices/pci0000:00/host0/block/sda");
        std::fs::create_dir_all(dev.join("dm")).unwrap();
        std::fs::create_dir_all(dev.join("slaves")).unwrap();
        std::fs::create_dir_all(sda.join("sda3")).unwrap();
        std::fs::write(dev.join("dm/uuid"), "LVM-Xyz\n").unwrap();
        std::fs::write(dev.join("dm/name"), "debian--vg-root\n").unwrap();
        std::fs::write(
            sda.join("uevent"),
            "MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk\n",
        )
        .unwrap();
        std::fs::write(sda.join("sda3/partition"), "3\n").unwrap();
        symlink(
            "../../../../pci0000:00/host0/block/sda/sda3",
            dev.join("slaves/sda3"),
        )
        .unwrap();
        std::fs::create_dir_all(d.path().join("block")).unwrap();
        symlink("../devices/virtual/block/dm-0", d.path().join("block/dm-0")).unwrap();
        assert_eq!(
            lvm_in(&d.path().join("block"), "dm-0"),
            Some(Lvm {
                lv: "/dev/mapper/debian--vg-root".into(),
                pv: "/dev/sda3".into(),
                disk: "/dev/sda".into(),
                partition: 3,
            })
        );
    }

    #[test]
    fn growpart_on_an_lvm_root() {
        let info = "22 1 253:0 / / rw - ext4 /dev/mapper/vg-root rw\n";
        let lvm_disk = DiskFacts {
            growroot_disabled: false,
            mounts: mounts(info, |_| Some(("/dev/dm-0".into(), None, None)))
                .into_iter()
                .map(|mut m| {
                    m.lvm = lvm_of("dm-0", &sys_block, &sys_list);
                    m
                })
                .collect(),
        };
        let all = cc(&["growpart", "pvresize", "lvextend"]);
        assert_eq!(
            plan_growpart(None, &all, &lvm_disk),
            run(&[
                "growpart /dev/sda 3",
                "pvresize /dev/sda3",
                "lvextend -l +100%FREE /dev/mapper/vg-root"
            ])
        );
        // Without lvm2: a warning in auto mode, a failure when growpart is asked for.
        assert!(matches!(
            plan_growpart(None, &cc(&["growpart"]), &lvm_disk),
            Step::Skip(w) if w.contains("no pvresize (lvm2)")
        ));
        let g = document::from_text("growpart: {mode: growpart}").0.growpart;
        assert!(matches!(
            plan_growpart(g.as_ref(), &cc(&["growpart", "pvresize"]), &lvm_disk),
            Step::Fail(w) if w.contains("no lvextend")
        ));
        // Another mapped device (LUKS, several volumes): nothing to grow, as before.
        let mut luks = lvm_disk.clone();
        luks.mounts[0].lvm = None;
        assert!(matches!(plan_growpart(None, &all, &luks), Step::Skip(_)));
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
        let mut full = disk("ext4");
        full.mounts[0].fills_device = true;
        assert!(
            matches!(plan_resizefs(None, &all, &full), Step::Skip(w) if w.contains("already fills"))
        );
    }

    #[test]
    fn ext_superblock_sizes() {
        let mut sb = [0u8; 1024];
        assert_eq!(ext_size(&sb), None, "no magic");
        sb[0x38..0x3a].copy_from_slice(&0xEF53u16.to_le_bytes());
        sb[0x04..0x08].copy_from_slice(&786_432u32.to_le_bytes());
        sb[0x18..0x1c].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(ext_size(&sb), Some((786_432, 4096)));
        // The high half counts only with INCOMPAT_64BIT.
        sb[0x150..0x154].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(ext_size(&sb), Some((786_432, 4096)));
        sb[0x60..0x64].copy_from_slice(&0x80u32.to_le_bytes());
        assert_eq!(ext_size(&sb), Some(((1 << 32) + 786_432, 4096)));
        sb[0x18..0x1c].copy_from_slice(&7u32.to_le_bytes());
        assert_eq!(
            ext_size(&sb),
            None,
            "a block size above 64 KiB is not ext's"
        );
    }

    /// A real file system from mke2fs (e2fsprogs, in scripts/test-packages.txt): its
    /// superblock says the size it was made with.
    #[test]
    fn ext_superblock_of_a_real_file_system() {
        let mkfs = ["/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .expect("mkfs.ext4 is missing: apt-get install e2fsprogs");
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("fs.img");
        std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
        let ok = std::process::Command::new(mkfs)
            .args(["-q", "-F", "-b", "4096"])
            .arg(&img)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let bytes = std::fs::read(&img).unwrap();
        let sb: [u8; 1024] = bytes[1024..2048].try_into().unwrap();
        assert_eq!(ext_size(&sb), Some((2048, 4096)));
    }
}
