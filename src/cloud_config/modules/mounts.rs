//! `mounts` (`mounts`, `mount_default_fields`, `swap`): cloud-init's `cc_mounts` — the
//! document's file systems and swap file written to `/etc/fstab` as lines tagged
//! `comment=cloudconfig` (earlier tagged lines replaced, every other line kept), their mount
//! points made, a swap file made with the root's `fallocate` (or `dd`) and `mkswap`, then
//! `swapon -a`, `mount -a` and `systemctl daemon-reload` on the running system only.
//!
//! How it differs from cloud-init is in docs/differences-from-cloud-init.md ("mounts"):
//! the default options wait for vmcust's early unit, a field that cannot be written to
//! fstab is refused at the door, the swap line is tagged (so a new instance replaces it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cloud_config::apply::driver::{failed, from_end, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::exec::RunEnd;
use crate::cloud_config::apply::preview::{action_lines, Look};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader};
use crate::cloud_config::CloudConfig;
use crate::facts::mounts::{unescape, MountsWanted};
pub(crate) use crate::facts::mounts::{MountFacts, FSTAB};
use crate::facts::{Facts, Wanted};
use crate::model::quote;
use crate::plan::{Action, Contents};

/// Most `mounts` entries.
pub(crate) const MAX_MOUNTS: usize = 128;
/// Longest field of an entry.
const MAX_FIELD: usize = 4096;
/// The marker on every fstab line this module owns.
pub(crate) const MARKER: &str = "comment=cloudconfig";
/// cloud-init's default swap file.
pub(crate) const DEFAULT_SWAP_FILE: &str = "/swap.img";
/// The default mount options with systemd: nothing fails the boot (`nofail`), and the
/// mount waits for vmcust's early unit, which runs this module (cloud-init's
/// `x-systemd.after=cloud-init-network.service`); `_netdev` orders it after the network,
/// since the early unit itself runs after `local-fs.target`.
pub(crate) const SYSTEMD_OPTIONS: &str =
    "defaults,nofail,x-systemd.after=vmcust-early.service,_netdev";
/// The default mount options without systemd (cloud-init's).
pub(crate) const OTHER_OPTIONS: &str = "defaults,nobootwait";

/// One `mounts` entry: up to six fields (`spec`, `file`, `vfstype`, `mntops`, `freq`,
/// `passno`); `None` is a YAML null (the default field; a null mount point removes).
pub(crate) type Entry = Vec<Option<String>>;

/// `swap`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Swap {
    /// The swap file (default `/swap.img`; empty: no swap).
    pub filename: String,
    /// Its size (absent or 0: no swap).
    pub size: Option<SwapSize>,
    /// The most `auto` may choose, in bytes.
    pub maxsize: Option<u64>,
}

/// `swap.size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwapSize {
    /// cloud-init's suggestion from the memory and the free space.
    Auto,
    /// This many bytes.
    Bytes(u64),
}

/// Fields 3 to 6 may not hold these (fstab has no escape a mount reads back for them).
fn bad_option_char(c: char) -> bool {
    c.is_whitespace() || c.is_control() || c == '\\'
}

/// Field `i` of an entry: a string or a number (`str()`-ed as cloud-init does), or null.
/// The device and mount point may hold spaces and tabs (written escaped); no field may
/// hold another control character.
fn field(r: &mut Reader, at: &str, n: &Node, i: usize) -> Result<Option<String>, ()> {
    let s = match &n.value {
        Value::Null => return Ok(None),
        Value::Int(i) => i.to_string(),
        Value::Float(f) if f.is_finite() => format!("{f:?}"),
        Value::Str(_) if i <= 1 => {
            let s = r.string(n, at, MAX_FIELD).ok_or(())?;
            if let Some(c) = s.chars().find(|c| c.is_control() && *c != '\t') {
                r.error(
                    n,
                    at,
                    format!("{} holds the control character {c:?}; remove it", quote(&s)),
                );
                return Err(());
            }
            s
        }
        Value::Str(_) => r.line(n, at, MAX_FIELD).ok_or(())?,
        _ => {
            r.wrong_type(n, at, "a string, a number or null");
            return Err(());
        }
    };
    Ok(Some(s))
}

/// Checks field `i` of an entry (or of `mount_default_fields`) can be one fstab column.
fn check_field(r: &mut Reader, at: &str, n: &Node, i: usize, s: &str) -> bool {
    let problem = match i {
        0 if s.is_empty() => Some("is empty; write a device, LABEL=, UUID= or host:/path".into()),
        0 if s.starts_with('#') => Some("starts with #, which makes the fstab line a comment".into()),
        1 if s.split('/').any(|c| c == "..") => {
            Some(format!("{} has a .. component; write the mount point plainly", quote(s)))
        }
        1 if !s.is_empty() && !s.starts_with('/') && s != "none" => Some(format!(
            "{} is not an absolute mount point (or none for swap)",
            quote(s)
        )),
        2 | 3 if s.is_empty() || s.chars().any(bad_option_char) => Some(format!(
            "{} cannot be an fstab field: it is empty or holds a space or backslash",
            quote(s)
        )),
        3 if s.split(',').any(|o| {
            let o = o.split('=').next().unwrap_or_default();
            o == "password" || o == "pass"
        }) =>
        {
            Some("holds a password, which /etc/fstab (world-readable) must not; use credentials=FILE (cifs)".into())
        }
        4 | 5 if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 9 => {
            Some(format!("{} is not a number (fstab's freq and passno)", quote(s)))
        }
        _ => None,
    };
    match problem {
        Some(p) => {
            r.error(n, at, p);
            false
        }
        None => true,
    }
}

/// `mounts`: a list of entries, each a list of one to six fields.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(items) = r.list(node, key, MAX_MOUNTS) else {
        return;
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = index(key, i);
        let Some(fields) = r.list(item, &at, 6) else {
            continue;
        };
        if fields.is_empty() {
            r.error(item, &at, "is empty; write [device, mount point, …]");
            continue;
        }
        let mut entry = Vec::new();
        let mut ok = true;
        for (j, f) in fields.iter().enumerate() {
            let at = index(&at, j);
            match field(r, &at, f, j) {
                Ok(Some(s)) => {
                    ok &= check_field(r, &at, f, j, &s);
                    entry.push(Some(s));
                }
                Ok(None) if j == 0 => {
                    r.error(f, &at, "is null; write the device");
                    ok = false;
                }
                Ok(None) => entry.push(None),
                Err(()) => ok = false,
            }
        }
        if ok {
            out.push(entry);
        }
    }
    cfg.mounts = Some(out);
}

