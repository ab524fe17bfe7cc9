//! `disk_setup` (`disk_setup`, `fs_setup`, `device_aliases`): cloud-init's `cc_disk_setup`
//! — the named disks partitioned (`sfdisk` for MBR, `sgdisk` for GPT, `sfdisk -X gpt`
//! without it), then file systems made (`mkfs.<type>`, `mk<type>`, or the entry's `cmd`),
//! with cloud-init's safety checks: a disk that has a partition or a file system is not
//! partitioned unless `overwrite: true`, a file system already there is kept as
//! `partition` says. Only on the running system: another root's devices would be the
//! build machine's.
//!
//! How it differs from cloud-init is in docs/differences-from-cloud-init.md
//! (`disk_setup` rows): a device name with shell or `sfdisk` syntax is refused at the
//! door, meta names (`ephemeral0`) are skipped with a warning, `vfat` labels go with `-n`,
//! and an entry that fails makes the module fail (cloud-init logs it and reports success).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::cloud_config::apply::driver::{failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::exec::{self, Program, RunEnd};
use crate::cloud_config::apply::preview::Look;
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader};
use crate::cloud_config::CloudConfig;
use crate::facts::disks::{Block, Device, DiskSetupFacts, Signature, Table};
use crate::facts::disks::{DisksWanted, Prober};
use crate::facts::{which, Wanted};
use crate::model::quote;

/// Most disks in `disk_setup`, entries in `fs_setup`, names in `device_aliases`.
const MAX_ENTRIES: usize = 64;
/// Most partitions of one `layout` (GPT's default table holds 128).
const MAX_PARTITIONS: usize = 128;
/// Longest device name, label, type or option.
const MAX_NAME: usize = 255;
/// Longest `cmd`.
const MAX_CMD: usize = 4096;

/// Why the module does nothing for a root that is not the running system.
pub(crate) const OFFLINE: &str = "disk_setup and fs_setup partition and format the running machine's disks; for a root that is not the running system they would be the build machine's, so they are refused here and run at the clone's boot";

/// cloud-init's Linux file system GUID, for GPT partitions without a known type.
const LINUX_FS_GUID: &str = "0FC63DAF-8483-4772-8E79-3D69D8477DE4";

/// `disk_setup.<device>.table_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableType {
    /// A DOS partition table, made with `sfdisk` (the default).
    Mbr,
    /// A GPT, made with `sgdisk` (or `sfdisk -X gpt`).
    Gpt,
}

/// One partition of a `layout` list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    /// Its share of the disk in percent (the last partition takes the rest).
    pub percent: f64,
    /// Its type (`82`, `8300`, a GUID), if given.
    pub ptype: Option<String>,
}

/// `disk_setup.<device>.layout`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// `false` (the default): not partitioned.
    Keep,
    /// `true`: one partition over the whole disk.
    Whole,
    /// `remove`: every file system signature and the partition table wiped.
    Remove,
    /// The partitions, in order.
    Parts(Vec<Part>),
}

/// One `disk_setup` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disk {
    /// The device: a `/dev/` path or a `device_aliases` name.
    pub device: String,
    /// The table type.
    pub table_type: TableType,
    /// The layout.
    pub layout: Layout,
    /// Partition a disk that has partitions or a file system.
    pub overwrite: bool,
}

/// `fs_setup[].partition`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Partition {
    /// The first entry of the device with the type (label not compared), else the first
    /// free one (the default).
    Any,
    /// As `any`, the label compared too.
    Auto,
    /// The raw device, never checked.
    None,
    /// Partition number N.
    Number(u32),
}

/// One `fs_setup` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Filesystem {
    /// The device: a `/dev/` path or a `device_aliases` name, with `.N` for partition N.
    pub device: String,
    /// The file system type (`ext4`, `xfs`, `swap`…).
    pub filesystem: Option<String>,
    /// Its label.
    pub label: Option<String>,
    /// Which partition.
    pub partition: Partition,
    /// Format over a file system of the same type and label.
    pub overwrite: bool,
    /// With `partition: any`: the file system type to format over.
    pub replace_fs: Option<String>,
    /// Words added to the mkfs command.
    pub extra_opts: Vec<String>,
    /// A shell command used instead of mkfs (`%(label)s`, `%(filesystem)s`, `%(device)s`).
    pub cmd: Option<String>,
}

/// Characters a device name, a type or a label used in `cmd` may hold: none the shell
/// or `sfdisk`'s script reads specially.
fn plain(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.,:@%+=/-".contains(c))
}

/// A device name at the door: `/dev/…` or a name (an alias, resolved when the module
/// runs, or a name cloud-init's datasource would map).
fn device_name(r: &mut Reader, n: &Node, at: &str) -> Option<String> {
    let s = match &n.value {
        Value::Int(i) => i.to_string(),
        _ => r.line(n, at, MAX_NAME)?,
    };
    let problem = if !plain(&s) {
        Some("holds a character a device name does not (space, quote, shell or sfdisk syntax); write a /dev/ path or a device_aliases name")
    } else if s.split('/').any(|c| c == "..") {
        Some("has a .. component; write the device path plainly")
    } else if s.starts_with('/') && !s.starts_with("/dev/") {
        Some("is a path outside /dev; write a /dev/ path or a device_aliases name")
    } else if s.starts_with('-') {
        Some("starts with -, which a tool would read as an option")
    } else {
        None
    };
    match problem {
        Some(p) => {
            r.error(n, at, format!("{} {p}", quote(&s)));
            None
        }
        None => Some(s),
    }
}

/// A scalar as cloud-init's `str()` gives it (`82` for the integer 82).
fn scalar(r: &mut Reader, n: &Node, at: &str) -> Option<String> {
    match &n.value {
        Value::Int(i) => Some(i.to_string()),
        _ => r.line(n, at, MAX_NAME),
    }
}

/// A partition type: an MBR code (`83`, `c`), an sgdisk code (`8300`) or a GUID, so it
/// cannot break the `sfdisk` script line it goes in.
fn part_type(r: &mut Reader, n: &Node, at: &str) -> Option<String> {
    let s = scalar(r, n, at)?;
    let hex = |t: &str| t.chars().all(|c| c.is_ascii_hexdigit());
    let guid = s.len() == 36
        && s.split('-').map(str::len).eq([8, 4, 4, 4, 12])
        && hex(&s.replace('-', ""));
    if (1..=4).contains(&s.len()) && hex(&s) || guid {
        Some(s)
    } else {
        r.error(
            n,
            at,
            format!(
                "{} is not a partition type; write an MBR code (83, 82), an sgdisk code (8300) or a GUID",
                quote(&s)
            ),
        );
        None
    }
}

/// A percentage of a `layout`.
fn percent(r: &mut Reader, n: &Node, at: &str) -> Option<f64> {
    let p = match n.value {
        Value::Int(i) => i as f64,
        Value::Float(f) => f,
        _ => {
            r.wrong_type(n, at, "a percentage (a number from 0 to 100)");
            return None;
        }
    };
    if !(0.0..=100.0).contains(&p) {
        r.error(n, at, format!("{p} is not a percentage from 0 to 100"));
        return None;
    }
    Some(p)
}

fn layout(r: &mut Reader, n: &Node, at: &str) -> Option<Layout> {
    match &n.value {
        Value::Bool(true) => Some(Layout::Whole),
        Value::Bool(false) | Value::Null => Some(Layout::Keep),
        Value::Str(s) if s.eq_ignore_ascii_case("remove") => Some(Layout::Remove),
        Value::Seq(_) => {
            let items = r.list(n, at, MAX_PARTITIONS)?;
            let mut parts = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let at = index(at, i);
                match &item.value {
                    Value::Seq(pair) if pair.len() == 2 => parts.push(Part {
                        percent: percent(r, &pair[0], &index(&at, 0))?,
                        ptype: Some(part_type(r, &pair[1], &index(&at, 1))?),
                    }),
                    Value::Seq(_) => {
                        r.error(item, &at, "write [percent, type]");
                        return None;
                    }
                    _ => parts.push(Part {
                        percent: percent(r, item, &at)?,
                        ptype: None,
                    }),
                }
            }
            // cloud-init treats an empty list as false.
            Some(if parts.is_empty() {
                Layout::Keep
            } else {
                Layout::Parts(parts)
            })
        }
        _ => {
            r.wrong_type(
                n,
                at,
                "true, false, remove or a list of percentages or [percent, type]",
            );
            None
        }
    }
}

/// `disk_setup`: a mapping of device to its table type, layout and overwrite.
pub(crate) fn parse_disks(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(
            node,
            key,
            "a mapping of device to {table_type, layout, overwrite}",
        );
        return;
    };
    if entries.len() > MAX_ENTRIES {
        r.error(
            node,
            key,
            format!("has {} devices; at most {MAX_ENTRIES}", entries.len()),
        );
        return;
    }
    let mut out = Vec::new();
    for (k, v) in entries {
        let at = join(key, &k.text);
        let name_node = Node::new(Value::Str(k.text.clone()), k.line, node.part);
        let Some(device) = device_name(r, &name_node, &at) else {
            continue;
        };
        let Some(map) = r.map(v, &at, &["table_type", "layout", "overwrite"]) else {
            continue;
        };
        let mut d = Disk {
            device,
            table_type: TableType::Mbr,
            layout: Layout::Keep,
            overwrite: false,
        };
        let mut ok = true;
        for (k, v) in map {
            let at = join(&at, &k.text);
            match k.text.as_str() {
                "table_type" => match r.line(v, &at, MAX_NAME).as_deref() {
                    Some("mbr") => d.table_type = TableType::Mbr,
                    Some("gpt") => d.table_type = TableType::Gpt,
                    Some(other) => {
                        r.error(
                            v,
                            &at,
                            format!("{} is not a table type; write mbr or gpt", quote(other)),
                        );
                        ok = false;
                    }
                    None => ok = false,
                },
                "layout" => match layout(r, v, &at) {
                    Some(l) => d.layout = l,
                    None => ok = false,
                },
                _ => match r.bool(v, &at) {
                    Some(b) => d.overwrite = b,
                    None => ok = false,
                },
            }
        }
        if let (TableType::Mbr, Layout::Parts(p)) = (d.table_type, &d.layout) {
            if p.len() > 4 {
                r.not_applied(
                    v,
                    &at,
                    &format!("an MBR layout of {} partitions (cloud-init: \"Only simply partitioning is allowed.\")", p.len()),
                    "write at most 4 partitions, or table_type: gpt",
                );
                ok = false;
            }
        }
        if ok {
            out.push(d);
        }
    }
    cfg.disk_setup = Some(out);
}

