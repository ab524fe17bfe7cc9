//! What udev's database (`/run/udev/data/b<major>:<minor>`) already says about a block
//! device, so that discovery need not open it: opening an empty CD-ROM drive makes the
//! kernel ask the drive for a medium (a tenth of a second under emulation, for each
//! source that looked), and reading a disk udev has probed finds nothing udev did not.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use crate::root::Root;

/// Where udev keeps a block device's properties (`E:KEY=VALUE` lines).
const UDEV_DATA: &str = "/run/udev/data";

/// Whether udev's entry for the block device at `path` (a host path) rules it out: an
/// empty CD-ROM drive, or, with `labels`, a device udev probed (it names a file system or
/// a partition table) whose label is none of them. A device udev has not probed yet
/// (early in boot, or just plugged) is never ruled out: it is read as before.
pub(crate) fn rules_out(root: &Root, path: &Path, labels: Option<&[&str]>) -> bool {
    let Some((major, minor)) = block_device_numbers(path) else {
        return false;
    };
    let entry = Path::new(UDEV_DATA).join(format!("b{major}:{minor}"));
    let Ok(Some(data)) = root.read(&entry) else {
        return false;
    };
    entry_rules_out(&String::from_utf8_lossy(&data), labels)
}

/// The major and minor number of the block device at `path` (a host path, symlinks
/// followed); `None` for anything else.
pub(crate) fn block_device_numbers(path: &Path) -> Option<(u32, u32)> {
    let meta = std::fs::metadata(path).ok()?;
    let rdev = meta.rdev();
    meta.file_type()
        .is_block_device()
        .then(|| (libc::major(rdev), libc::minor(rdev)))
}

/// [`rules_out`] on the text of a udev database entry.
fn entry_rules_out(entry: &str, labels: Option<&[&str]>) -> bool {
    let values = |key: &str| {
        let prefix = format!("E:{key}=");
        entry
            .lines()
            .filter_map(move |l| l.strip_prefix(&prefix).map(str::to_string))
            .collect::<Vec<_>>()
    };
    let is = |key: &str| values(key).iter().any(|v| v == "1");
    if is("ID_CDROM") && !is("ID_CDROM_MEDIA") {
        return true;
    }
    let Some(labels) = labels else {
        return false;
    };
    let probed = !values("ID_FS_TYPE").is_empty() || !values("ID_PART_TABLE_TYPE").is_empty();
    probed
        && !values("ID_FS_LABEL")
            .iter()
            .any(|l| labels.contains(&l.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_rule_out_empty_drives_and_probed_devices_without_the_label() {
        let labels: &[&str] = &["cidata", "CIDATA"];
        let table = [
            (
                "E:ID_FS_TYPE=ext4\nE:ID_FS_LABEL=vmroot\n",
                Some(labels),
                true,
            ),
            ("E:ID_PART_TABLE_TYPE=gpt\n", Some(labels), true),
            (
                "E:ID_FS_TYPE=vfat\nE:ID_FS_LABEL=cidata\n",
                Some(labels),
                false,
            ),
            (
                "E:ID_FS_TYPE=iso9660\nE:ID_FS_LABEL=CIDATA\n",
                Some(labels),
                false,
            ),
            // A label is matched whole, not as a prefix.
            (
                "E:ID_FS_TYPE=vfat\nE:ID_FS_LABEL=cidata2\n",
                Some(labels),
                true,
            ),
            // An empty drive, for any source.
            ("E:ID_CDROM=1\nE:ID_TYPE=cd\n", Some(labels), true),
            ("E:ID_CDROM=1\n", None, true),
            // A drive with a medium: the OVF source reads any ISO; a seed source its label.
            (
                "E:ID_CDROM=1\nE:ID_CDROM_MEDIA=1\nE:ID_FS_TYPE=iso9660\nE:ID_FS_LABEL=OVF ENV\n",
                None,
                false,
            ),
            (
                "E:ID_CDROM=1\nE:ID_CDROM_MEDIA=1\nE:ID_FS_TYPE=iso9660\nE:ID_FS_LABEL=OVF ENV\n",
                Some(labels),
                true,
            ),
            // Not probed (udev has not run blkid on it yet): read the device.
            ("E:ID_PATH=pci-0000:00:05.0\n", Some(labels), false),
            ("", Some(labels), false),
            ("E:ID_FS_TYPE=ext4\n", None, false),
        ];
        for (entry, labels, out) in table {
            assert_eq!(entry_rules_out(entry, labels), out, "{entry:?} {labels:?}");
        }
    }

    #[test]
    fn a_path_that_is_not_a_block_device_is_never_ruled_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let file = dir.path().join("sr0");
        std::fs::write(&file, b"an image file standing in for a drive").unwrap();
        assert!(!rules_out(&root, &file, Some(&["cidata"])));
        assert!(!rules_out(&root, &dir.path().join("missing"), None));
        assert_eq!(block_device_numbers(&file), None);
    }

    /// A block device node gives its numbers, wherever it is (the tests run as root).
    #[test]
    fn a_block_device_node_gives_its_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("sr200");
        nix::sys::stat::mknod(
            &node,
            nix::sys::stat::SFlag::S_IFBLK,
            nix::sys::stat::Mode::from_bits_truncate(0o600),
            libc::makedev(11, 200),
        )
        .unwrap();
        assert_eq!(block_device_numbers(&node), Some((11, 200)));
    }
}