/// `mount_default_fields`: exactly six fields, each a string, a number or null.
pub(crate) fn parse_default_fields(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(items) = r.list(node, key, 6) else {
        return;
    };
    if items.len() != 6 {
        r.error(
            node,
            key,
            format!(
                "has {} entries; write six: [spec, mount point, type, options, freq, passno]",
                items.len()
            ),
        );
        return;
    }
    let mut out = Vec::new();
    for (i, n) in items.iter().enumerate() {
        let at = index(key, i);
        match field(r, &at, n, i) {
            // cloud-init's own example spells null as Python does.
            Ok(Some(s)) if s == "None" => out.push(None),
            Ok(Some(s)) if check_field(r, &at, n, i, &s) => out.push(Some(s)),
            Ok(None) => out.push(None),
            _ => return,
        }
    }
    cfg.mount_default_fields = Some(out);
}

/// A size as cloud-init's schema writes it: `[digits][.]digits` then `B`, `K`, `M`, `G` or
/// `T` (powers of 1024), as bytes.
pub(crate) fn size_bytes(s: &str) -> Option<u64> {
    let (num, unit) = s.split_at(s.len().checked_sub(1)?);
    let shift = match unit {
        "B" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return None,
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) || (num.contains('.') && frac.is_empty()) {
        return None;
    }
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut bytes = whole.checked_mul(1u64 << shift)?;
    if !frac.is_empty() {
        // At most 9 decimals count (a nanobyte is nothing).
        let frac = &frac[..frac.len().min(9)];
        let scale = 10u64.pow(frac.len() as u32);
        let f: u64 = frac.parse().ok()?;
        bytes = bytes.checked_add((u128::from(f) * (1u128 << shift) / u128::from(scale)) as u64)?;
    }
    Some(bytes)
}

/// `swap.size` or `swap.maxsize`: bytes as an integer, or a size string.
fn size(r: &mut Reader, at: &str, n: &Node, auto: bool) -> Option<SwapSize> {
    match &n.value {
        Value::Int(i) if *i >= 0 => Some(SwapSize::Bytes(*i as u64)),
        Value::Str(s) if auto && s == "auto" => Some(SwapSize::Auto),
        Value::Str(s) => match size_bytes(s) {
            Some(b) => Some(SwapSize::Bytes(b)),
            None => {
                r.error(
                    n,
                    at,
                    format!(
                        "{} is not a size; write bytes as an integer, or a number with B, K, M, G or T (512M, 1.5G){}",
                        quote(s),
                        if auto { ", or auto" } else { "" }
                    ),
                );
                None
            }
        },
        _ => {
            r.wrong_type(n, at, "an integer of bytes or a size such as 2G");
            None
        }
    }
}

/// `swap`: `filename`, `size`, `maxsize`.
pub(crate) fn parse_swap(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(map) = r.map(node, key, &["filename", "size", "maxsize"]) else {
        return;
    };
    let mut swap = Swap {
        filename: DEFAULT_SWAP_FILE.into(),
        size: None,
        maxsize: None,
    };
    let mut ok = true;
    for (k, v) in map {
        let at = join(key, &k.text);
        match k.text.as_str() {
            "filename" => match r.line(v, &at, MAX_FIELD) {
                Some(f)
                    if !f.is_empty()
                        && (!f.starts_with('/')
                            || f.ends_with('/')
                            || f.split('/').any(|c| c == ".." || c == ".")
                            || f.contains(char::is_whitespace)) =>
                {
                    r.error(
                        v,
                        &at,
                        format!(
                            "{} is not an absolute file path without spaces, . or ..",
                            quote(&f)
                        ),
                    );
                    ok = false;
                }
                Some(f) => swap.filename = f,
                None => ok = false,
            },
            "size" => {
                swap.size = size(r, &at, v, true);
                ok &= swap.size.is_some();
            }
            _ => match size(r, &at, v, false) {
                Some(SwapSize::Bytes(b)) => swap.maxsize = Some(b),
                _ => ok = false,
            },
        }
    }
    if !ok {
        return;
    }
    cfg.swap = Some(swap);
}

/// Writes `s` as one fstab column: `\`, space, tab and newline octal-escaped as
/// `getmntent(3)` and libmount read them back.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\134"),
            ' ' => out.push_str("\\040"),
            '\t' => out.push_str("\\011"),
            '\n' => out.push_str("\\012"),
            c => out.push(c),
        }
    }
    out
}

/// An entry's device with a `device_aliases` name replaced by its device (`data.2` with
/// `data: /dev/sdb` → `/dev/sdb.2`), as cloud-init's `sanitize_devname` does.
pub(crate) fn aliased(name: &str, aliases: &BTreeMap<String, String>) -> String {
    let (dev, part) = match name.rsplit_once('.') {
        Some((d, p)) => (d, Some(p)),
        None => (name, None),
    };
    match (aliases.get(dev), part) {
        (Some(d), Some(p)) => format!("{d}.{p}"),
        (Some(d), None) => d.clone(),
        (None, _) => name.to_string(),
    }
}

/// A new fstab line, its fields unescaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// The six fields.
    pub fields: [String; 6],
}

impl Line {
    /// The line as fstab holds it: tab-separated, spec and mount point escaped.
    pub(crate) fn render(&self) -> String {
        let f = &self.fields;
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            escape(&f[0]),
            escape(&f[1]),
            f[2],
            f[3],
            f[4],
            f[5]
        )
    }
}

/// cloud-init's default fields for this root (`systemd`: whether it runs systemd).
pub(crate) fn default_fields(systemd: bool) -> [Option<String>; 6] {
    [
        None,
        None,
        Some("auto".into()),
        Some(
            if systemd {
                SYSTEMD_OPTIONS
            } else {
                OTHER_OPTIONS
            }
            .into(),
        ),
        Some("0".into()),
        Some("2".into()),
    ]
}