/// `fs_setup`: a list of file systems to make.
pub(crate) fn parse_filesystems(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(items) = r.list(node, key, MAX_ENTRIES) else {
        return;
    };
    let mut out = Vec::new();
    'entries: for (i, item) in items.iter().enumerate() {
        let at = index(key, i);
        let Some(map) = r.map(
            item,
            &at,
            &[
                "device",
                "filesystem",
                "label",
                "partition",
                "overwrite",
                "replace_fs",
                "extra_opts",
                "cmd",
            ],
        ) else {
            continue;
        };
        let mut f = Filesystem {
            device: String::new(),
            filesystem: None,
            label: None,
            partition: Partition::Any,
            overwrite: false,
            replace_fs: None,
            extra_opts: Vec::new(),
            cmd: None,
        };
        let mut label_node = None;
        for (k, v) in map {
            let at = join(&at, &k.text);
            let got = match k.text.as_str() {
                "device" => device_name(r, v, &at).map(|d| f.device = d),
                "filesystem" => scalar(r, v, &at).and_then(|s| {
                    if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                        f.filesystem = Some(s);
                        Some(())
                    } else {
                        r.error(
                            v,
                            &at,
                            format!("{} is not a file system type (ext4, xfs, swap…)", quote(&s)),
                        );
                        None
                    }
                }),
                "label" => scalar(r, v, &at).map(|s| {
                    label_node = Some(v);
                    f.label = Some(s)
                }),
                "partition" => match &v.value {
                    Value::Int(n) if (0..=i64::from(u16::MAX)).contains(n) => {
                        f.partition = Partition::Number(*n as u32);
                        Some(())
                    }
                    Value::Str(s) => {
                        let lower = s.to_ascii_lowercase();
                        let p = match lower.as_str() {
                            "any" => Some(Partition::Any),
                            "auto" => Some(Partition::Auto),
                            "none" => Some(Partition::None),
                            n if !n.is_empty()
                                && n.len() <= 5
                                && n.bytes().all(|b| b.is_ascii_digit()) =>
                            {
                                n.parse().ok().map(Partition::Number)
                            }
                            _ => None,
                        };
                        if p.is_none() {
                            r.error(
                                v,
                                &at,
                                format!(
                                    "{} is not a partition; write auto, any, none or a number",
                                    quote(s)
                                ),
                            );
                        }
                        p.map(|p| f.partition = p)
                    }
                    _ => {
                        r.wrong_type(v, &at, "auto, any, none or a partition number");
                        None
                    }
                },
                "overwrite" => r.bool(v, &at).map(|b| f.overwrite = b),
                "replace_fs" => scalar(r, v, &at).map(|s| f.replace_fs = Some(s)),
                "extra_opts" => match &v.value {
                    Value::Str(s) if s.len() <= MAX_CMD => {
                        f.extra_opts = s.split_whitespace().map(str::to_string).collect();
                        Some(())
                    }
                    _ => r.list(v, &at, MAX_ENTRIES).and_then(|opts| {
                        let mut all = Vec::new();
                        for (j, o) in opts.iter().enumerate() {
                            all.push(scalar(r, o, &index(&at, j))?);
                        }
                        f.extra_opts = all;
                        Some(())
                    }),
                },
                _ => r.string(v, &at, MAX_CMD).map(|c| f.cmd = Some(c)),
            };
            if got.is_none() {
                continue 'entries;
            }
        }
        // cloud-init's schema takes such an entry and fails it at boot: left out here.
        if f.device.is_empty() {
            r.not_applied(
                item,
                &at,
                "an entry without a device (cloud-init fails it at boot)",
                "write device: /dev/… or a device_aliases name",
            );
            continue;
        }
        if f.filesystem.is_none() && f.cmd.is_none() {
            r.not_applied(
                item,
                &at,
                "an entry with neither filesystem nor cmd (cloud-init: \"No way to create filesystem\")",
                "write filesystem: ext4 (or a cmd)",
            );
            continue;
        }
        // `cmd` is run by the shell with the label put in as written.
        if let (Some(_), Some(l), Some(n)) = (&f.cmd, &f.label, label_node) {
            if !plain(l) {
                r.error(n, &join(&at, "label"), format!("{} holds a character the shell of cmd would read; write letters, digits and _.,:@%+=-", quote(l)));
                continue;
            }
        }
        out.push(f);
    }
    cfg.fs_setup = Some(out);
}

/// `device_aliases`: names for devices, used by `disk_setup` and `fs_setup`.
pub(crate) fn parse_aliases(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(node, key, "a mapping of name to /dev/ path");
        return;
    };
    if entries.len() > MAX_ENTRIES {
        r.error(
            node,
            key,
            format!("has {} names; at most {MAX_ENTRIES}", entries.len()),
        );
        return;
    }
    let mut out = BTreeMap::new();
    for (k, v) in entries {
        let at = join(key, &k.text);
        let Some(target) = device_name(r, v, &at) else {
            continue;
        };
        if !target.starts_with("/dev/") {
            r.error(v, &at, format!("{} is not a /dev/ path", quote(&target)));
            continue;
        }
        out.insert(k.text.clone(), target);
    }
    cfg.device_aliases = Some(out);
}

// ---------------------------------------------------------------------------------------
// What the devices hold.

/// Partition `n` of `disk`: `<disk>N`, or `<disk>pN` when its name ends in a digit
/// (`/dev/nvme0n1p1`), as the kernel names them.
pub(crate) fn partition_path(disk: &str, n: u32) -> String {
    if disk.ends_with(|c: char| c.is_ascii_digit()) {
        format!("{disk}p{n}")
    } else {
        format!("{disk}{n}")
    }
}

// ---------------------------------------------------------------------------------------
// The plan.

/// One command of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Op {
    /// The program (a name looked up on the root's `PATH`) and its arguments.
    pub argv: Vec<String>,
    /// What it reads on its standard input (`sfdisk`'s script).
    pub input: Option<String>,
    /// Its failure is only logged (`udevadm settle`, `partprobe`, as cloud-init).
    pub best_effort: bool,
    /// It makes a file system (`mkfs`, the user's `cmd`): on a large disk that can take
    /// far longer than a tool, so it is bounded by the command timeout.
    pub formats: bool,
    /// The user's own command (`cmd`): its words may hold secrets, as runcmd's may, so
    /// the log and the records give only how many there are.
    pub users: bool,
}

impl Op {
    fn new(argv: &[&str]) -> Op {
        Op {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            input: None,
            best_effort: false,
            formats: false,
            users: false,
        }
    }

    /// The program to run for this command, found at `path` in the root: a format
    /// bounded by `command_timeout`, anything else by `tool_timeout`.
    pub(crate) fn program<'a>(
        &'a self,
        path: &'a str,
        command_timeout: Duration,
        tool_timeout: Duration,
    ) -> Program<'a> {
        Program {
            module: "disk_setup",
            program: path,
            args: self.argv[1..].to_vec(),
            env: Vec::new(),
            timeout: if self.formats {
                command_timeout
            } else {
                tool_timeout
            },
            hide_args: self.users,
        }
    }

    /// The command as `plan` shows it.
    pub(crate) fn shown(&self) -> String {
        let mut s = self.argv.join(" ");
        if let Some(i) = &self.input {
            s.push_str(&format!(" <<< {:?}", i));
        }
        s
    }
}

/// What one entry does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Runs these commands.
    Run(Vec<Op>),
    /// Nothing, for this reason.
    Skip(String),
    /// The entry fails, for this reason (cloud-init's RuntimeError, logged).
    Fail(String),
}

/// A device name as the module uses it: an alias replaced by its device. Meta names
/// (`ephemeral0`, `swap`) name nothing on vSphere (its datasource maps none).
pub(crate) fn resolve(name: &str, aliases: &BTreeMap<String, String>) -> Result<String, String> {
    if let Some(d) = aliases.get(name) {
        return Ok(d.clone());
    }
    if name.starts_with("/dev/") {
        return Ok(name.to_string());
    }
    Err(format!(
        "Device {name} did not exist and was not created with a udevadm settle. ({name} is neither a /dev/ path nor a device_aliases name; vSphere's datasource maps no meta names such as ephemeral0)"
    ))
}

/// The device and partition an `fs_setup` entry names: `<alias>.<N>` is the alias's
/// device and partition N (the entry's `partition` overridden, as cloud-init does); a
/// `.N` on anything else keeps the name as written, which then names no device.
pub(crate) fn resolve_fs(
    f: &Filesystem,
    aliases: &BTreeMap<String, String>,
) -> Result<(String, Partition), String> {
    let dotted = f
        .device
        .rsplit_once('.')
        .and_then(|(_, p)| dotted_partition(p));
    if let Some(n) = dotted.filter(|_| f.partition != Partition::Any) {
        {
            tracing::warn!(
                "fs_setup: partition {n} from the dotted device name {} overrides the partition key",
                f.device
            );
        }
    }
    device_of_fs(f, aliases)
}

/// The partition number after a device name's dot (`sdb.2`), if it is one.
fn dotted_partition(part: &str) -> Option<u32> {
    part.parse::<u32>()
        .ok()
        .filter(|_| !part.is_empty() && part.len() <= 5 && part.bytes().all(|b| b.is_ascii_digit()))
}

/// [`resolve_fs`] without its warning (for the facts the document asks for).
fn device_of_fs(
    f: &Filesystem,
    aliases: &BTreeMap<String, String>,
) -> Result<(String, Partition), String> {
    if let Some((dev, part)) = f.device.rsplit_once('.') {
        let Some(n) = dotted_partition(part) else {
            return Err(format!(
                "{}: {} is not a partition number",
                f.device,
                quote(part)
            ));
        };
        return match aliases.get(dev) {
            Some(d) => Ok((d.clone(), Partition::Number(n))),
            None => resolve(&f.device, aliases).map(|d| (d, Partition::Number(n))),
        };
    }
    resolve(&f.device, aliases).map(|d| (d, f.partition))
}

