//! What the `disk_setup` module needs to know about the devices it names: each one as
//! `lsblk`, `blkid`, `blockdev` and `sfdisk -J` report it on the running system, and
//! which of the programs it may run the root has.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::programs::which;
use crate::root::Root;

/// Most bytes of a probe's output read.
const MAX_PROBE: usize = 256 * 1024;

/// A file system signature, as `blkid` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Signature {
    /// `TYPE` (`ext4`, `swap`, `vfat`).
    pub fstype: String,
    /// `LABEL`, if any.
    pub label: Option<String>,
}

/// One block device of a disk (the disk itself, then its partitions), as `lsblk` lists
/// them, with its signature from `blkid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Its node (`/dev/sdb1`).
    pub path: String,
    /// `lsblk`'s `TYPE` (`disk`, `part`, `loop`, `crypt`…).
    pub kind: String,
    /// Its file system signature.
    pub fs: Option<Signature>,
}

/// A partition table, as `sfdisk -J` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// `dos` or `gpt`.
    pub label: String,
    /// Each partition's type (an MBR code or a GUID), in order.
    pub types: Vec<String>,
}

/// What the module needs to know of one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// The device itself (symbolic links resolved) and what `lsblk` lists under it.
    pub blocks: Vec<Block>,
    /// Its size in sectors.
    pub sectors: u64,
    /// Its sector size in bytes.
    pub sector_size: u64,
    /// Its partition table, if it has one.
    pub table: Option<Table>,
}

impl Device {
    /// The device's node.
    pub fn path(&self) -> &str {
        &self.blocks[0].path
    }
}

/// `lsblk --pairs --paths --output NAME,TYPE` output: each line's node and type.
pub(crate) fn parse_lsblk(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| {
            let field = |key: &str| {
                let start = l.find(&format!("{key}=\""))? + key.len() + 2;
                let len = l[start..].find('"')?;
                Some(l[start..start + len].to_string())
            };
            Some((field("NAME")?, field("TYPE")?))
        })
        .collect()
}

/// `blkid -o export` output: the signature, if it names a type.
pub(crate) fn parse_blkid(out: &str) -> Option<Signature> {
    let value = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(str::to_string)
    };
    Some(Signature {
        fstype: value("TYPE").filter(|t| !t.is_empty())?,
        label: value("LABEL"),
    })
}

/// `sfdisk -J` output: the table's type and its partitions' types.
pub(crate) fn parse_sfdisk_json(out: &str) -> Option<Table> {
    let v: serde_json::Value = serde_json::from_str(out).ok()?;
    let t = v.get("partitiontable")?;
    Some(Table {
        label: t.get("label")?.as_str()?.to_string(),
        types: t
            .get("partitions")
            .and_then(|p| p.as_array())
            .map(|parts| {
                parts
                    .iter()
                    .map(|p| p["type"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// Runs the probing tools of the running system.
pub(crate) struct Prober<'a> {
    /// The root (`/`).
    pub root: &'a Root,
    /// How long one tool may run.
    pub timeout: Duration,
    /// Stops the tools.
    pub stop: &'a AtomicBool,
    /// Runs `udevadm settle` for a device not there yet (when the module runs; not when
    /// the facts are read for `plan` and every stage, which must stay quick).
    pub settle: bool,
}

impl Prober<'_> {
    /// A tool's standard output when it exits 0.
    fn output(&self, tool: &str, args: &[&str]) -> Option<String> {
        let path = which(self.root, tool)?;
        let cmd = crate::process::Cmd::new(path, args, self.timeout);
        let done =
            crate::process::run(&cmd, crate::process::Output::Bytes(MAX_PROBE), self.stop).ok()?;
        done.success()
            .then(|| String::from_utf8_lossy(&done.stdout).into_owned())
    }

    /// `udevadm settle`, errors only logged (as cloud-init).
    fn settle(&self) {
        if self.output("udevadm", &["settle"]).is_none() {
            tracing::debug!("disk_setup: udevadm settle did not succeed");
        }
    }

    /// What `device` (a `/dev/` path) is, or why it cannot be used: it must exist
    /// (after one `udevadm settle`); symbolic links are followed.
    pub(crate) fn device(&self, device: &str) -> Result<Device, String> {
        if self.settle && !Path::new(device).exists() {
            self.settle();
        }
        if !Path::new(device).exists() {
            return Err(format!(
                "Device {device} did not exist and was not created with a udevadm settle."
            ));
        }
        let real = std::fs::canonicalize(device)
            .map_err(|e| format!("{device}: {e}"))?
            .to_string_lossy()
            .into_owned();
        let listed = self
            .output(
                "lsblk",
                &["--pairs", "--paths", "--output", "NAME,TYPE", &real],
            )
            .ok_or_else(|| format!("lsblk cannot list {real}"))?;
        let mut blocks: Vec<Block> = parse_lsblk(&listed)
            .into_iter()
            .map(|(path, kind)| Block {
                fs: self.signature(&path),
                path,
                kind,
            })
            .collect();
        if blocks.is_empty() {
            return Err(format!("lsblk lists nothing for {real}"));
        }
        // lsblk names a device by its kernel name; keep the path the module resolved.
        blocks[0].path = real.clone();
        let number =
            |args: &[&str]| -> Option<u64> { self.output("blockdev", args)?.trim().parse().ok() };
        let bytes = number(&["--getsize64", &real]).unwrap_or(0);
        let sector_size = number(&["--getss", &real]).unwrap_or(512).max(1);
        Ok(Device {
            blocks,
            sectors: bytes / sector_size,
            sector_size,
            table: self
                .output("sfdisk", &["-J", &real])
                .and_then(|o| parse_sfdisk_json(&o)),
        })
    }

    /// `blkid -c /dev/null -o export <node>`.
    fn signature(&self, node: &str) -> Option<Signature> {
        parse_blkid(&self.output("blkid", &["-c", "/dev/null", "-o", "export", node])?)
    }
}

/// What the root's facts hold for the `disk_setup` module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskSetupFacts {
    /// The root is the running system.
    pub live: bool,
    /// Each device the entries name (alias resolved), as probed now, or why it cannot
    /// be used.
    pub devices: BTreeMap<String, Result<Device, String>>,
    /// The programs the root has among those the entries may run (mkfs.*, sgdisk…).
    pub have: Vec<String>,
}

/// What the disk facts are asked for, as plain data the cloud-config side computes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DisksWanted {
    /// The devices the entries name (aliases resolved), probed on the running system.
    pub devices: Vec<String>,
    /// The programs the entries may run, looked for on the running system.
    pub programs: Vec<String>,
}

/// Probes the devices `want` names, on the running system only (read-only: `lsblk`,
/// `blkid`, `blockdev`, `sfdisk -J`).
pub(crate) fn gather(root: &Root, want: &DisksWanted) -> DiskSetupFacts {
    let live = root.path() == Path::new("/");
    let mut facts = DiskSetupFacts {
        live,
        ..Default::default()
    };
    if !live {
        return facts;
    }
    let stop = AtomicBool::new(false);
    let prober = Prober {
        root,
        timeout: Duration::from_secs(30),
        stop: &stop,
        settle: false,
    };
    for p in &want.devices {
        facts
            .devices
            .entry(p.clone())
            .or_insert_with(|| prober.device(p));
    }
    facts.have = want
        .programs
        .iter()
        .filter(|p| which(root, p).is_some())
        .cloned()
        .collect();
    facts
}