/// The kept lines of `fstab` (every line without [`MARKER`]) and the devices they define.
pub(crate) fn kept_lines(fstab: &str) -> (Vec<&str>, BTreeSet<String>) {
    let kept: Vec<&str> = fstab.lines().filter(|l| !l.contains(MARKER)).collect();
    let defined = kept
        .iter()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape)
        .collect();
    (kept, defined)
}

/// The entries' fstab lines, in order (cloud-init's normalisation): the device resolved
/// (or kept as written when it does not resolve or fstab already defines it), missing and
/// null fields from the defaults, an entry without a mount point removed together with
/// every earlier one of its device, the marker added to the options.
pub(crate) fn normalise(
    entries: &[Entry],
    defaults: &[Option<String>],
    builtin: &[Option<String>; 6],
    devices: &BTreeMap<String, String>,
    defined: &BTreeSet<String>,
) -> Vec<Line> {
    let mut out: Vec<[Option<String>; 6]> = Vec::new();
    for e in entries {
        let mut f: [Option<String>; 6] = Default::default();
        for (i, slot) in f.iter_mut().enumerate() {
            *slot = e
                .get(i)
                .cloned()
                .flatten()
                .filter(|s| i != 1 || !s.is_empty())
                .or_else(|| defaults.get(i).cloned().flatten());
        }
        let given = f[0].clone().unwrap_or_default();
        f[0] = Some(match devices.get(&given) {
            Some(d) if !defined.contains(d) => d.clone(),
            _ => given,
        });
        if f[1].is_none() {
            // A removal: this entry and every earlier one of the same device.
            out.retain(|o| o[0] != f[0]);
            continue;
        }
        out.push(f);
    }
    out.into_iter()
        .map(|f| {
            let mut fields: [String; 6] = Default::default();
            for (i, v) in f.into_iter().enumerate() {
                // A null default (mount_default_fields with a null past the mount point)
                // takes cloud-init's own default, never the text "None".
                fields[i] = v.or_else(|| builtin[i].clone()).unwrap_or_default();
            }
            fields[3] = format!("{},{MARKER}", fields[3]);
            Line { fields }
        })
        .collect()
}

/// The new fstab: the kept lines, then `lines`, each line ending in a newline.
pub(crate) fn merge(fstab: &str, lines: &[Line]) -> String {
    let (kept, _) = kept_lines(fstab);
    let mut s = String::new();
    for l in kept {
        s.push_str(l);
        s.push('\n');
    }
    for l in lines {
        s.push_str(&l.render());
        s.push('\n');
    }
    s
}

/// cloud-init's `suggested_swapsize`: the memory under 4 GiB, 4 GiB under 16 GiB, then
/// the square root of the GiB rounded; capped by `maxsize` (default: a quarter of the
/// free space, at most twice the memory; never above 90 % of the free space).
pub(crate) fn suggested_swap(mem: u64, maxsize: Option<u64>, free: Option<u64>) -> u64 {
    const GIB: u64 = 1 << 30;
    let max = match (maxsize, free) {
        (Some(m), Some(f)) => m.min(f / 10 * 9),
        (Some(m), None) => m,
        (None, Some(f)) => (f / 4).min(2 * mem),
        (None, None) => 2 * mem,
    };
    let size = if mem < 4 * GIB {
        mem
    } else if mem < 16 * GIB {
        4 * GIB
    } else {
        ((mem as f64 / GIB as f64).sqrt().round() as u64) * GIB
    };
    size.min(max)
}

/// The swap file to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MakeSwap {
    /// Its path inside the root.
    pub path: String,
    /// Its size in MiB.
    pub mib: u64,
    /// Turn copy-on-write off first (btrfs).
    pub nocow: bool,
}

impl MakeSwap {
    /// `fallocate`, then `mkswap` (with `chattr +C` first on btrfs).
    pub(crate) fn commands(&self) -> Vec<Vec<String>> {
        let mut c = Vec::new();
        if self.nocow {
            c.push(vec!["chattr".into(), "+C".into(), self.path.clone()]);
        }
        c.push(vec![
            "fallocate".into(),
            "-l".into(),
            format!("{}M", self.mib),
            self.path.clone(),
        ]);
        c.push(vec!["mkswap".into(), self.path.clone()]);
        c
    }

    /// `dd`, cloud-init's way when `fallocate` fails.
    pub(crate) fn dd(&self) -> Vec<String> {
        vec![
            "dd".into(),
            "if=/dev/zero".into(),
            format!("of={}", self.path),
            "bs=1M".into(),
            format!("count={}", self.mib),
        ]
    }
}

/// What `mounts` does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MountsPlan {
    /// The swap file to make first (its fstab line is in `actions`).
    pub make_swap: Option<MakeSwap>,
    /// Mount points made, then `/etc/fstab`.
    pub actions: Vec<Action>,
    /// `swapon -a`, `mount -a`, `systemctl daemon-reload`: on the running system only.
    pub activate: Vec<Vec<String>>,
    /// Why the swap file is not made, when it is asked for.
    pub notes: Vec<String>,
}