/// An sgdisk code's GUID, for comparing a layout's types with a GPT's.
fn sgdisk_guid(code: &str) -> Option<&'static str> {
    Some(match code.to_ascii_uppercase().as_str() {
        "8300" => LINUX_FS_GUID,
        "8200" => "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F",
        "8E00" => "E6D6D379-F507-44C2-A23C-238F2A3DF928",
        "FD00" => "A19D880F-05FC-4D3B-A006-743F0F84911E",
        "EF00" => "C12A7328-F81F-11D2-BA4B-00A0C93EC93B",
        "EF02" => "21686148-6449-6E6F-744E-656564454649",
        "0700" => "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7",
        "8302" => "933AC7E1-2EB4-4F13-B844-0E14E2AEF915",
        "8304" => "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709",
        _ => return None,
    })
}

/// A layout type padded as cloud-init does for sgdisk (`82` → `8200`).
fn padded(t: &str) -> String {
    format!("{t:0<4}")
}

/// A type as the device's table holds it, for comparison.
fn same_type(table_label: &str, want: &str, found: &str) -> bool {
    if table_label == "gpt" {
        let want = if want.len() == 36 {
            want.to_ascii_uppercase()
        } else {
            match sgdisk_guid(&padded(want)) {
                Some(g) => g.to_string(),
                None => return false,
            }
        };
        want == found.to_ascii_uppercase()
    } else {
        let norm = |t: &str| t.trim_start_matches('0').to_ascii_lowercase();
        norm(want) == norm(found)
    }
}

/// cloud-init's `check_partition_layout`: whether the table already is the layout (as
/// many partitions, and the types given equal).
fn layout_matches(d: &Disk, dev: &Device) -> bool {
    let Some(t) = &dev.table else {
        return false;
    };
    let label_ok = match d.table_type {
        TableType::Mbr => t.label == "dos",
        TableType::Gpt => t.label == "gpt",
    };
    match &d.layout {
        Layout::Whole => label_ok && !t.types.is_empty(),
        Layout::Parts(parts) => {
            label_ok
                && parts.len() == t.types.len()
                && parts.iter().zip(&t.types).all(|(p, found)| {
                    p.ptype
                        .as_deref()
                        .is_none_or(|want| same_type(&t.label, want, found))
                })
        }
        Layout::Keep | Layout::Remove => false,
    }
}

/// Each partition's size in sectors (cloud-init's `int(size * percent / 100)`; the last
/// takes the rest, shown as `None`) and type.
fn sizes(parts: &[Part], sectors: u64) -> Vec<(Option<u64>, Option<&str>)> {
    let last = parts.len() - 1;
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let size = (i != last).then(|| (sectors as f64 * (p.percent / 100.0)) as u64);
            (size, p.ptype.as_deref())
        })
        .collect()
}

/// The commands that make the table of `d` on `dev` (`sgdisk` when the root has it, for
/// GPT), then make the kernel read it.
fn partition_ops(d: &Disk, dev: &Device, have_sgdisk: bool) -> Vec<Op> {
    let path = dev.path();
    let whole = [Part {
        percent: 100.0,
        ptype: None,
    }];
    let parts: &[Part] = match &d.layout {
        Layout::Parts(p) => p,
        _ => &whole,
    };
    let sized = sizes(parts, dev.sectors);
    let mut ops = Vec::new();
    match d.table_type {
        TableType::Mbr => {
            let script: Vec<String> = match &d.layout {
                Layout::Whole => vec![",,83".into()],
                _ => sized
                    .iter()
                    .map(|(size, t)| {
                        let t = t.unwrap_or("83");
                        match size {
                            Some(s) => format!(",{s},{t}"),
                            None => format!(",,{t}"),
                        }
                    })
                    .collect(),
            };
            ops.push(Op {
                input: Some(script.join("\n") + "\n"),
                ..Op::new(&["sfdisk", "--force", path])
            });
        }
        TableType::Gpt if have_sgdisk => {
            ops.push(Op::new(&["sgdisk", "-Z", path]));
            for (i, (size, t)) in sized.iter().enumerate() {
                let n = i + 1;
                let end = size.map_or("0".to_string(), |s| format!("+{s}"));
                ops.push(Op::new(&["sgdisk", "-n", &format!("{n}:0:{end}"), path]));
                if let Some(t) = t {
                    ops.push(Op::new(&[
                        "sgdisk",
                        "-t",
                        &format!("{n}:{}", padded(t)),
                        path,
                    ]));
                }
            }
        }
        TableType::Gpt => {
            let script: Vec<String> = sized
                .iter()
                .map(|(size, t)| {
                    let guid = t
                        .and_then(|t| {
                            if t.len() == 36 {
                                Some(t.to_ascii_uppercase())
                            } else {
                                sgdisk_guid(&padded(t)).map(str::to_string)
                            }
                        })
                        .unwrap_or_else(|| LINUX_FS_GUID.to_string());
                    match size {
                        Some(s) => format!(",+{s},{guid}"),
                        None => format!(",,{guid}"),
                    }
                })
                .collect();
            ops.push(Op {
                input: Some(script.join("\n") + "\n"),
                ..Op::new(&["sfdisk", "-X", "gpt", "--force", path])
            });
        }
    }
    ops.extend(reread(path));
    ops
}

/// cloud-init's `read_parttbl`: settle, re-read the table, settle; failures logged only.
fn reread(path: &str) -> Vec<Op> {
    [
        vec!["udevadm", "settle"],
        vec!["partprobe", path],
        vec!["udevadm", "settle"],
    ]
    .iter()
    .map(|a| Op {
        best_effort: true,
        ..Op::new(a)
    })
    .collect()
}

/// cloud-init's `mkpart` for one `disk_setup` entry, `dev` being what its device holds.
pub(crate) fn plan_disk(d: &Disk, dev: &Device, have_sgdisk: bool) -> Outcome {
    let path = dev.path();
    if d.layout == Layout::Keep {
        return Outcome::Skip(format!("{path}: Device is not to be partitioned, skipping"));
    }
    if dev.blocks[0].kind != "disk" {
        return Outcome::Fail(format!("Device {path} is not a disk device!"));
    }
    if d.layout == Layout::Remove {
        // As cloud-init, whatever `overwrite` says.
        let mut ops: Vec<Op> = dev.blocks[1..]
            .iter()
            .filter(|b| b.kind != "disk" && b.kind != "crypt")
            .map(|b| Op::new(&["wipefs", "--all", &b.path]))
            .collect();
        let of = format!("of={path}");
        ops.push(Op::new(&[
            "dd",
            "if=/dev/zero",
            &of,
            "bs=512",
            "count=2048",
            "conv=notrunc,fsync",
        ]));
        let bytes = dev.sectors * dev.sector_size;
        if bytes >= 2 << 20 {
            let seek = format!("seek={}", bytes / 512 - 2048);
            ops.push(Op::new(&[
                "dd",
                "if=/dev/zero",
                &of,
                "bs=512",
                &seek,
                "count=2048",
                "conv=notrunc,fsync",
            ]));
        }
        ops.extend(reread(path));
        return Outcome::Run(ops);
    }
    if layout_matches(d, dev) {
        return Outcome::Skip(format!("{path}: Device partitioning layout matches"));
    }
    if !d.overwrite && (dev.blocks.len() > 1 || dev.blocks[0].fs.is_some()) {
        return Outcome::Skip(format!(
            "Skipping partitioning on configured device {path}: it has a partition or a file system (overwrite is false)"
        ));
    }
    if dev.sectors == 0 {
        return Outcome::Fail(format!("{path}: its size could not be read"));
    }
    Outcome::Run(partition_ops(d, dev, have_sgdisk))
}

/// What `dev` holds after `plan_disk`'s commands ran: the new table, its partitions
/// without a file system (what `plan` shows for `fs_setup` after `disk_setup`).
pub(crate) fn after_partitioning(d: &Disk, dev: &Device) -> Device {
    let mut out = dev.clone();
    let path = dev.path().to_string();
    out.blocks.truncate(1);
    out.blocks[0].fs = None;
    let types: Vec<String> = match &d.layout {
        Layout::Parts(p) => p
            .iter()
            .map(|p| p.ptype.clone().unwrap_or_else(|| "83".into()))
            .collect(),
        Layout::Whole => vec!["83".into()],
        Layout::Keep | Layout::Remove => Vec::new(),
    };
    out.blocks.extend((1..=types.len()).map(|n| Block {
        path: partition_path(&path, n as u32),
        kind: "part".into(),
        fs: None,
    }));
    out.table = (!types.is_empty()).then(|| Table {
        label: match d.table_type {
            TableType::Mbr => "dos".into(),
            TableType::Gpt => "gpt".into(),
        },
        types,
    });
    out
}

/// cloud-init's `lookup_force_flag`.
fn force_flag(fs: &str) -> Option<&'static str> {
    let fs = fs.to_ascii_lowercase();
    if fs.contains("ext") {
        return Some("-F");
    }
    match fs.as_str() {
        "btrfs" | "xfs" | "reiserfs" | "swap" => Some("-f"),
        _ => {
            tracing::warn!("fs_setup: Force flag for {fs} is unknown.");
            None
        }
    }
}

/// cloud-init's `find_device_node`: the block of `dev` to format and whether a file
/// system already there is reused.
fn find_node(dev: &Device, f: &Filesystem, label_match: bool) -> Option<(String, bool)> {
    let fstype_of = |b: &Block| b.fs.as_ref().map_or("", |s| s.fstype.as_str()).to_string();
    let mut raw_used = false;
    for b in &dev.blocks {
        let fstype = fstype_of(b);
        let label = b.fs.as_ref().and_then(|s| s.label.as_deref()).unwrap_or("");
        if !label_match && f.replace_fs.as_deref() == Some(fstype.as_str()) {
            return Some((b.path.clone(), false));
        }
        if f.filesystem.as_deref() == Some(fstype.as_str())
            // cloud-init: "label of None is same as no label".
            && (!label_match || f.label.as_deref().unwrap_or("") == label)
        {
            return Some((b.path.clone(), true));
        }
        if b.kind == "disk" || b.kind == "part" {
            if b.kind != "disk" || !fstype.is_empty() {
                raw_used = true;
            }
            if b.kind != "disk" && fstype.is_empty() {
                return Some((b.path.clone(), false));
            }
        }
    }
    if !raw_used {
        return Some((dev.path().to_string(), false));
    }
    None
}

