//! What the `mounts` module needs to know about the root: `/etc/fstab`, the missing
//! directories of mount points, the devices entries name (on the running system), and
//! the swap file's state and room.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::root::{Existing, Root};

/// The fstab file.
pub(crate) const FSTAB: &str = "/etc/fstab";
/// Largest `/etc/fstab` read.
pub(crate) const MAX_FSTAB: u64 = 1 << 20;

/// What planning needs to know about the root of the `mounts` module (read by [`gather`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountFacts {
    /// `/etc/fstab`, if any.
    pub fstab: Option<String>,
    /// Why `/etc/fstab` could not be read: the module fails, changing nothing.
    pub unreadable: Option<String>,
    /// The root is the running system (devices resolve, swap and mounts activate).
    pub live: bool,
    /// Devices named by entries, resolved against the running system's `/sys/block`
    /// (`sdb` → `/dev/sdb1`); a name missing here did not resolve.
    pub devices: BTreeMap<String, String>,
    /// Directories on the way to (and including) mount points that do not exist.
    pub missing_dirs: BTreeSet<String>,
    /// The swap file exists.
    pub swap_exists: bool,
    /// The swap file is in use (`/proc/swaps`; also when that cannot be read).
    pub swap_active: bool,
    /// The running system's memory (`MemTotal`), in bytes.
    pub mem: Option<u64>,
    /// Free space for the swap file's directory, in bytes.
    pub free: Option<u64>,
    /// The swap file's directory is on btrfs (copy-on-write is turned off first).
    pub swap_on_btrfs: bool,
}

/// What the mounts facts are asked for, as plain data the cloud-config side computes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountsWanted {
    /// The mount points of the entries (absolute paths).
    pub mount_points: Vec<String>,
    /// Each entry's first field and the device it names once `device_aliases` are
    /// applied.
    pub devices: Vec<(String, String)>,
    /// The swap file, if one is asked for.
    pub swap_file: Option<String>,
}

/// Reads what the `mounts` module needs from `root`.
pub(crate) fn gather(root: &Root, want: &MountsWanted) -> MountFacts {
    let live = root.path() == Path::new("/");
    // An fstab that cannot be read (too large, not UTF-8) fails this module alone, not the
    // stage's other modules.
    let (fstab, unreadable) = match root.read_text_capped(Path::new(FSTAB), MAX_FSTAB, "fstab") {
        Ok(t) => (t, None),
        Err(e) => (
            None,
            Some(format!("reading {FSTAB}: {e}; it is left as it is")),
        ),
    };
    let mut f = MountFacts {
        fstab,
        unreadable,
        live,
        ..Default::default()
    };
    for mp in want.mount_points.iter().filter(|m| m.starts_with('/')) {
        let mut p = PathBuf::from("/");
        for c in Path::new(mp).components().skip(1) {
            p.push(c);
            // Only what is not there at all: something else in the way (cloud-init's
            // example mounts on /dev/zero) is left for mount to refuse, as mkdir -p would.
            if matches!(root.existing(&p), Ok(Existing::Missing)) {
                f.missing_dirs.insert(p.display().to_string());
            }
        }
    }
    if live {
        let sys = |p: &str| Path::new("/sys/block").join(p).exists();
        for (name, aliased) in &want.devices {
            if let Some(d) = resolve(aliased, &sys) {
                f.devices.insert(name.clone(), d);
            }
        }
    }
    if let Some(swap) = want.swap_file.as_deref().filter(|s| !s.is_empty()) {
        let file = Path::new(swap);
        f.swap_exists = root.is_file(file);
        if live {
            f.swap_active = match std::fs::read_to_string("/proc/swaps") {
                Ok(t) => t
                    .lines()
                    .skip(1)
                    .filter_map(|l| l.split_whitespace().next())
                    .any(|d| unescape(d) == swap),
                Err(_) => true,
            };
            f.mem = std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|m| mem_total(&m));
        }
        let mut dir = file.parent().unwrap_or(Path::new("/"));
        while !root.is_dir(dir) {
            dir = dir.parent().unwrap_or(Path::new("/"));
        }
        if let Ok(real) = root.resolve(dir, true) {
            if let Ok(s) = rustix::fs::statvfs(&real) {
                f.free = Some(s.f_bavail.saturating_mul(s.f_frsize));
            }
            if let Ok(s) = rustix::fs::statfs(&real) {
                // BTRFS_SUPER_MAGIC
                f.swap_on_btrfs = s.f_type as u64 == 0x9123_683E;
            }
        }
    }
    f
}