/// Plans the document's mounts and swap on a root with `facts` (`systemd`: the root runs
/// systemd; `with_swap`: the swap file may be made — false after making it failed).
/// `None`: nothing to add, `/etc/fstab` is left as it is (as cloud-init leaves it).
pub(crate) fn plan_mounts(
    cfg: &CloudConfig,
    facts: &MountFacts,
    systemd: bool,
    with_swap: bool,
) -> Option<MountsPlan> {
    if cfg.mounts.is_none() && cfg.swap.is_none() {
        return None;
    }
    let builtin = default_fields(systemd);
    let defaults: Vec<Option<String>> = match &cfg.mount_default_fields {
        Some(d) => d.clone(),
        None => builtin.to_vec(),
    };
    let fstab = facts.fstab.as_deref().unwrap_or("");
    let (_, defined) = kept_lines(fstab);
    let entries = cfg.mounts.as_deref().unwrap_or(&[]);
    let mut lines = normalise(entries, &defaults, &builtin, &facts.devices, &defined);
    let mut plan = MountsPlan::default();
    if let Some(swap) = cfg.swap.as_ref().filter(|_| with_swap) {
        if let Some(line) = plan_swap(swap, facts, &mut plan) {
            // A line of the image's own (cloud-init 24.3+ writes it untagged) is not
            // written twice.
            if !defined.contains(&swap.filename) {
                lines.push(line);
            }
        }
    }
    if lines.is_empty() {
        if plan.make_swap.is_some() {
            // A swap file the image's own line lists: made, then turned on.
            plan.activate.push(vec!["swapon".into(), "-a".into()]);
        }
        return (!plan.notes.is_empty() || plan.make_swap.is_some()).then_some(plan);
    }
    let mut dirs: BTreeSet<&String> = BTreeSet::new();
    for l in &lines {
        let mp = &l.fields[1];
        if !mp.starts_with('/') {
            continue;
        }
        let mut p = PathBuf::from("/");
        for c in Path::new(mp).components().skip(1) {
            p.push(c);
            if let Some(d) = facts.missing_dirs.get(&p.display().to_string()) {
                dirs.insert(d);
            }
        }
    }
    // Parents first: the set is sorted, and a parent sorts before its children.
    for d in dirs {
        plan.actions.push(Action::MakeDir {
            path: d.into(),
            mode: 0o755,
            uid: 0,
            gid: 0,
            purpose: "cloud-config mounts: mount point",
        });
    }
    plan.actions.push(Action::write_file(
        FSTAB,
        Contents::text(merge(fstab, &lines)),
        0o644,
        "cloud-config mounts",
    ));
    if lines.iter().any(|l| l.fields[2] == "swap") {
        plan.activate.push(vec!["swapon".into(), "-a".into()]);
    }
    plan.activate.push(vec!["mount".into(), "-a".into()]);
    if systemd {
        plan.activate
            .push(vec!["systemctl".into(), "daemon-reload".into()]);
    }
    Some(plan)
}

/// The swap file's fstab line, and whether to make it (into `plan`).
fn plan_swap(swap: &Swap, facts: &MountFacts, plan: &mut MountsPlan) -> Option<Line> {
    if swap.filename.is_empty() {
        return None;
    }
    let bytes = match swap.size {
        None | Some(SwapSize::Bytes(0)) => return None,
        Some(SwapSize::Bytes(b)) => Some(b),
        Some(SwapSize::Auto) => facts
            .mem
            .map(|m| suggested_swap(m, swap.maxsize, facts.free)),
    };
    let line = Line {
        fields: [
            swap.filename.clone(),
            "none".into(),
            "swap".into(),
            format!("sw,{MARKER}"),
            "0".into(),
            "0".into(),
        ],
    };
    // A file in use is kept (on another root: any file there, the image's own).
    if facts.swap_exists && (facts.swap_active || !facts.live) {
        return Some(line);
    }
    let Some(bytes) = bytes else {
        plan.notes.push(format!(
            "swap: warning: size auto needs the memory of the machine it runs on; {} is not made on a root that is not the running system",
            swap.filename
        ));
        return None;
    };
    let mib = bytes >> 20;
    if mib == 0 {
        plan.notes.push(format!(
            "swap: warning: size is {bytes} bytes, under 1 MiB; no swap file (an integer size is bytes: write 512M or 2G)"
        ));
        return None;
    }
    plan.make_swap = Some(MakeSwap {
        path: swap.filename.clone(),
        mib,
        nocow: facts.swap_on_btrfs,
    });
    Some(line)
}

/// What it needs of the root's facts (only when the document has `mounts` or `swap`):
/// the mount points, the devices entries name and the swap file.
pub(crate) fn wants(cfg: &CloudConfig, w: &mut Wanted) {
    if cfg.mounts.is_none() && cfg.swap.is_none() {
        return;
    }
    let entries = cfg.mounts.as_deref().unwrap_or(&[]);
    let defaults = cfg.mount_default_fields.as_deref().unwrap_or(&[]);
    let aliases = cfg.device_aliases.clone().unwrap_or_default();
    w.mounts = Some(MountsWanted {
        mount_points: entries
            .iter()
            .filter_map(|e| {
                e.get(1)
                    .cloned()
                    .flatten()
                    .or_else(|| defaults.get(1).cloned().flatten())
            })
            .collect(),
        devices: entries
            .iter()
            .filter_map(|e| match e.first() {
                Some(Some(name)) => Some((name.clone(), aliased(name, &aliases))),
                _ => None,
            })
            .collect(),
        swap_file: cfg.swap.as_ref().map(|s| s.filename.clone()),
    });
}

/// The programs it may run.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.mounts.is_some() || cfg.swap.is_some() {
        &[
            "chattr",
            "dd",
            "fallocate",
            "mkswap",
            "mount",
            "swapon",
            "systemctl",
        ]
    } else {
        &[]
    }
}

fn plan_for(cfg: &CloudConfig, cc: &Facts, with_swap: bool) -> Option<MountsPlan> {
    let facts = cc.mounts.as_ref()?;
    plan_mounts(cfg, facts, cc.has("systemctl"), with_swap)
}

/// Makes the swap file: an empty 0600 file through the root's writers, then the root's
/// own tools inside it. On a failure the file is removed and the reason returned.
fn make_swap(s: &Step, m: &MakeSwap) -> Result<(), ModuleOutcome> {
    let file = Action::write_file(
        m.path.clone(),
        Contents::text(String::new()),
        0o600,
        "cloud-config swap file",
    );
    if let Err(e) = s.apply(vec![file]) {
        return Err(failed(format!("swap: {e}")));
    }
    let mut why = None;
    for c in m.commands() {
        let mut end = s.run_tool("mounts", &c);
        if c[0] == "fallocate" && matches!(end, RunEnd::Failed(_)) {
            // cloud-init's fallback: write the zeros.
            end = s.run_tool("mounts", &m.dd());
        }
        match end {
            RunEnd::Succeeded => {}
            RunEnd::Interrupted => why = Some(ModuleOutcome::Interrupted),
            RunEnd::Failed(w) => why = Some(failed(w)),
        }
        if why.is_some() {
            break;
        }
    }
    match why {
        None => Ok(()),
        Some(o) => {
            if let Err(e) = s.ctx.root.remove_file(Path::new(&m.path)) {
                tracing::warn!("swap: removing {} after a failure: {e}", m.path);
            }
            Err(o)
        }
    }
}