/// cloud-init's `mkfs` for one `fs_setup` entry: `dev` is what its device holds,
/// `partition` the resolved partition, `mkfs(name)` whether the root has a program.
pub(crate) fn plan_fs(
    f: &Filesystem,
    dev: &Device,
    partition: Partition,
    mkfs: &dyn Fn(&str) -> bool,
) -> Outcome {
    let label = f.label.as_deref();
    let mut target = dev.path().to_string();
    let mut target_kind = dev.blocks[0].kind.clone();
    match partition {
        Partition::Number(n) => {
            target = partition_path(&target, n);
            let Some(b) = dev.blocks.iter().find(|b| b.path == target) else {
                return Outcome::Skip(format!(
                    "fs_setup: warning: {target} is not a block device; nothing made on it"
                ));
            };
            target_kind = b.kind.clone();
            if let Some(sig) = &b.fs {
                if sig.label.as_deref() == label
                    && f.filesystem.as_deref() == Some(&sig.fstype)
                    && !f.overwrite
                {
                    return Outcome::Skip(format!("Device {target} has required file system"));
                }
            } else if label.is_none() && f.filesystem.is_none() {
                return Outcome::Skip(format!("Device {target} has required file system"));
            }
        }
        Partition::Any | Partition::Auto => match find_node(dev, f, partition == Partition::Auto) {
            Some((_, true)) => {
                return Outcome::Skip(format!(
                    "{}: Found filesystem match, skipping formatting.",
                    dev.path()
                ))
            }
            Some((t, false)) => {
                if let Some(b) = dev.blocks.iter().find(|b| b.path == t) {
                    target_kind = b.kind.clone();
                }
                target = t;
            }
            None => {
                return Outcome::Skip(format!(
                    "fs_setup: warning: {}: Failed to find device during available device search.",
                    dev.path()
                ))
            }
        },
        Partition::None => {}
    }
    if let Some(cmd) = &f.cmd {
        if f.overwrite {
            tracing::warn!("fs_setup:overwrite ignored because cmd was specified: {cmd}");
        }
        if !f.extra_opts.is_empty() {
            tracing::warn!("fs_setup:extra_opts ignored because cmd was specified: {cmd}");
        }
        let cmd = cmd
            .replace("%(label)s", label.unwrap_or("None"))
            .replace("%(filesystem)s", f.filesystem.as_deref().unwrap_or("None"))
            .replace("%(device)s", &target);
        return Outcome::Run(vec![Op {
            formats: true,
            users: true,
            ..Op::new(&["sh", "-c", &cmd])
        }]);
    }
    let Some(fs) = f.filesystem.as_deref() else {
        return Outcome::Fail(format!(
            "No way to create filesystem '{}'. fs_type or fs_cmd must be set.",
            label.unwrap_or("None")
        ));
    };
    let program = [format!("mkfs.{fs}"), format!("mk{fs}")]
        .into_iter()
        .find(|p| mkfs(p));
    let Some(program) = program else {
        return Outcome::Skip(format!(
            "fs_setup: warning: Cannot create fstype '{fs}'.  No mkfs.{fs} command"
        ));
    };
    let mut argv = vec![program];
    if let Some(l) = label {
        // mkfs.fat takes the label with -n (cloud-init passes -L, which it refuses).
        let flag = if ["vfat", "fat", "msdos"].contains(&fs) {
            "-n"
        } else {
            "-L"
        };
        argv.extend([flag.to_string(), l.to_string()]);
    }
    if f.overwrite || target_kind == "disk" {
        if let Some(flag) = force_flag(fs) {
            argv.push(flag.into());
        }
    }
    argv.extend(f.extra_opts.iter().cloned());
    argv.push(target);
    Outcome::Run(vec![Op {
        argv,
        input: None,
        best_effort: false,
        formats: true,
        users: false,
    }])
}

// ---------------------------------------------------------------------------------------
// Running it.

/// The programs it may run or look for.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.disk_setup.is_none() && cfg.fs_setup.is_none() {
        return &[];
    }
    &[
        "sfdisk",
        "sgdisk",
        "lsblk",
        "blkid",
        "blockdev",
        "partprobe",
        "udevadm",
        "wipefs",
        "dd",
        "sh",
    ]
}

/// A meta name of a cloud's datasource (`ephemeral0`, `swap`, `ami`, `root`, `ebs…`),
/// which no alias maps: vSphere's datasource maps none (as in `mounts`).
fn meta_name(name: &str, aliases: &BTreeMap<String, String>) -> bool {
    let dev = name.rsplit_once('.').map_or(name, |(d, _)| d);
    !aliases.contains_key(dev)
        && (["ami", "root", "swap"].contains(&dev)
            || dev.starts_with("ephemeral")
            || dev.starts_with("ebs"))
}

/// The document's entries, the device each names resolved, in cloud-init's order (every
/// `disk_setup` entry, then every `fs_setup` entry).
enum Entry<'a> {
    Disk(&'a Disk),
    Fs(&'a Filesystem),
}

fn entries(cfg: &CloudConfig) -> Vec<Entry<'_>> {
    let disks = cfg.disk_setup.iter().flatten().map(Entry::Disk);
    let fss = cfg.fs_setup.iter().flatten().map(Entry::Fs);
    disks.chain(fss).collect()
}

/// Plans one entry against `look(device)`, which says what a device holds (after the
/// entries before it, in a preview); returns the device the plan is for.
fn plan_entry(
    e: &Entry,
    aliases: &BTreeMap<String, String>,
    look: &mut dyn FnMut(&str) -> Result<Device, String>,
    have: &dyn Fn(&str) -> bool,
) -> (Option<Device>, Outcome) {
    let name = match e {
        Entry::Disk(d) => &d.device,
        Entry::Fs(f) => &f.device,
    };
    if meta_name(name, aliases) {
        return (
            None,
            Outcome::Skip(format!(
                "warning: {name} is a meta name of a cloud's datasource, which names no device on vSphere; name the disk with device_aliases or /dev/disk/by-path/…"
            )),
        );
    }
    match e {
        Entry::Disk(d) => {
            if d.layout == Layout::Keep {
                return (
                    None,
                    Outcome::Skip(format!(
                        "{}: Device is not to be partitioned, skipping",
                        d.device
                    )),
                );
            }
            let dev = match resolve(&d.device, aliases).and_then(|p| look(&p)) {
                Ok(dev) => dev,
                Err(e) => return (None, Outcome::Fail(e)),
            };
            let out = plan_disk(d, &dev, have("sgdisk"));
            (Some(dev), out)
        }
        Entry::Fs(f) => {
            let (path, part) = match resolve_fs(f, aliases) {
                Ok(x) => x,
                Err(e) => return (None, Outcome::Fail(e)),
            };
            let dev = match look(&path) {
                Ok(dev) => dev,
                Err(e) => return (None, Outcome::Fail(e)),
            };
            let out = plan_fs(f, &dev, part, have);
            (Some(dev), out)
        }
    }
}

/// What the entry is, for messages.
fn entry_name(e: &Entry) -> String {
    match e {
        Entry::Disk(d) => format!("disk_setup {}", d.device),
        Entry::Fs(f) => format!("fs_setup {}", f.device),
    }
}