/// The reverse of fstab's octal escapes (`\040` for a space) in a first column.
pub(crate) fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 4);
        match code.and_then(|c| u8::from_str_radix(c, 8).ok()) {
            Some(b) if code.is_some_and(|c| c.bytes().all(|b| (b'0'..=b'7').contains(&b))) => {
                out.push(b as char);
                rest = &rest[i + 4..];
            }
            _ => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A short kernel name cloud-init completes with `/dev/` (`sdb`, `xvdc1`, `sr0`).
fn short_name(s: &str) -> bool {
    let t = s.strip_prefix('x').unwrap_or(s);
    let b = t.as_bytes();
    let disk = b.len() >= 3
        && matches!(b[0], b's' | b'h' | b'v')
        && b[1] == b'd'
        && b[2].is_ascii_lowercase()
        && b[3..].iter().all(u8::is_ascii_digit);
    let sr = s
        .strip_prefix("sr")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    disk || sr
}

/// cloud-init's `sanitize_devname` against a `/sys/block` (`sys(path)`: whether
/// `/sys/block/<path>` exists): the device an entry's first field names, or `None` when
/// it does not resolve (it is then written as given). Network devices (`host:/path`)
/// are themselves; meta names (`ephemeral0`, `swap`, `ami`, …) never resolve on vSphere,
/// whose datasource maps none.
pub(crate) fn resolve(name: &str, sys: &dyn Fn(&str) -> bool) -> Option<String> {
    let name = if name == "ephemeral" {
        "ephemeral0"
    } else {
        name
    };
    if name.find(':').is_some_and(|i| i > 0) {
        return Some(name.to_string());
    }
    let (dev, part) = match name.rsplit_once('.') {
        Some((d, p)) => (d, Some(p)),
        None => (name, None),
    };
    if ["ami", "root", "swap"].contains(&dev)
        || dev.starts_with("ephemeral")
        || dev.starts_with("ebs")
    {
        return None;
    }
    let dev = if short_name(name) {
        format!("/dev/{dev}")
    } else {
        dev.to_string()
    };
    let base = dev.strip_prefix("/dev/")?;
    if base.is_empty() || base.contains('/') || !sys(base) {
        return None;
    }
    let n = part.unwrap_or("1");
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    for p in [
        format!("{base}{n}"),
        format!("{base}p{n}"),
        format!("{base}-part{n}"),
    ] {
        if sys(&format!("{base}/{p}")) {
            return Some(format!("/dev/{p}"));
        }
    }
    match part {
        None => Some(dev),
        Some(_) => None,
    }
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
pub(crate) fn mem_total(meminfo: &str) -> Option<u64> {
    let l = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = l.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_from_meminfo() {
        assert_eq!(
            mem_total("MemTotal:  2048 kB\nMemFree: 1 kB\n"),
            Some(2 << 20)
        );
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn device_names_resolve_as_cloud_init_resolves_them() {
        // /sys/block with sdb (partition sdb1), sdc (no partitions), nvme0n1 (nvme0n1p1).
        let sys = |p: &str| ["sdb", "sdb/sdb1", "sdc", "nvme0n1", "nvme0n1/nvme0n1p1"].contains(&p);
        for (name, want) in [
            ("sdb", Some("/dev/sdb1")),
            ("/dev/sdb", Some("/dev/sdb1")),
            ("/dev/sdb.1", Some("/dev/sdb1")),
            ("sdb.1", None),
            ("sdc", Some("/dev/sdc")),
            ("/dev/sdc.2", None),
            ("sdb1", None),
            ("/dev/sdb1", None),
            ("LABEL=data", None),
            ("UUID=1234", None),
            ("nvme0n1", None),
            ("/dev/nvme0n1", Some("/dev/nvme0n1p1")),
            ("sdz", None),
            ("ephemeral0", None),
            ("ephemeral", None),
            ("swap", None),
            ("nfs.example:/export", Some("nfs.example:/export")),
            ("//srv/share", None),
            ("/dev/../etc", None),
        ] {
            assert_eq!(resolve(name, &sys).as_deref(), want, "{name}");
        }
    }
}