/// Makes the swap file, writes fstab and the mount points, then (on the running system)
/// turns swap on and mounts.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    if let Some(why) = s.cc.mounts.as_ref().and_then(|m| m.unreadable.as_ref()) {
        return failed(format!("mounts: {why}"));
    }
    let Some(mut plan) = plan_for(s.cfg, s.cc, true) else {
        return skipped("no mounts or swap to add; /etc/fstab is left as it is");
    };
    let mut notes = plan.notes.clone();
    if let Some(m) = plan.make_swap.clone() {
        match make_swap(s, &m) {
            Ok(()) => notes.push(format!("swap file {} ({} MiB)", m.path, m.mib)),
            Err(ModuleOutcome::Interrupted) => return ModuleOutcome::Interrupted,
            Err(o) => {
                // As cloud-init: a swap file that cannot be made is a warning, and the
                // mounts go on without it.
                let why = format!("swap: warning: failed to set up {}: {o}", m.path);
                tracing::warn!("{why}");
                notes.push(why);
                match plan_for(s.cfg, s.cc, false) {
                    Some(p) => plan = p,
                    None => return skipped(notes.join("; ")),
                }
            }
        }
    }
    for n in &plan.notes {
        tracing::warn!("{n}");
    }
    if plan.actions.is_empty() && plan.make_swap.is_none() {
        return skipped(notes.join("; "));
    }
    if !plan.actions.is_empty() {
        match s.apply(std::mem::take(&mut plan.actions)) {
            Err(e) => {
                // All or nothing: the swap file made for these lines goes with them.
                if let Some(m) = &plan.make_swap {
                    if let Err(e) = s.ctx.root.remove_file(Path::new(&m.path)) {
                        tracing::warn!("swap: removing {} after a failure: {e}", m.path);
                    }
                }
                return failed(e);
            }
            Ok(n) => notes.push(format!("{FSTAB}: {n}")),
        }
    }
    if !s.ctx.live() {
        notes.push(
            "not the running system: swapon, mount -a and daemon-reload are left to its boot"
                .into(),
        );
        return ModuleOutcome::Ran {
            note: notes.join("; "),
        };
    }
    for c in &plan.activate {
        match s.run_tool("mounts", c) {
            RunEnd::Succeeded => {}
            other => return from_end(other, ""),
        }
    }
    notes.push(
        plan.activate
            .iter()
            .map(|c| c.join(" "))
            .collect::<Vec<_>>()
            .join("; "),
    );
    ModuleOutcome::Ran {
        note: notes.join("; "),
    }
}