/// Partitions the disks, then makes the file systems, on the running system only. Each
/// entry is planned against its device as it is then; an entry that fails does not stop
/// the next (as cloud-init), but makes the module fail.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    let all = entries(s.cfg);
    if all.is_empty() {
        return skipped("no disk_setup or fs_setup entry");
    }
    if !s.ctx.live() {
        tracing::warn!("disk_setup: {OFFLINE}");
        return skipped(OFFLINE);
    }
    if let Err(o) = s.start() {
        return o;
    }
    let empty = BTreeMap::new();
    let aliases = s.cfg.device_aliases.as_ref().unwrap_or(&empty);
    let prober = Prober {
        root: &s.ctx.root,
        timeout: s.ctx.tool_timeout,
        stop: s.ctx.stop,
        settle: true,
    };
    let have = |p: &str| which(&s.ctx.root, p).is_some();
    let (mut done, mut failures) = (Vec::new(), Vec::new());
    for e in &all {
        let name = entry_name(e);
        let (_, out) = plan_entry(e, aliases, &mut |p| prober.device(p), &have);
        match out {
            Outcome::Skip(why) => {
                tracing::info!("{name}: {why}");
                done.push(format!("{name}: skipped ({why})"));
            }
            Outcome::Fail(why) => {
                tracing::warn!("{name}: failed: {why}");
                failures.push(format!("{name}: {why}"));
            }
            Outcome::Run(ops) => match carry_out(s, &ops) {
                Ok(()) => done.push(format!(
                    "{name}: {}",
                    ops.iter()
                        .filter(|o| !o.best_effort)
                        .map(|o| o.argv.join(" "))
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
                Err(RunEnd::Interrupted) => return ModuleOutcome::Interrupted,
                Err(end) => {
                    let why = match end {
                        RunEnd::Failed(w) => w,
                        _ => String::new(),
                    };
                    tracing::warn!("{name}: failed: {why}");
                    failures.push(format!("{name}: {why}"));
                }
            },
        }
    }
    if failures.is_empty() {
        ModuleOutcome::Ran {
            note: done.join("; "),
        }
    } else {
        failed(failures.join("; "))
    }
}

/// Runs an entry's commands in order: a format with the command timeout, the rest with
/// the tool timeout.
fn carry_out(s: &Step, ops: &[Op]) -> Result<(), RunEnd> {
    for op in ops {
        let Some(path) = which(&s.ctx.root, &op.argv[0]) else {
            if op.best_effort {
                continue;
            }
            return Err(RunEnd::Failed(format!(
                "{} is not in the root; install it in the template",
                op.argv[0]
            )));
        };
        let p = op.program(&path, s.ctx.command_timeout, s.ctx.tool_timeout);
        let input = op.input.as_deref().unwrap_or_default().as_bytes();
        match exec::run_with_input(&s.ctx.root, &p, input, s.ctx.stop) {
            RunEnd::Succeeded => {}
            RunEnd::Failed(why) if op.best_effort => {
                tracing::info!("disk_setup: {why} (only logged, as cloud-init)")
            }
            other => return Err(other),
        }
    }
    Ok(())
}

/// What it needs of the root's facts (only with `disk_setup` or `fs_setup` entries): the
/// devices they name and the programs they may run.
pub(crate) fn wants(cfg: &CloudConfig, w: &mut Wanted) {
    let all = entries(cfg);
    if all.is_empty() {
        return;
    }
    let empty = BTreeMap::new();
    let aliases = cfg.device_aliases.as_ref().unwrap_or(&empty);
    let mut want = DisksWanted {
        programs: vec!["sgdisk".to_string()],
        ..Default::default()
    };
    for e in &all {
        let path = match e {
            Entry::Disk(d) => resolve(&d.device, aliases),
            Entry::Fs(f) => {
                if let Some(fs) = &f.filesystem {
                    want.programs
                        .extend([format!("mkfs.{fs}"), format!("mk{fs}")]);
                }
                device_of_fs(f, aliases).map(|(p, _)| p)
            }
        };
        if let Ok(p) = path {
            want.devices.push(p);
        }
    }
    w.disks = Some(want);
}

/// What it would do: each entry's commands against the devices as they are (an
/// `fs_setup` entry after the partitioning planned before it).
pub(crate) fn preview(l: &Look) -> Vec<String> {
    let Some(facts) = l.facts.disk_setup.as_ref() else {
        return vec!["nothing: no disk_setup or fs_setup entry".into()];
    };
    let all = entries(l.cfg);
    if !facts.live {
        let mut out = vec![format!("on the running system only: {OFFLINE}")];
        out.extend(all.iter().map(|e| {
            let what = match e {
                Entry::Disk(d) => format!(
                    "partition {} ({:?}, layout {}, overwrite {})",
                    d.device,
                    d.table_type,
                    layout_text(&d.layout),
                    d.overwrite
                ),
                Entry::Fs(f) => format!(
                    "make {} on {} (partition {:?}{})",
                    f.filesystem.as_deref().unwrap_or("the cmd's file system"),
                    f.device,
                    f.partition,
                    f.label
                        .as_deref()
                        .map(|l| format!(", label {l}"))
                        .unwrap_or_default()
                ),
            };
            format!("on the running system only: {what}")
        }));
        return out;
    }
    preview_live(l.cfg, facts)
}

/// A layout in words.
fn layout_text(l: &Layout) -> String {
    match l {
        Layout::Keep => "false".into(),
        Layout::Whole => "true".into(),
        Layout::Remove => "remove".into(),
        Layout::Parts(p) => format!(
            "[{}]",
            p.iter()
                .map(|p| match &p.ptype {
                    Some(t) => format!("[{}, {t}]", p.percent),
                    None => p.percent.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The preview on the running system, the devices as probed.
fn preview_live(cfg: &CloudConfig, facts: &DiskSetupFacts) -> Vec<String> {
    let empty = BTreeMap::new();
    let aliases = cfg.device_aliases.as_ref().unwrap_or(&empty);
    let mut state = facts.devices.clone();
    let have = |p: &str| facts.have.iter().any(|h| h == p);
    let mut out = Vec::new();
    for e in &entries(cfg) {
        let name = entry_name(e);
        let (dev, plan) = plan_entry(
            e,
            aliases,
            &mut |p| {
                state
                    .get(p)
                    .cloned()
                    .unwrap_or_else(|| Err(format!("{p} was not probed")))
            },
            &have,
        );
        match plan {
            Outcome::Skip(why) => out.push(format!("nothing: {name}: {why}")),
            Outcome::Fail(why) => out.push(format!("fails: {name}: {why}")),
            Outcome::Run(ops) => {
                match (e, dev) {
                    (Entry::Disk(d), Some(dev)) => {
                        let key = resolve(&d.device, aliases).unwrap_or(d.device.clone());
                        state.insert(key, Ok(after_partitioning(d, &dev)));
                    }
                    // The file system made is there for the entries after it.
                    (Entry::Fs(f), Some(mut dev)) => {
                        let target = ops.last().and_then(|o| o.argv.last());
                        if let (Some(b), Some(fstype)) = (
                            dev.blocks.iter_mut().find(|b| Some(&b.path) == target),
                            &f.filesystem,
                        ) {
                            b.fs = Some(Signature {
                                fstype: fstype.clone(),
                                label: f.label.clone(),
                            });
                            if let Ok((key, _)) = resolve_fs(f, aliases) {
                                state.insert(key, Ok(dev));
                            }
                        }
                    }
                    _ => {}
                }
                out.extend(
                    ops.iter()
                        .filter(|o| !o.best_effort)
                        .map(|o| format!("on the running system only: run {}", o.shown())),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
    use crate::cloud_config::modules::test_support::assert_refused;
    use crate::cloud_config::modules::test_support::clean_config as cfg;
    use crate::cloud_config::read::Severity;
    use crate::facts::disks::{parse_blkid, parse_sfdisk_json};
    use crate::root::Root;
    use std::path::Path;
    use std::sync::atomic::AtomicBool;

    fn disk(path: &str, sectors: u64) -> Device {
        Device {
            blocks: vec![Block {
                path: path.into(),
                kind: "disk".into(),
                fs: None,
            }],
            sectors,
            sector_size: 512,
            table: None,
        }
    }

    fn sig(fstype: &str, label: Option<&str>) -> Option<Signature> {
        Some(Signature {
            fstype: fstype.into(),
            label: label.map(str::to_string),
        })
    }

    /// `disk` with partitions holding these signatures (a DOS table of type 83).
    fn parted(path: &str, parts: &[Option<Signature>]) -> Device {
        let mut d = disk(path, 2_097_152);
        for (i, fs) in parts.iter().enumerate() {
            d.blocks.push(Block {
                path: partition_path(path, i as u32 + 1),
                kind: "part".into(),
                fs: fs.clone(),
            });
        }
        d.table = Some(Table {
            label: "dos".into(),
            types: vec!["83".into(); parts.len()],
        });
        d
    }

    fn shown(o: &Outcome) -> Vec<String> {
        match o {
            Outcome::Run(ops) => ops
                .iter()
                .filter(|o| !o.best_effort)
                .map(Op::shown)
                .collect(),
            Outcome::Skip(w) => vec![format!("skip: {w}")],
            Outcome::Fail(w) => vec![format!("fail: {w}")],
        }
    }

    #[test]
    fn the_upstream_example_reads_as_written() {
        let c = cfg("device_aliases: {my_alias: /dev/sdb, swap_disk: /dev/sdc}\ndisk_setup:\n  /dev/sdd: {layout: true, overwrite: true, table_type: mbr}\n  my_alias: {layout: [50, 50], overwrite: true, table_type: gpt}\n  swap_disk: {layout: [[100, 82]], overwrite: true, table_type: gpt}\nfs_setup:\n- {cmd: mkfs -t %(filesystem)s -L %(label)s %(device)s, device: my_alias.1, filesystem: ext4, label: fs1}\n- {device: /dev/sdd1, filesystem: ext4, label: fs3, partition: 2, extra_opts: '-E lazy_itable_init=0'}\n");
        let d = c.disk_setup.unwrap();
        assert_eq!(
            d.iter().map(|d| d.device.as_str()).collect::<Vec<_>>(),
            ["/dev/sdd", "my_alias", "swap_disk"]
        );
        assert_eq!(d[0].layout, Layout::Whole);
        assert_eq!(
            d[2].layout,
            Layout::Parts(vec![Part {
                percent: 100.0,
                ptype: Some("82".into())
            }])
        );
        let f = c.fs_setup.unwrap();
        assert_eq!(f[1].partition, Partition::Number(2));
        assert_eq!(f[1].extra_opts, ["-E", "lazy_itable_init=0"]);
        let aliases = c.device_aliases.unwrap();
        assert_eq!(
            resolve_fs(&f[0], &aliases),
            Ok(("/dev/sdb".into(), Partition::Number(1)))
        );
    }

    #[test]
    fn hostile_and_wrong_values_are_refused_at_the_door() {
        assert_refused(&[
            (
                "disk_setup: {'/dev/sdb;reboot': {layout: true}}",
                "holds a character",
            ),
            ("disk_setup: {/etc/passwd: {layout: true}}", "outside /dev"),
            ("disk_setup: {/dev/../etc: {layout: true}}", ".. component"),
            (
                "disk_setup: {/dev/sdb: {layout: [[50, \"83\\n,,\"], 50]}}",
                "control character",
            ),
            (
                "disk_setup: {/dev/sdb: {layout: [[50, '83,,']]}}",
                "not a partition type",
            ),
            (
                "disk_setup: {/dev/sdb: {layout: [150]}}",
                "not a percentage",
            ),
            ("disk_setup: {/dev/sdb: {layout: [-1]}}", "not a percentage"),
            (
                "disk_setup: {/dev/sdb: {table_type: msdos}}",
                "write mbr or gpt",
            ),
            (
                "disk_setup: {/dev/sdb: {layout: maybe}}",
                "write true, false, remove",
            ),
            ("disk_setup: {/dev/sdb: {overwrite: 1}}", "true or false"),
            (
                "fs_setup: [{device: /dev/sdb, filesystem: 'ext4; reboot'}]",
                "not a file system type",
            ),
            (
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: first}]",
                "write auto, any, none",
            ),
            (
                "fs_setup: [{device: /dev/sdb, cmd: 'mkfs -L %(label)s', label: '$(reboot)'}]",
                "shell of cmd",
            ),
            ("device_aliases: {data: sdb}", "not a /dev/ path"),
        ]);
        // More than four MBR partitions: cloud-init fails that entry; here it is not
        // applied, the rest of the document is.
        let (c, p) = document::from_text("disk_setup: {/dev/sdb: {layout: [20, 20, 20, 20, 20]}}");
        assert!(p.iter().all(|p| p.severity == Severity::Unknown), "{p:?}");
        assert!(p[0].message.contains("Only simply partitioning"), "{p:?}");
        assert_eq!(c.disk_setup, Some(vec![]));
        // So is an fs_setup entry without a device, or without filesystem and cmd.
        for (doc, want) in [
            ("fs_setup: [{filesystem: ext4}]", "without a device"),
            (
                "fs_setup: [{device: /dev/sdb}]",
                "neither filesystem nor cmd",
            ),
        ] {
            let (c, p) = document::from_text(doc);
            assert!(
                p.len() == 1 && p[0].severity == Severity::Unknown && p[0].message.contains(want),
                "{doc}: {p:?}"
            );
            assert_eq!(c.fs_setup, Some(vec![]));
        }
    }

    #[test]
    fn names_resolve_as_cloud_init_resolves_them() {
        let aliases: BTreeMap<String, String> = [("my".to_string(), "/dev/sdb".to_string())].into();
        let fs = |device: &str, partition| Filesystem {
            device: device.into(),
            filesystem: Some("ext4".into()),
            label: None,
            partition,
            overwrite: false,
            replace_fs: None,
            extra_opts: vec![],
            cmd: None,
        };
        assert_eq!(resolve("my", &aliases), Ok("/dev/sdb".into()));
        assert_eq!(resolve("/dev/sdc", &aliases), Ok("/dev/sdc".into()));
        let e = resolve("sdb", &aliases).unwrap_err();
        assert!(
            e.contains("did not exist") && e.contains("neither a /dev/ path"),
            "{e}"
        );
        assert!(meta_name("ephemeral0", &aliases) && meta_name("ephemeral0.1", &aliases));
        assert!(!meta_name("my.1", &aliases) && !meta_name("/dev/sdb", &aliases));
        let eph: BTreeMap<String, String> =
            [("ephemeral0".to_string(), "/dev/sdb".to_string())].into();
        assert!(!meta_name("ephemeral0", &eph), "an alias maps it");
        assert_eq!(
            resolve_fs(&fs("my.2", Partition::Auto), &aliases),
            Ok(("/dev/sdb".into(), Partition::Number(2)))
        );
        // A dotted name that is no alias keeps its literal device (which names nothing).
        assert_eq!(
            resolve_fs(&fs("/dev/sdb.1", Partition::Any), &aliases),
            Ok(("/dev/sdb.1".into(), Partition::Number(1)))
        );
        assert_eq!(
            resolve_fs(&fs("/dev/sdb", Partition::None), &aliases),
            Ok(("/dev/sdb".into(), Partition::None))
        );
        assert_eq!(partition_path("/dev/sdb", 1), "/dev/sdb1");
        assert_eq!(partition_path("/dev/nvme0n1", 2), "/dev/nvme0n1p2");
    }

    #[test]
    fn partitioning_plans() {
        let c = cfg("disk_setup:\n  /dev/sdb: {layout: [33, [66, 82]]}\n  /dev/sdc: {layout: true}\n  /dev/sdd: {table_type: gpt, layout: [50, [25, 82], [25, 'A19D880F-05FC-4D3B-A006-743F0F84911E']], overwrite: true}\n  /dev/sde: {layout: remove}\n  /dev/sdf: {}\n");
        let d = c.disk_setup.unwrap();
        let blank = |p: &str| disk(p, 2_097_152);
        // The reference's run: [33, [66, 82]] on 2 097 152 sectors.
        assert_eq!(
            shown(&plan_disk(&d[0], &blank("/dev/sdb"), true)),
            ["sfdisk --force /dev/sdb <<< \",692060,83\\n,,82\\n\""]
        );
        assert_eq!(
            shown(&plan_disk(&d[1], &blank("/dev/sdc"), true)),
            ["sfdisk --force /dev/sdc <<< \",,83\\n\""]
        );
        assert_eq!(
            shown(&plan_disk(&d[2], &blank("/dev/sdd"), true)),
            [
                "sgdisk -Z /dev/sdd",
                "sgdisk -n 1:0:+1048576 /dev/sdd",
                "sgdisk -n 2:0:+524288 /dev/sdd",
                "sgdisk -t 2:8200 /dev/sdd",
                "sgdisk -n 3:0:0 /dev/sdd",
                "sgdisk -t 3:A19D880F-05FC-4D3B-A006-743F0F84911E /dev/sdd",
            ]
        );
        assert_eq!(
            shown(&plan_disk(&d[2], &blank("/dev/sdd"), false)),
            ["sfdisk -X gpt --force /dev/sdd <<< \",+1048576,0FC63DAF-8483-4772-8E79-3D69D8477DE4\\n,+524288,0657FD6D-A4AB-43C4-84E5-0933C84B4F4F\\n,,A19D880F-05FC-4D3B-A006-743F0F84911E\\n\""]
        );
        // remove: every partition's signatures wiped, then the first and last MiB,
        // whatever overwrite says.
        let used = parted("/dev/sde", &[sig("ext4", None), None]);
        assert_eq!(
            shown(&plan_disk(&d[3], &used, true)),
            [
                "wipefs --all /dev/sde1",
                "wipefs --all /dev/sde2",
                "dd if=/dev/zero of=/dev/sde bs=512 count=2048 conv=notrunc,fsync",
                "dd if=/dev/zero of=/dev/sde bs=512 seek=2095104 count=2048 conv=notrunc,fsync",
            ]
        );
        assert!(
            matches!(plan_disk(&d[4], &blank("/dev/sdf"), true), Outcome::Skip(w) if w.contains("not to be partitioned"))
        );
        // Safety: a disk with a partition, or a file system on the whole disk, is left
        // alone without overwrite; a layout already there is left alone always.
        let one = parted("/dev/sdb", &[None]);
        assert!(
            matches!(plan_disk(&d[0], &one, true), Outcome::Skip(w) if w.contains("Skipping partitioning"))
        );
        let mut whole_fs = blank("/dev/sdb");
        whole_fs.blocks[0].fs = sig("xfs", None);
        assert!(
            matches!(plan_disk(&d[0], &whole_fs, true), Outcome::Skip(w) if w.contains("Skipping partitioning"))
        );
        assert!(
            matches!(plan_disk(&d[1], &one, true), Outcome::Skip(w) if w.contains("layout matches"))
        );
        let mut two = parted("/dev/sdb", &[None, None]);
        two.table.as_mut().unwrap().types[1] = "82".into();
        assert!(
            matches!(plan_disk(&d[0], &two, true), Outcome::Skip(w) if w.contains("layout matches"))
        );
        // The same layout on a disk that is not one (a partition, a loop device): fails.
        let mut part = blank("/dev/sdb1");
        part.blocks[0].kind = "part".into();
        assert!(
            matches!(plan_disk(&d[0], &part, true), Outcome::Fail(w) if w.contains("is not a disk device!"))
        );
    }

    #[test]
    fn gpt_layout_matches_by_guid() {
        let c = cfg("disk_setup: {/dev/sdb: {table_type: gpt, layout: [[50, 83], [50, 82]]}}");
        let d = &c.disk_setup.unwrap()[0];
        let mut dev = parted("/dev/sdb", &[None, None]);
        dev.table = Some(Table {
            label: "gpt".into(),
            types: vec![
                LINUX_FS_GUID.into(),
                "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f".into(),
            ],
        });
        assert!(layout_matches(d, &dev));
        dev.table.as_mut().unwrap().label = "dos".into();
        assert!(
            !layout_matches(d, &dev),
            "a DOS table is not the GPT asked for"
        );
    }

    fn fs_entry(doc: &str) -> Filesystem {
        cfg(doc).fs_setup.unwrap().remove(0)
    }

    #[test]
    fn formats_run_with_the_command_timeout_and_a_users_cmd_is_hidden() {
        let have = |p: &str| p == "mkfs.ext4";
        let (command, tool) = (Duration::from_secs(3600), Duration::from_secs(120));
        let ops = |doc: &str| {
            let f = fs_entry(doc);
            let (_, part) = resolve_fs(&f, &BTreeMap::new()).unwrap();
            match plan_fs(&f, &disk("/dev/sdb", 2_097_152), part, &have) {
                Outcome::Run(ops) => ops,
                other => panic!("{doc}: {other:?}"),
            }
        };
        let mkfs = ops("fs_setup: [{device: /dev/sdb, filesystem: ext4, extra_opts: ['-E', 'lazy_itable_init=0']}]");
        let p = mkfs[0].program("/sbin/mkfs.ext4", command, tool);
        assert_eq!((p.timeout, p.hide_args), (command, false), "{p:?}");
        let cmd = ops("fs_setup: [{device: /dev/sdb, filesystem: ext4, cmd: 'mkfs -t %(filesystem)s %(device)s # MARK-7'}]");
        let p = cmd[0].program("/bin/sh", command, tool);
        assert_eq!((p.timeout, p.hide_args), (command, true), "{p:?}");
        // The partitioning tools keep the tool timeout.
        let Outcome::Run(part) = plan_disk(
            &cfg("disk_setup: {/dev/sdb: {layout: true}}")
                .disk_setup
                .unwrap()
                .remove(0),
            &disk("/dev/sdb", 2_097_152),
            false,
        ) else {
            panic!("no partitioning planned")
        };
        assert!(part
            .iter()
            .all(|o| o.program("/x", command, tool).timeout == tool));
    }

    #[test]
    fn file_system_plans() {
        let have = |p: &str| ["mkfs.ext4", "mkfs.xfs", "mkfs.vfat", "mkswap"].contains(&p);
        let plan = |doc: &str, dev: &Device| {
            let f = fs_entry(doc);
            let (_, part) = resolve_fs(&f, &BTreeMap::new()).unwrap();
            shown(&plan_fs(&f, dev, part, &have))
        };
        let blank = disk("/dev/sdb", 2_097_152);
        let two = parted("/dev/sdb", &[None, None]);
        let first_ext4 = parted("/dev/sdb", &[sig("ext4", Some("data")), None]);
        // any/auto: a whole disk without partitions is formatted (forced: it is a disk).
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, label: data}]",
                &blank
            ),
            ["mkfs.ext4 -L data -F /dev/sdb"]
        );
        // The first partition without a file system.
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: auto, label: data}]",
                &two
            ),
            ["mkfs.ext4 -L data /dev/sdb1"]
        );
        // auto: the same type and label is reused; another label takes the next free one.
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: auto, label: data}]",
                &first_ext4
            ),
            ["skip: /dev/sdb: Found filesystem match, skipping formatting."]
        );
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: auto, label: logs}]",
                &first_ext4
            ),
            ["mkfs.ext4 -L logs /dev/sdb2"]
        );
        // auto without a label: an unlabelled file system of the type is reused.
        let unlabelled = parted("/dev/sdb", &[sig("ext4", None)]);
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: auto}]",
                &unlabelled
            ),
            ["skip: /dev/sdb: Found filesystem match, skipping formatting."]
        );
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: vfat, label: EFI, partition: 1}]",
                &two
            ),
            ["mkfs.vfat -n EFI /dev/sdb1"]
        );
        // any: the type alone is compared.
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: any, label: logs}]",
                &first_ext4
            ),
            ["skip: /dev/sdb: Found filesystem match, skipping formatting."]
        );
        // replace_fs: the first entry of that type is formatted over.
        let ntfs = parted("/dev/sdb", &[sig("ntfs", None)]);
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, replace_fs: ntfs}]",
                &ntfs
            ),
            ["mkfs.ext4 /dev/sdb1"]
        );
        // Every partition used, none of the type: nothing, with cloud-init's warning.
        let full = parted("/dev/sdb", &[sig("xfs", None)]);
        assert!(
            plan("fs_setup: [{device: /dev/sdb, filesystem: ext4}]", &full)[0]
                .contains("Failed to find device")
        );
        // A number: same type and label kept unless overwrite; anything else formatted.
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: 1, label: data}]",
                &first_ext4
            ),
            ["skip: Device /dev/sdb1 has required file system"]
        );
        assert_eq!(
            plan("fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: 1, label: data, overwrite: true}]", &first_ext4),
            ["mkfs.ext4 -L data -F /dev/sdb1"]
        );
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: 1, label: other}]",
                &first_ext4
            ),
            ["mkfs.ext4 -L other /dev/sdb1"]
        );
        assert!(plan(
            "fs_setup: [{device: /dev/sdb, filesystem: ext4, partition: 3}]",
            &two
        )[0]
        .contains("not a block device"));
        // none: the raw device, never checked.
        let whole_ext4 = Device {
            blocks: vec![Block {
                fs: sig("ext4", Some("data")),
                ..blank.blocks[0].clone()
            }],
            ..blank.clone()
        };
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: ext4, label: data, partition: none}]",
                &whole_ext4
            ),
            ["mkfs.ext4 -L data -F /dev/sdb"]
        );
        // swap → mkswap; a type without a program: a warning and nothing.
        assert_eq!(
            plan(
                "fs_setup: [{device: /dev/sdb, filesystem: swap, partition: 2}]",
                &two
            ),
            ["mkswap /dev/sdb2"]
        );
        assert!(
            plan("fs_setup: [{device: /dev/sdb, filesystem: zfs}]", &blank)[0]
                .contains("No mkfs.zfs command")
        );
        // cmd: the values put in, run by the shell.
        assert_eq!(
            plan("fs_setup: [{device: /dev/sdb, filesystem: btrfs, label: l3, cmd: 'mkfs -t %(filesystem)s -L %(label)s %(device)s'}]", &blank),
            ["sh -c mkfs -t btrfs -L l3 /dev/sdb"]
        );
    }

    #[test]
    fn the_preview_plans_fs_setup_after_the_partitioning() {
        let c = cfg("device_aliases: {data: /dev/sdb}\ndisk_setup: {data: {layout: [50, 50]}}\nfs_setup:\n- {device: data.1, filesystem: ext4, label: one}\n- {device: data, filesystem: ext4, label: two, partition: auto}\n- {device: ephemeral0, filesystem: ext4}\n");
        let facts = DiskSetupFacts {
            live: true,
            devices: [("/dev/sdb".to_string(), Ok(disk("/dev/sdb", 2_097_152)))].into(),
            have: vec!["mkfs.ext4".into()],
        };
        let lines = preview_live(&c, &facts);
        assert_eq!(
            lines[0],
            "on the running system only: run sfdisk --force /dev/sdb <<< \",1048576,83\\n,,83\\n\""
        );
        assert_eq!(
            lines[1],
            "on the running system only: run mkfs.ext4 -L one /dev/sdb1"
        );
        // The file system planned before it is counted: auto takes partition 2.
        assert_eq!(
            lines[2],
            "on the running system only: run mkfs.ext4 -L two /dev/sdb2"
        );
        assert!(
            lines[3]
                .starts_with("nothing: fs_setup ephemeral0: warning: ephemeral0 is a meta name"),
            "{lines:?}"
        );
        // Another root: refused, each entry named.
        let off = DiskSetupFacts::default();
        let look_lines = {
            let facts = crate::facts::Facts {
                disk_setup: Some(off),
                ..Default::default()
            };
            let scripts = crate::cloud_config::apply::scripts::plan(&[], &[]);
            preview(&Look {
                cfg: &c,
                facts: &facts,
                fallback: None,
                scripts: &scripts,
            })
        };
        assert!(look_lines[0].contains("build machine's"), "{look_lines:?}");
        assert_eq!(look_lines.len(), 5);
        assert!(look_lines
            .iter()
            .all(|l| l.starts_with("on the running system only: ")));
    }

    /// The real tools on image files: the commands planned for `/dev/vdz` run against a
    /// file (its partitions through loop devices over their byte ranges), then read back
    /// with `sfdisk -J` and `blkid -p`. Packages: fdisk, gdisk, e2fsprogs, dosfstools,
    /// xfsprogs, util-linux (scripts/test-packages.txt).
    mod tools {
        use super::*;
        use std::path::PathBuf;
        use std::process::{Command, Stdio};

        const DEV: &str = "/dev/vdz";

        fn tool(name: &str) -> String {
            ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
                .iter()
                .map(|d| format!("{d}/{name}"))
                .find(|p| Path::new(p).exists())
                .unwrap_or_else(|| {
                    panic!("{name} is missing: install it (scripts/test-packages.txt)")
                })
        }

        fn output(program: &str, args: &[&str]) -> (bool, String) {
            let out = Command::new(tool(program)).args(args).output().unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        }

        /// A sparse image file of `mib` MiB.
        fn image(dir: &Path, name: &str, mib: u64) -> PathBuf {
            let p = dir.join(name);
            std::fs::File::create(&p)
                .unwrap()
                .set_len(mib << 20)
                .unwrap();
            p
        }

        /// Loop devices over an image's partitions, detached when dropped.
        struct Loops(Vec<String>);

        impl Drop for Loops {
            fn drop(&mut self) {
                for l in &self.0 {
                    let _ = Command::new(tool("losetup")).args(["-d", l]).status();
                }
            }
        }

        /// The partitions of `img` by number: byte offset and size.
        fn partitions(img: &Path) -> Vec<(u64, u64)> {
            let (_, json) = output("sfdisk", &["-J", img.to_str().unwrap()]);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
            v["partitiontable"]["partitions"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| {
                            (
                                p["start"].as_u64().unwrap() * 512,
                                p["size"].as_u64().unwrap() * 512,
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        }

        /// What the module's prober reads on a block device, read from the image.
        fn probe(img: &Path) -> Device {
            let path = img.to_str().unwrap();
            let (_, json) = output("sfdisk", &["-J", path]);
            let whole = output("blkid", &["-p", "-o", "export", path]).1;
            let mut blocks = vec![Block {
                path: DEV.into(),
                kind: "disk".into(),
                fs: parse_blkid(&whole),
            }];
            for (i, (off, size)) in partitions(img).into_iter().enumerate() {
                let (o, s) = (off.to_string(), size.to_string());
                let out = output("blkid", &["-p", "-o", "export", "-O", &o, "-S", &s, path]).1;
                blocks.push(Block {
                    path: partition_path(DEV, i as u32 + 1),
                    kind: "part".into(),
                    fs: parse_blkid(&out),
                });
            }
            Device {
                blocks,
                sectors: std::fs::metadata(img).unwrap().len() / 512,
                sector_size: 512,
                table: parse_sfdisk_json(&json),
            }
        }

        /// Runs `outcome`'s commands with `/dev/vdz` as `img` and `/dev/vdzN` as a loop
        /// device over its partition N (`None` when loop devices cannot be made here).
        fn run(outcome: &Outcome, img: &Path, loops: &mut Loops) -> Option<()> {
            let Outcome::Run(ops) = outcome else {
                panic!("nothing to run: {outcome:?}");
            };
            for op in ops.iter().filter(|o| !o.best_effort) {
                let mut args = Vec::new();
                for a in &op.argv[1..] {
                    let (prefix, dev) = a
                        .split_once('=')
                        .filter(|(p, _)| *p == "of")
                        .unwrap_or(("", a));
                    let mapped = if dev == DEV {
                        img.to_str().unwrap().to_string()
                    } else if let Some(n) =
                        dev.strip_prefix(DEV).and_then(|n| n.parse::<usize>().ok())
                    {
                        let (off, size) = partitions(img)[n - 1];
                        let out = Command::new(tool("losetup"))
                            .args([
                                "--find",
                                "--show",
                                "-o",
                                &off.to_string(),
                                "--sizelimit",
                                &size.to_string(),
                            ])
                            .arg(img)
                            .output()
                            .ok()?;
                        if !out.status.success() {
                            eprintln!(
                                "no loop device here ({}); partition checks left out",
                                String::from_utf8_lossy(&out.stderr)
                            );
                            return None;
                        }
                        let l = String::from_utf8_lossy(&out.stdout).trim().to_string();
                        loops.0.push(l.clone());
                        l
                    } else {
                        dev.to_string()
                    };
                    args.push(if prefix.is_empty() {
                        mapped
                    } else {
                        format!("{prefix}={mapped}")
                    });
                }
                let mut child = Command::new(tool(&op.argv[0]))
                    .args(&args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                {
                    use std::io::Write;
                    let mut stdin = child.stdin.take().unwrap();
                    stdin
                        .write_all(op.input.as_deref().unwrap_or_default().as_bytes())
                        .unwrap();
                }
                let out = child.wait_with_output().unwrap();
                assert!(
                    out.status.success(),
                    "{}: {}",
                    op.shown(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            Some(())
        }

        fn disk_entry(doc: &str) -> Disk {
            cfg(doc).disk_setup.unwrap().remove(0)
        }

        #[test]
        fn tables_made_by_the_real_tools() {
            let dir = tempfile::tempdir().unwrap();
            let swap_guid = "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F";
            // 64 MiB: 131 072 sectors; int(131072 × 0.33) = 43 253, half = 65 536.
            for (doc, sgdisk, label, first, types) in [
                (
                    "disk_setup: {/dev/vdz: {layout: [33, [66, 82]]}}",
                    true,
                    "dos",
                    Some(43_253),
                    vec!["83", "82"],
                ),
                (
                    "disk_setup: {/dev/vdz: {layout: true}}",
                    true,
                    "dos",
                    None,
                    vec!["83"],
                ),
                (
                    "disk_setup: {/dev/vdz: {table_type: gpt, layout: [50, [50, 82]]}}",
                    true,
                    "gpt",
                    Some(65_536),
                    vec![LINUX_FS_GUID, swap_guid],
                ),
                (
                    "disk_setup: {/dev/vdz: {table_type: gpt, layout: [50, [50, 82]]}}",
                    false,
                    "gpt",
                    Some(65_536),
                    vec![LINUX_FS_GUID, swap_guid],
                ),
                (
                    "disk_setup: {/dev/vdz: {table_type: gpt, layout: true}}",
                    true,
                    "gpt",
                    None,
                    vec![LINUX_FS_GUID],
                ),
            ] {
                let img = image(dir.path(), "disk.img", 64);
                let d = disk_entry(doc);
                let plan = plan_disk(&d, &probe(&img), sgdisk);
                run(&plan, &img, &mut Loops(vec![])).unwrap();
                let (_, json) = output("sfdisk", &["-J", img.to_str().unwrap()]);
                let t = parse_sfdisk_json(&json).unwrap_or_else(|| panic!("{doc}: no table"));
                assert_eq!(t.label, label, "{doc}");
                assert_eq!(
                    t.types
                        .iter()
                        .map(|t| t.to_ascii_uppercase())
                        .collect::<Vec<_>>(),
                    types,
                    "{doc}"
                );
                let v: serde_json::Value = serde_json::from_str(&json).unwrap();
                if let Some(first) = first {
                    assert_eq!(v["partitiontable"]["partitions"][0]["size"], first, "{doc}");
                }
                // The last partition takes the rest: it ends within the last MiB (a GPT
                // keeps its backup in the last sectors, aligned down to a MiB).
                let parts = partitions(&img);
                let (off, size) = parts[parts.len() - 1];
                assert!(off + size >= (63 << 20), "{doc}: {parts:?}");
                // Run again, the layout is there: nothing to do.
                assert!(
                    matches!(plan_disk(&d, &probe(&img), sgdisk), Outcome::Skip(w) if w.contains("layout matches")),
                    "{doc}"
                );
                std::fs::remove_file(&img).unwrap();
            }
        }

        #[test]
        fn an_existing_table_or_file_system_is_kept_without_overwrite() {
            let dir = tempfile::tempdir().unwrap();
            let img = image(dir.path(), "disk.img", 64);
            run(
                &plan_disk(
                    &disk_entry("disk_setup: {/dev/vdz: {layout: [50, 50]}}"),
                    &probe(&img),
                    true,
                ),
                &img,
                &mut Loops(vec![]),
            )
            .unwrap();
            let before = std::fs::read(&img).unwrap();
            let other = disk_entry("disk_setup: {/dev/vdz: {layout: [25, 25, 50]}}");
            let plan = plan_disk(&other, &probe(&img), true);
            assert!(
                matches!(&plan, Outcome::Skip(w) if w.contains("Skipping partitioning")),
                "{plan:?}"
            );
            assert_eq!(std::fs::read(&img).unwrap(), before);
            // overwrite: true repartitions.
            let over =
                disk_entry("disk_setup: {/dev/vdz: {layout: [25, 25, 50], overwrite: true}}");
            run(
                &plan_disk(&over, &probe(&img), true),
                &img,
                &mut Loops(vec![]),
            )
            .unwrap();
            assert_eq!(partitions(&img).len(), 3);
            // A file system on the whole disk counts as used too.
            let img2 = image(dir.path(), "fs.img", 64);
            let f = fs_entry("fs_setup: [{device: /dev/vdz, filesystem: ext4, partition: none}]");
            run(
                &plan_fs(&f, &probe(&img2), Partition::None, &|p| {
                    Path::new(&tool_or_none(p)).exists()
                }),
                &img2,
                &mut Loops(vec![]),
            )
            .unwrap();
            let plan = plan_disk(
                &disk_entry("disk_setup: {/dev/vdz: {layout: true}}"),
                &probe(&img2),
                true,
            );
            assert!(
                matches!(&plan, Outcome::Skip(w) if w.contains("Skipping partitioning")),
                "{plan:?}"
            );
            // remove wipes the table whatever overwrite says.
            let remove = disk_entry("disk_setup: {/dev/vdz: {layout: remove}}");
            let mut dev = probe(&img);
            // The image's partitions are no block devices here: wipe the table only.
            dev.blocks.truncate(1);
            run(&plan_disk(&remove, &dev, true), &img, &mut Loops(vec![])).unwrap();
            assert!(partitions(&img).is_empty());
            assert_eq!(probe(&img).table, None);
        }

        fn tool_or_none(name: &str) -> String {
            ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
                .iter()
                .map(|d| format!("{d}/{name}"))
                .find(|p| Path::new(p).exists())
                .unwrap_or_default()
        }

        fn have(p: &str) -> bool {
            !tool_or_none(p).is_empty()
        }

        fn blkid(img: &Path) -> Option<Signature> {
            parse_blkid(&output("blkid", &["-p", "-o", "export", img.to_str().unwrap()]).1)
        }

        #[test]
        fn file_systems_on_a_whole_image() {
            let dir = tempfile::tempdir().unwrap();
            let mut cases = vec![
                ("fs_setup: [{device: /dev/vdz, filesystem: ext4, label: data, partition: none}]", 64, "ext4", "data"),
                ("fs_setup: [{device: /dev/vdz, filesystem: vfat, label: BOOT, partition: none}]", 64, "vfat", "BOOT"),
                ("fs_setup: [{device: /dev/vdz, filesystem: swap, label: sw}]", 64, "swap", "sw"),
            ];
            if have("mkfs.xfs") {
                // xfs needs 300 MiB at least.
                cases.push((
                    "fs_setup: [{device: /dev/vdz, filesystem: xfs, label: logs}]",
                    320,
                    "xfs",
                    "logs",
                ));
            } else {
                eprintln!("no mkfs.xfs (xfsprogs): the xfs case is left out");
            }
            for (doc, mib, fstype, label) in cases {
                let img = image(dir.path(), "fs.img", mib);
                let f = fs_entry(doc);
                run(
                    &plan_fs(&f, &probe(&img), f.partition, &have),
                    &img,
                    &mut Loops(vec![]),
                )
                .unwrap();
                assert_eq!(blkid(&img), sig(fstype, Some(label)), "{doc}");
                // Again (any and auto): the file system is there, nothing is made.
                if f.partition != Partition::None {
                    let before = std::fs::read(&img).unwrap();
                    assert!(
                        matches!(plan_fs(&f, &probe(&img), f.partition, &have), Outcome::Skip(w) if w.contains("Found filesystem match")),
                        "{doc}"
                    );
                    assert_eq!(std::fs::read(&img).unwrap(), before);
                }
                std::fs::remove_file(&img).unwrap();
            }
        }

        /// The prober on a real block device (a loop device over an image): what lsblk,
        /// blkid, blockdev and sfdisk say is read back; a loop device is not a disk, so
        /// partitioning it fails as in cloud-init. Only reads; left out where no loop
        /// device can be made.
        #[test]
        fn the_prober_reads_a_real_block_device() {
            let dir = tempfile::tempdir().unwrap();
            let img = image(dir.path(), "disk.img", 64);
            run(
                &plan_disk(
                    &disk_entry("disk_setup: {/dev/vdz: {layout: [50, [50, 82]]}}"),
                    &probe(&img),
                    true,
                ),
                &img,
                &mut Loops(vec![]),
            )
            .unwrap();
            let out = Command::new(tool("losetup"))
                .args(["--find", "--show"])
                .arg(&img)
                .output()
                .unwrap();
            if !out.status.success() {
                eprintln!("no loop device here: the prober's check is left out");
                return;
            }
            let l = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let _loops = Loops(vec![l.clone()]);
            let root = Root::new(Path::new("/")).unwrap();
            let stop = AtomicBool::new(false);
            let prober = Prober {
                root: &root,
                timeout: Duration::from_secs(30),
                stop: &stop,
                settle: false,
            };
            let dev = prober.device(&l).unwrap();
            assert_eq!(dev.path(), l);
            assert_eq!(dev.blocks[0].kind, "loop");
            assert_eq!((dev.sectors, dev.sector_size), (131_072, 512));
            assert_eq!(
                dev.table,
                Some(Table {
                    label: "dos".into(),
                    types: vec!["83".into(), "82".into()]
                })
            );
            let d = disk_entry("disk_setup: {/dev/vdz: {layout: true, overwrite: true}}");
            assert!(
                matches!(plan_disk(&d, &dev, true), Outcome::Fail(w) if w.contains("is not a disk device!"))
            );
            let missing = prober.device("/dev/vmcust-no-such-disk").unwrap_err();
            assert!(missing.contains("did not exist"), "{missing}");
        }

        #[test]
        fn partitions_chosen_as_cloud_init_chooses() {
            let dir = tempfile::tempdir().unwrap();
            let img = image(dir.path(), "disk.img", 64);
            let mut loops = Loops(vec![]);
            let c = cfg("disk_setup: {/dev/vdz: {layout: [50, 50]}}\nfs_setup:\n- {device: /dev/vdz, filesystem: ext4, label: a, partition: auto}\n- {device: /dev/vdz, filesystem: ext4, label: b, partition: auto}\n- {device: /dev/vdz, filesystem: ext4, label: c, partition: any}\n- {device: /dev/vdz, filesystem: ext4, label: a, partition: auto}\n- {device: /dev/vdz, filesystem: ext4, label: a, partition: 1}\n");
            run(
                &plan_disk(&c.disk_setup.unwrap()[0], &probe(&img), true),
                &img,
                &mut loops,
            )
            .unwrap();
            let fs = c.fs_setup.unwrap();
            let plan = |i: usize| plan_fs(&fs[i], &probe(&img), fs[i].partition, &have);
            assert_eq!(shown(&plan(0)), ["mkfs.ext4 -L a /dev/vdz1"]);
            if run(&plan(0), &img, &mut loops).is_none() {
                return;
            }
            assert_eq!(probe(&img).blocks[1].fs, sig("ext4", Some("a")));
            // auto with another label: the next partition without a file system.
            assert_eq!(shown(&plan(1)), ["mkfs.ext4 -L b /dev/vdz2"]);
            run(&plan(1), &img, &mut loops).unwrap();
            assert_eq!(probe(&img).blocks[2].fs, sig("ext4", Some("b")));
            // any: an ext4 is there (label not compared); auto: label a is there; a
            // number: the same type and label.
            assert!(matches!(plan(2), Outcome::Skip(w) if w.contains("Found filesystem match")));
            assert!(matches!(plan(3), Outcome::Skip(w) if w.contains("Found filesystem match")));
            assert!(matches!(plan(4), Outcome::Skip(w) if w.contains("has required file system")));
            // Both partitions used, none free: auto for a new label finds nothing.
            let f = fs_entry(
                "fs_setup: [{device: /dev/vdz, filesystem: xfs, label: z, partition: auto}]",
            );
            assert!(
                matches!(plan_fs(&f, &probe(&img), f.partition, &have), Outcome::Skip(w) if w.contains("Failed to find device"))
            );
        }
    }
}