/// The swap file, the directories and fstab, then what runs on the running system.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    if let Some(why) = l.facts.mounts.as_ref().and_then(|m| m.unreadable.as_ref()) {
        return vec![format!("fails: {why}")];
    }
    let Some(plan) = plan_for(l.cfg, l.facts, true) else {
        return vec!["nothing: no mounts or swap to add; /etc/fstab is left as it is".into()];
    };
    if plan.actions.is_empty() && plan.make_swap.is_none() {
        return plan.notes.iter().map(|n| format!("nothing: {n}")).collect();
    }
    let mut out = plan.notes.clone();
    if let Some(m) = &plan.make_swap {
        out.push(format!(
            "write {} (0600, a {} MiB swap file made by fallocate or dd, then mkswap, inside the root)",
            m.path, m.mib
        ));
    }
    out.extend(plan.actions.iter().flat_map(action_lines));
    if !plan.activate.is_empty() {
        out.push(format!(
            "on the running system only: run {}",
            plan.activate
                .iter()
                .map(|c| c.join(" "))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
    use crate::cloud_config::modules::test_support::clean_config as cfg;

    #[test]
    fn keys_good_and_hostile() {
        let c = cfg("mounts:\n - [sdb, /data]\n - [/dev/sdc1, /srv, ext4, 'defaults,noatime', 0, 2]\n - [ephemeral0, null]\n - ['nfs.example:/export', '/mnt/nfs', nfs]\n - [sdd, /x, ~, ~, 1]\nmount_default_fields: [~, ~, auto, 'defaults,nofail', '0', '2']\nswap: {filename: /var/swap, size: 1.5G, maxsize: 4294967296}\n");
        let m = c.mounts.unwrap();
        assert_eq!(m[0], [Some("sdb".into()), Some("/data".into())]);
        assert_eq!(m[1][4], Some("0".into()), "an integer is str()-ed");
        assert_eq!(m[2][1], None);
        assert_eq!(m[4][4], Some("1".into()));
        assert_eq!(
            c.mount_default_fields.unwrap()[3],
            Some("defaults,nofail".into())
        );
        let s = c.swap.unwrap();
        assert_eq!(
            (s.filename.as_str(), s.size, s.maxsize),
            ("/var/swap", Some(SwapSize::Bytes(3 << 29)), Some(4 << 30))
        );
        assert_eq!(
            cfg("swap: {size: auto}").swap.unwrap().size,
            Some(SwapSize::Auto)
        );
        assert_eq!(
            cfg("swap: {size: 0}").swap.unwrap(),
            Swap {
                filename: DEFAULT_SWAP_FILE.into(),
                size: Some(SwapSize::Bytes(0)),
                maxsize: None
            }
        );
        let table: &[(&str, &str)] = &[
            ("mounts: [sdb]", "mounts[0]: is a string; write a list"),
            ("mounts: [[]]", "mounts[0]: is empty"),
            ("mounts: [[~, /data]]", "mounts[0][0]: is null"),
            (
                "mounts: [[sdb, /data, auto, d, 0, 2, x]]",
                "mounts[0]: has 7 entries",
            ),
            (
                "mounts: [[sdb, data]]",
                "mounts[0][1]: \"data\" is not an absolute",
            ),
            ("mounts: [[sdb, /a/../etc]]", "has a .. component"),
            ("mounts: [['#sdb', /data]]", "starts with #"),
            ("mounts: [[sdb, /d, 'ext4 x']]", "mounts[0][2]"),
            ("mounts: [[sdb, /d, ext4, 'defaults\\tx']]", "mounts[0][3]"),
            (
                "mounts: [[sdb, \"/d\\nUUID=x / ext4 defaults 0 1\"]]",
                "control character",
            ),
            (
                "mounts: [[//srv/s, /d, cifs, 'username=a,password=b']]",
                "credentials=FILE",
            ),
            (
                "mounts: [[sdb, /d, ext4, defaults, x]]",
                "mounts[0][4]: \"x\" is not a number",
            ),
            (
                "mounts: [[sdb, /d, ext4, defaults, 0, true]]",
                "mounts[0][5]: is a boolean",
            ),
            (
                "mounts: [[sdb, /d, ext4, defaults, 1.0]]",
                "\"1.0\" is not a number",
            ),
            ("mount_default_fields: [a, b]", "has 2 entries; write six"),
            ("swap: {size: 2GB}", "swap.size: \"2GB\" is not a size"),
            ("swap: {size: '512'}", "swap.size: \"512\" is not a size"),
            ("swap: {size: -1}", "swap.size: is an integer"),
            (
                "swap: {maxsize: auto}",
                "swap.maxsize: \"auto\" is not a size",
            ),
            ("swap: {filename: swap.img}", "not an absolute file path"),
            ("swap: {filename: '/a b'}", "not an absolute file path"),
            ("swap: {filename: x, size: 2GB}", "swap.size: \"2GB\""),
            ("swap: {size: 1.5}", "swap.size: is a number"),
        ];
        super::super::test_support::assert_refused(table);
    }

    #[test]
    fn sizes_as_cloud_init_reads_them() {
        for (s, want) in [
            ("512M", Some(512 << 20)),
            ("2G", Some(2 << 30)),
            ("1.5G", Some(3 << 29)),
            (".5K", Some(512)),
            ("10B", Some(10)),
            ("1T", Some(1 << 40)),
            ("512", None),
            ("1.G", None),
            ("G", None),
            ("1g", None),
            ("", None),
            ("99999999999999999999T", None),
        ] {
            assert_eq!(size_bytes(s), want, "{s}");
        }
        const G: u64 = 1 << 30;
        for (mem, max, free, want) in [
            (2 * G, None, None, 2 * G),
            (8 * G, None, None, 4 * G),
            (64 * G, None, None, 8 * G),
            (8 * G, None, Some(8 * G), 2 * G),
            (2 * G, Some(G), None, G),
            (2 * G, Some(10 * G), Some(2 * G), 2 * G / 10 * 9),
        ] {
            assert_eq!(
                suggested_swap(mem, max, free),
                want,
                "{mem} {max:?} {free:?}"
            );
        }
    }

    #[test]
    fn device_aliases_name_entries() {
        let aliases: BTreeMap<String, String> =
            [("data".to_string(), "/dev/sdb".to_string())].into();
        for (name, want) in [
            ("data", "/dev/sdb"),
            ("data.2", "/dev/sdb.2"),
            ("sdc", "sdc"),
            ("other.1", "other.1"),
        ] {
            assert_eq!(aliased(name, &aliases), want, "{name}");
        }
    }

    fn line(f: [&str; 6]) -> Line {
        Line {
            fields: f.map(str::to_string),
        }
    }

    fn entries(doc: &str) -> Vec<Entry> {
        cfg(doc).mounts.unwrap()
    }

    #[test]
    fn entries_normalised() {
        let builtin = default_fields(true);
        let devices: BTreeMap<String, String> =
            [("sdb".to_string(), "/dev/sdb1".to_string())].into();
        let opts = format!("{SYSTEMD_OPTIONS},{MARKER}");
        let cases: &[(&str, &str, Vec<Line>)] = &[
            (
                "mounts: [[sdb, /data]]",
                "",
                vec![line(["/dev/sdb1", "/data", "auto", &opts, "0", "2"])],
            ),
            // Already in fstab: written as given.
            (
                "mounts: [[sdb, /data]]",
                "/dev/sdb1 /old ext4 defaults 0 2\n",
                vec![line(["sdb", "/data", "auto", &opts, "0", "2"])],
            ),
            // Unresolved names are written as given.
            (
                "mounts: [[sdc, /c, ext4, ~, ~, 1], [LABEL=x, '/my data']]",
                "",
                vec![
                    line(["sdc", "/c", "ext4", &opts, "0", "1"]),
                    line(["LABEL=x", "/my data", "auto", &opts, "0", "2"]),
                ],
            ),
            // A null or empty mount point removes the entry and the earlier ones of its device.
            (
                "mounts: [[sdb, /a], [sdc, /c], [sdb, /b], [sdb, null], [sdc, '']]",
                "",
                vec![],
            ),
            (
                "mounts: [[sdb, /a], [sdb], [sdb, /b]]",
                "",
                vec![line(["/dev/sdb1", "/b", "auto", &opts, "0", "2"])],
            ),
            (
                "mounts: [[/dev/sdd, none, swap, sw, 0, 0]]",
                "",
                vec![line([
                    "/dev/sdd",
                    "none",
                    "swap",
                    &format!("sw,{MARKER}"),
                    "0",
                    "0",
                ])],
            ),
        ];
        for (doc, fstab, want) in cases {
            let (_, defined) = kept_lines(fstab);
            let got = normalise(&entries(doc), &builtin, &builtin, &devices, &defined);
            assert_eq!(&got, want, "{doc} with {fstab:?}");
        }
        // mount_default_fields fill nulls and missing fields; a null past the mount point
        // takes cloud-init's own default, never "None".
        let c =
            cfg("mounts: [[sdc, /c, ~, ~]]\nmount_default_fields: [None, ~, xfs, ~, '1', '0']\n");
        let got = normalise(
            c.mounts.as_deref().unwrap(),
            c.mount_default_fields.as_deref().unwrap(),
            &builtin,
            &BTreeMap::new(),
            &BTreeSet::new(),
        );
        assert_eq!(got, [line(["sdc", "/c", "xfs", &opts, "1", "0"])]);
        assert_eq!(
            default_fields(false)[3].as_deref(),
            Some("defaults,nobootwait")
        );
    }

    #[test]
    fn fstab_merged_and_second_run_replaces_its_lines() {
        let facts = |fstab: &str| MountFacts {
            fstab: Some(fstab.into()),
            ..Default::default()
        };
        let written = |c: &CloudConfig, f: &MountFacts| -> String {
            let p = plan_mounts(c, f, true, true).unwrap();
            match p.actions.last().unwrap() {
                Action::WriteFile {
                    path,
                    contents,
                    mode,
                    ..
                } => {
                    assert_eq!((path.to_str().unwrap(), *mode), (FSTAB, 0o644));
                    contents.display().into_owned()
                }
                other => panic!("{other:?}"),
            }
        };
        let base = "# /etc/fstab\nUUID=r / ext4 errors=remount-ro 0 1\n\n/dev/sr0 /media/cdrom udf,iso9660 user,noauto 0 0\n";
        let first = written(
            &cfg("mounts: [[sdc, /data], [LABEL=b, '/b x']]"),
            &facts(base),
        );
        let o = format!("{SYSTEMD_OPTIONS},{MARKER}");
        assert_eq!(
            first,
            format!("{base}sdc\t/data\tauto\t{o}\t0\t2\nLABEL=b\t/b\\040x\tauto\t{o}\t0\t2\n")
        );
        // The next instance's document: its lines replace the earlier ones.
        let second = written(
            &cfg("mounts: [[sdd, /d]]\nswap: {size: 1M}"),
            &facts(&first),
        );
        assert_eq!(
            second,
            format!("{base}sdd\t/d\tauto\t{o}\t0\t2\n/swap.img\tnone\tswap\tsw,{MARKER}\t0\t0\n")
        );
        // The same document again: the same file.
        assert_eq!(
            written(
                &cfg("mounts: [[sdd, /d]]\nswap: {size: 1M}"),
                &facts(&second)
            ),
            second
        );
        // Nothing to add: fstab untouched (cloud-init's "No modifications to fstab needed").
        assert_eq!(
            plan_mounts(&cfg("mounts: [[sdd]]"), &facts(&second), true, true),
            None
        );
        assert_eq!(
            plan_mounts(&cfg("bootcmd: [x]"), &facts(&second), true, true),
            None
        );
        // The swap file listed by a line of the image's own (untagged, as cloud-init 24.3+
        // leaves it): not listed twice.
        let own = format!("{base}/swap.img\tnone\tswap\tsw\t0\t0\n");
        assert_eq!(
            written(&cfg("mounts: [[sdd, /d]]\nswap: {size: 1M}"), &facts(&own)),
            format!("{own}sdd\t/d\tauto\t{o}\t0\t2\n")
        );
        // The file missing on the running system: made and turned on, fstab as it is.
        let live = MountFacts {
            fstab: Some(own.clone()),
            live: true,
            ..Default::default()
        };
        let p = plan_mounts(&cfg("swap: {size: 1M}"), &live, true, true).unwrap();
        assert_eq!(
            (p.make_swap.map(|m| m.mib), p.actions.len(), p.activate),
            (
                Some(1),
                0,
                vec![vec!["swapon".to_string(), "-a".to_string()]]
            )
        );
        // No fstab at all.
        assert_eq!(
            written(&cfg("mounts: [[sdd, /d]]"), &MountFacts::default()),
            format!("sdd\t/d\tauto\t{o}\t0\t2\n")
        );
    }

    #[test]
    fn plans_mount_points_swap_and_activation() {
        let c = cfg("mounts: [[sdc, /srv/a/b], [sdd, /srv/c], [sde, none, swap, sw]]\nswap: {filename: /var/swap.img, size: 2G}");
        let facts = MountFacts {
            missing_dirs: ["/srv/a", "/srv/a/b", "/srv/c"].map(String::from).into(),
            live: true,
            ..Default::default()
        };
        let p = plan_mounts(&c, &facts, true, true).unwrap();
        let dirs: Vec<String> = p
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::MakeDir {
                    path,
                    mode: 0o755,
                    uid: 0,
                    gid: 0,
                    ..
                } => Some(path.display().to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(dirs, ["/srv/a", "/srv/a/b", "/srv/c"]);
        assert_eq!(
            p.make_swap,
            Some(MakeSwap {
                path: "/var/swap.img".into(),
                mib: 2048,
                nocow: false
            })
        );
        assert_eq!(
            p.make_swap.as_ref().unwrap().commands(),
            [
                vec!["fallocate", "-l", "2048M", "/var/swap.img"],
                vec!["mkswap", "/var/swap.img"]
            ]
        );
        assert_eq!(
            p.activate,
            [
                vec!["swapon", "-a"],
                vec!["mount", "-a"],
                vec!["systemctl", "daemon-reload"]
            ]
        );
        // Making it failed: the same plan without the swap file.
        let p = plan_mounts(&c, &facts, false, false).unwrap();
        assert_eq!(p.make_swap, None);
        assert!(
            matches!(p.actions.last(), Some(Action::WriteFile { contents, .. }) if !contents.display().contains("swap.img"))
        );
        assert_eq!(p.activate, [vec!["swapon", "-a"], vec!["mount", "-a"]]);

        let swap = |doc: &str, f: &MountFacts| plan_mounts(&cfg(doc), f, true, true).unwrap();
        // An active swap file is kept; another root's file is the image's own.
        let active = MountFacts {
            swap_exists: true,
            swap_active: true,
            live: true,
            ..Default::default()
        };
        assert_eq!(swap("swap: {size: 1G}", &active).make_swap, None);
        let image = MountFacts {
            swap_exists: true,
            ..Default::default()
        };
        assert_eq!(swap("swap: {size: 1G}", &image).make_swap, None);
        let on_disk = MountFacts {
            swap_exists: true,
            live: true,
            ..Default::default()
        };
        assert!(swap("swap: {size: 1G}", &on_disk).make_swap.is_some());
        // auto: the running system's memory; on another root, a warning and no file.
        let live = MountFacts {
            live: true,
            mem: Some(2 << 30),
            free: Some(100 << 30),
            swap_on_btrfs: true,
            ..Default::default()
        };
        let m = swap("swap: {size: auto}", &live).make_swap.unwrap();
        assert_eq!((m.mib, m.nocow), (2048, true));
        assert_eq!(m.commands()[0], ["chattr", "+C", "/swap.img"]);
        let p = swap("swap: {size: auto}", &MountFacts::default());
        assert!(
            p.actions.is_empty() && p.notes[0].contains("size auto"),
            "{p:?}"
        );
        let p = swap("swap: {size: 1024}", &MountFacts::default());
        assert!(p.notes[0].contains("under 1 MiB"), "{p:?}");
        assert_eq!(
            plan_mounts(&cfg("swap: {size: 0}"), &live, true, true),
            None
        );
        assert_eq!(
            plan_mounts(&cfg("swap: {filename: '', size: 1G}"), &live, true, true),
            None
        );
    }

    #[test]
    fn escaping_reads_back() {
        for s in ["/a b", "/tab\there", "/back\\slash", "/plain", "/nl\nx"] {
            assert_eq!(unescape(&escape(s)), s);
            assert!(!escape(s).contains(char::is_whitespace));
        }
        assert_eq!(unescape("/a\\040b\\9"), "/a b\\9");
    }

    fn find(tool: &str) -> String {
        ["/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"]
            .iter()
            .map(|d| format!("{d}{tool}"))
            .find(|p| Path::new(p).exists())
            .unwrap_or_else(|| {
                panic!("{tool} is missing: apt-get install util-linux mount e2fsprogs")
            })
    }

    /// The written fstab as util-linux reads it: `findmnt --verify` finds no parse error
    /// and no error, `findmnt` reads back every field as written (escapes included), and
    /// `mount -fav -T` (faked, in a private mount namespace) mounts every line.
    #[test]
    fn written_fstab_passes_util_linux() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        let img = format!("{d}/fs.img");
        std::fs::write(&img, vec![0u8; 8 << 20]).unwrap();
        let ok = std::process::Command::new(find("mkfs.ext4"))
            .args(["-q", "-F", &img])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        for m in ["data x", "srv", "tab\there"] {
            std::fs::create_dir(format!("{d}/{m}")).unwrap();
        }
        let old = format!("{img}\t{d}/srv\text4\tdefaults,{MARKER}\t0\t2\n# kept comment\n{img} {d}/srv ext4 defaults,nofail 0 0\n");
        let doc = format!(
            "mounts:\n - ['{img}', '{d}/data x', ext4]\n - ['{img}', \"{d}/tab\\there\", auto, 'defaults,nofail,ro', 0, 0]\n - ['{d}/other.img', '{d}/gone']\n - ['{d}/other.img', ~]\n"
        );
        let (c, p) = document::from_text(&doc);
        assert!(p.is_empty(), "{p:?}");
        let facts = MountFacts {
            fstab: Some(old),
            ..Default::default()
        };
        let plan = plan_mounts(&c, &facts, true, true).unwrap();
        let Some(Action::WriteFile { contents, .. }) = plan.actions.last() else {
            panic!("{plan:?}")
        };
        let fstab = format!("{d}/fstab");
        std::fs::write(&fstab, contents.bytes()).unwrap();

        let out = std::process::Command::new(find("findmnt"))
            .args(["--verify", "--tab-file", &fstab])
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && text.contains("0 parse errors, 0 errors"),
            "{text}\n{}",
            contents.display()
        );

        let out = std::process::Command::new(find("findmnt"))
            .args([
                "--json",
                "--tab-file",
                &fstab,
                "-o",
                "SOURCE,TARGET,FSTYPE,OPTIONS,FREQ,PASSNO",
            ])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let got: Vec<String> = v["filesystems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}|{}|{}|{}|{}|{}",
                    f["source"].as_str().unwrap(),
                    f["target"].as_str().unwrap(),
                    f["fstype"].as_str().unwrap(),
                    f["options"].as_str().unwrap(),
                    f["freq"],
                    f["passno"]
                )
            })
            .collect();
        let o = format!("{SYSTEMD_OPTIONS},{MARKER}");
        assert_eq!(
            got,
            [
                format!("{img}|{d}/srv|ext4|defaults,nofail|0|0"),
                format!("{img}|{d}/data x|ext4|{o}|0|2"),
                format!("{img}|{d}/tab\there|auto|defaults,nofail,ro,{MARKER}|0|0"),
            ]
        );

        let out = std::process::Command::new(find("unshare"))
            .args(["--mount", "--propagation", "private"])
            .arg(find("mount"))
            .args(["-fav", "-T", &fstab])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for m in ["srv", "data x", "tab\there"] {
            assert!(
                text.contains(&format!("{d}/{m}"))
                    && text.matches("successfully mounted").count() == 3,
                "{m}: {text}"
            );
        }
    }

    /// The swap file's commands make a file `swapon` would take: `fallocate` the size,
    /// `mkswap` its signature (util-linux).
    #[test]
    fn swap_commands_make_a_swap_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("swap.img").display().to_string();
        std::fs::write(&path, "").unwrap();
        let m = MakeSwap {
            path: path.clone(),
            mib: 4,
            nocow: false,
        };
        for c in m.commands() {
            let out = std::process::Command::new(find(&c[0]))
                .args(&c[1..])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{c:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 4 << 20);
        let page = [4096usize, 16384, 65536]
            .into_iter()
            .find(|p| bytes.get(p - 10..*p) == Some(b"SWAPSPACE2"));
        assert!(page.is_some(), "no swap signature");
        // dd, cloud-init's way when fallocate fails, writes the same size.
        std::fs::remove_file(&path).unwrap();
        let dd = m.dd();
        let ok = std::process::Command::new(find("dd"))
            .args(&dd[1..])
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 << 20);
    }
}
