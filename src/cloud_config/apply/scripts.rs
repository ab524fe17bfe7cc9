//! The script parts of the user-data and vendor-data, run as cloud-init runs them:
//! named as cloud-init names them, written (0700) under the instance's directory, each
//! run once as its module's frequency says with a record of its own.
//!
//! - `text/cloud-boothook`: the early stage's `boothooks`, before `bootcmd`, on every
//!   boot, with `INSTANCE_ID` set; the `#cloud-boothook` line is taken off
//!   (`handlers/boot_hook.py`). User-data's first, then vendor-data's, in part order.
//! - `text/x-shellscript` (and `#!`) of the user-data: `scripts_user`, once per instance,
//!   which runs them and `runcmd`'s script (named `runcmd`) in name order, as cloud-init's
//!   `runparts` runs the instance's `scripts/` directory (`cc_scripts_user.py`).
//! - `text/x-shellscript` of the vendor-data: `scripts_vendor`, once per instance, with
//!   `vendor_data.prefix` in front (`cc_scripts_vendor.py`).
//! - `text/x-shellscript-per-once` / `-per-boot` / `-per-instance` (cloud-init 22.1) of
//!   the user-data: `scripts_per_once`, `scripts_per_boot`, `scripts_per_instance`.
//!   Vendor-data's are not run: cloud-init writes them to
//!   `/var/lib/cloud/scripts/vendor/per-*`, which none of its modules runs.
//!
//! A part without a file name is `part-NNN` (its 1-based place in its input); two parts
//! written to one file leave the later one, as cloud-init's second write replaces the
//! first, and `runcmd`'s script replaces a part named `runcmd`. A failing script does not
//! stop the others; it fails its module. Each script has a `started` record written
//! before it runs, so a kill neither repeats a script nor skips the ones after it: the
//! one cut off is reported, the others run (docs/cloud-config.md "Script parts").

use std::fmt;
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use crate::cloud_config::commands::Command;
use crate::cloud_config::modules::{self, Frequency, Run, Stage};
use crate::cloud_config::parts::{Part, PartKind};
use crate::cloud_config::userdata::VENDOR_PART;

use super::commands::{direct_program, shellify, single_argv};
use super::driver::{ModuleOutcome, StageContext};
use super::exec::{self, Program, RunEnd};
use super::semaphore::{Gate, Semaphores};
use crate::facts::which;

/// What a script module says when it has no script (from the module table).
fn nothing(module: &str) -> &'static str {
    match modules::module(module).map(|m| &m.run) {
        Some(Run::Scripts(s)) => s.nothing,
        _ => "",
    }
}

/// One script to run.
#[derive(Clone)]
pub struct Script {
    /// The module that runs it (a script module of the module table).
    pub module: &'static str,
    /// Its file name.
    pub name: String,
    /// Where it is written, relative to the instance's directory.
    pub rel: PathBuf,
    /// How often it runs.
    pub frequency: Frequency,
    /// Its once-only record's name ([`Semaphores`]).
    pub record: String,
    /// Where it came from, for people: `user-data part 2`, `the runcmd entries`.
    pub from: String,
    /// What it is, to run: may hold secrets, never shown.
    pub body: Zeroizing<Vec<u8>>,
    /// `runcmd`'s one list entry, which may run without the shell
    /// ([`super::commands::direct_program`]).
    pub direct: Option<Vec<String>>,
}

impl fmt::Debug for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Script")
            .field("module", &self.module)
            .field("name", &self.name)
            .field("rel", &self.rel)
            .field("frequency", &self.frequency)
            .field("record", &self.record)
            .field("from", &self.from)
            .field("body", &format_args!("<{} bytes>", self.body.len()))
            .finish()
    }
}

impl Script {
    /// How it is described in `plan` and `show`: name, module, stage, frequency, origin.
    pub fn describe(&self) -> String {
        let stage = match stage_of(self.module) {
            Stage::Early => "early",
            _ => "late",
        };
        format!(
            "{} ({}, {} bytes): {} ({stage} stage), {}",
            self.name,
            self.from,
            self.body.len(),
            self.module,
            how_often(self.frequency)
        )
    }
}

/// The stage a script module runs in.
fn stage_of(module: &str) -> Stage {
    modules::module(module).map_or(Stage::Late, |m| m.stage)
}

/// A frequency in words.
pub(crate) fn how_often(f: Frequency) -> &'static str {
    match f {
        Frequency::PerBoot => "on every boot",
        Frequency::PerInstance => "once per instance",
        Frequency::PerOnce => "once for the life of the machine",
        Frequency::Always => "each time its stage runs",
    }
}

/// `user-data part N` or `vendor-data part N`, as the other messages number parts.
pub(crate) fn source(part: u16) -> String {
    match part.checked_sub(VENDOR_PART) {
        Some(p) => format!("vendor-data part {p}"),
        None => format!("user-data part {part}"),
    }
}

/// All the scripts of one user-data (and vendor-data), and what is said about them.
#[derive(Debug, Clone, Default)]
pub struct Scripts {
    /// In the order they run: the boothooks, then each late module's in name order.
    pub scripts: Vec<Script>,
    /// Parts replaced by a later one written to the same file (as cloud-init does).
    pub notes: Vec<String>,
    /// Parts that are not run, and why (as cloud-init does not run them).
    pub not_run: Vec<String>,
}

impl Scripts {
    /// The scripts of `modules`, in their run order.
    pub fn of<'s>(&'s self, modules: &[&str]) -> Vec<&'s Script> {
        self.scripts
            .iter()
            .filter(|s| modules.contains(&s.module))
            .collect()
    }
}

/// cloud-init's `util.clean_filename`: `/` becomes `_`, and only ASCII letters, digits
/// and `_-.()` are kept. A name that leaves nothing a file can be called (empty, `.`,
/// `..`) is `None`: the part then gets its `part-NNN` name.
pub(crate) fn clean_filename(name: &str) -> Option<String> {
    let clean: String = name
        .replace('/', "_")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "_-.()".contains(*c))
        .collect();
    (!matches!(clean.as_str(), "" | "." | "..")).then_some(clean)
}

/// cloud-init's `util.dos2unix`: CRLF line ends become LF.
fn dos2unix(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    for (i, b) in body.iter().enumerate() {
        if !(*b == b'\r' && body.get(i + 1) == Some(&b'\n')) {
            out.push(*b);
        }
    }
    out
}

/// A boothook as `boot_hook.py` writes it: `#cloud-boothook` taken off the very start
/// (case as written), then the leading white space.
fn boothook_body(body: &[u8]) -> Vec<u8> {
    let body = dos2unix(body);
    let rest = body
        .strip_prefix(b"#cloud-boothook".as_slice())
        .unwrap_or(&body);
    let start = rest
        .iter()
        .position(|b| !b" \t\n\r\x0b\x0c".contains(b))
        .unwrap_or(rest.len());
    rest[start..].to_vec()
}

/// The scripts of `parts` (user-data's, then vendor-data's, as [`ParsedUserData::scripts`]
/// holds them) and of `runcmd`.
///
/// [`ParsedUserData::scripts`]: crate::cloud_config::userdata::ParsedUserData::scripts
pub(crate) fn plan(parts: &[(u16, Part)], runcmd: &[Command]) -> Scripts {
    let mut out = Scripts::default();
    let mut late: Vec<Script> = Vec::new();
    for (number, p) in parts {
        let vendor = *number >= VENDOR_PART;
        let from = source(*number);
        let fallback = format!("part-{:03}", p.leaf);
        let name = p
            .filename
            .as_deref()
            .and_then(clean_filename)
            .unwrap_or_else(|| fallback.clone());
        let (module, dir, freq, name) = match (p.kind, vendor) {
            (PartKind::CloudConfig, _) => continue,
            (PartKind::Boothook, _) => {
                // Each boothook runs right after it is written, so two of one name both
                // run: the record is the part's, not the file's.
                let which = if vendor { "vendor" } else { "user" };
                out.scripts.push(Script {
                    module: "boothooks",
                    rel: Path::new("boothooks").join(&name),
                    name,
                    frequency: Frequency::PerBoot,
                    record: format!("boothooks+{which}+{:03}", p.leaf),
                    from,
                    body: Zeroizing::new(boothook_body(&p.body)),
                    direct: None,
                });
                continue;
            }
            (PartKind::Script, false) => (
                "scripts_user",
                Path::new("scripts").to_path_buf(),
                Frequency::PerInstance,
                name,
            ),
            (PartKind::Script, true) => (
                "scripts_vendor",
                Path::new("scripts/vendor").to_path_buf(),
                Frequency::PerInstance,
                name,
            ),
            (PartKind::ScriptPer(f), true) => {
                let what = per_dir(f);
                out.not_run.push(format!(
                    "{from}: a text/x-shellscript-{what} part is not run: cloud-init writes \
                     vendor-data's {what} scripts to /var/lib/cloud/scripts/vendor/{what}, \
                     which none of its modules runs"
                ));
                continue;
            }
            (PartKind::ScriptPer(f), false) => {
                // `shell_script_by_frequency.py` takes the base name first.
                let base = p
                    .filename
                    .as_deref()
                    .map(|n| n.rsplit('/').next().unwrap_or(n))
                    .and_then(clean_filename)
                    .unwrap_or(fallback);
                let module = match f {
                    Frequency::PerOnce => "scripts_per_once",
                    Frequency::PerBoot => "scripts_per_boot",
                    _ => "scripts_per_instance",
                };
                (module, Path::new("scripts").join(per_dir(f)), f, base)
            }
        };
        let rel = dir.join(&name);
        late.push(Script {
            module,
            record: rel.display().to_string().replace('/', "+"),
            rel,
            name,
            frequency: freq,
            from,
            body: Zeroizing::new(dos2unix(&p.body)),
            direct: None,
        });
    }
    if !runcmd.is_empty() {
        late.push(Script {
            module: "runcmd",
            name: "runcmd".into(),
            rel: Path::new("scripts").join("runcmd"),
            frequency: Frequency::PerInstance,
            // The record runcmd has always had.
            record: "runcmd".into(),
            from: format!("the {} runcmd entries", runcmd.len()),
            body: Zeroizing::new(shellify(runcmd).into_bytes()),
            direct: single_argv(runcmd).map(<[String]>::to_vec),
        });
    }
    // One file each: a later part (or runcmd's script) written to the same file replaces
    // an earlier one.
    let mut kept: Vec<Script> = Vec::new();
    for s in late {
        if let Some(i) = kept.iter().position(|k| k.rel == s.rel) {
            let old = kept.remove(i);
            out.notes.push(format!(
                "{} ({}) is not run: {} is written to the same file {} after it, as \
                 cloud-init writes them",
                old.from,
                old.name,
                s.from,
                old.rel.display()
            ));
        }
        kept.push(s);
    }
    // In module order; within a module, as `runparts` runs `sorted(os.listdir(dir))`:
    // code-point order of the names, runcmd's script among scripts_user's.
    let rank = |m: &str| {
        let m = if m == "runcmd" { "scripts_user" } else { m };
        modules::TABLE.iter().position(|x| x.name == m)
    };
    kept.sort_by(|a, b| (rank(a.module), &a.name).cmp(&(rank(b.module), &b.name)));
    out.scripts.extend(kept);
    out
}

/// The directory of a frequency's scripts, as cloud-init's `scripts/per-*` names it.
fn per_dir(f: Frequency) -> &'static str {
    match f {
        Frequency::PerOnce => "per-once",
        Frequency::PerBoot => "per-boot",
        _ => "per-instance",
    }
}

/// A script module's frequency (its scripts' records follow it).
pub(crate) fn frequency(module: &str) -> Frequency {
    modules::module(module).map_or(Frequency::PerInstance, |m| m.frequency)
}

/// How one script's turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Turn {
    /// It ran and exited 0.
    Ran,
    /// Its record says it ran already; the record's note.
    AlreadyRan(String),
    /// It failed, could not be run, or was cut off in an earlier run; why.
    Failed(String),
    /// SIGTERM stopped it: its `started` record stays, and the next run reports it cut
    /// off rather than running it a second time.
    Interrupted,
}

impl fmt::Display for Turn {
    /// In words, for logs: `ran`, `already ran: …`, `failed: …`, `interrupted`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Turn::Ran => f.write_str("ran"),
            Turn::AlreadyRan(note) => write!(f, "already ran: {note}"),
            Turn::Failed(why) => write!(f, "failed: {why}"),
            Turn::Interrupted => f.write_str("interrupted (stopped by SIGTERM; not run again)"),
        }
    }
}

/// Runs `s` if its record allows: written, recorded as started (durably), run with
/// `env` and `prefix` in front (vendor scripts), recorded as ended.
pub(crate) fn run_one(
    ctx: &StageContext,
    sems: &Semaphores,
    s: &Script,
    env: &[(String, String)],
    prefix: &[String],
) -> Turn {
    let (record, freq) = (s.record.as_str(), s.frequency);
    let finish = |note: &str, turn: Turn| match sems.finish(record, freq, note) {
        Ok(()) => turn,
        Err(e) => Turn::Failed(format!("{}: {note}, but recording it failed: {e}", s.name)),
    };
    let failed = |why: String| finish(&format!("failed: {why}"), Turn::Failed(why));
    match sems.check(record, freq) {
        Err(e) => return Turn::Failed(format!("{} ({}): reading its record: {e}", s.name, s.from)),
        Ok(Gate::Done(note)) => return Turn::AlreadyRan(note),
        Ok(Gate::CutOff) => {
            let why = format!(
                "{} ({}) was interrupted (power cut or kill) in an earlier run; it is not run \
                 a second time",
                s.name, s.from
            );
            return finish("cut off", Turn::Failed(why));
        }
        Ok(Gate::Run) => {}
    }
    let path = crate::state::instance_dir(&ctx.instance).join(&s.rel);
    let script = path.display().to_string();
    // cloud-init runs `prefix + [script]`, the prefix's program found on `PATH`.
    let direct = prefix
        .is_empty()
        .then(|| direct_program(&ctx.root, s.direct.as_deref()?))
        .flatten();
    let hide_args = direct.is_some();
    let (program, mut args) = match prefix.split_first() {
        None => direct.unwrap_or_else(|| (script.clone(), Vec::new())),
        Some((p, rest)) if p.contains('/') => (p.clone(), rest.to_vec()),
        Some((p, rest)) => match which(&ctx.root, p) {
            Some(found) => (found, rest.to_vec()),
            None => {
                return failed(format!(
                    "vendor_data.prefix: {p} is not in the root; install it or write its path"
                ))
            }
        },
    };
    if !prefix.is_empty() {
        args.push(script);
    }
    if let Err(e) = ctx.root.write_file(&path, &s.body, 0o700) {
        return failed(format!(
            "{} ({}): writing {}: {e}",
            s.name,
            s.from,
            path.display()
        ));
    }
    if let Err(e) = sems.start(record, freq) {
        return Turn::Failed(format!(
            "{} ({}): could not record that it starts ({e}); it is not run, as it could then \
             run twice",
            s.name, s.from
        ));
    }
    let p = Program {
        module: s.module,
        program: &program,
        args,
        env: env.to_vec(),
        timeout: ctx.command_timeout,
        hide_args,
    };
    match exec::run(&ctx.root, &p, ctx.stop) {
        RunEnd::Succeeded => finish(&format!("ran: {}", s.from), Turn::Ran),
        RunEnd::Failed(why) => failed(format!("{} ({}): {why}", s.name, s.from)),
        RunEnd::Interrupted => Turn::Interrupted,
    }
}

/// A script module's outcome from its scripts' turns, in run order (`None`: not reached,
/// as the stage was stopped first).
pub(crate) fn outcome(module: &str, turns: &[(&Script, Option<&Turn>)]) -> ModuleOutcome {
    if turns.is_empty() {
        return ModuleOutcome::Skipped {
            why: nothing(module).into(),
        };
    }
    if turns
        .iter()
        .any(|(_, t)| matches!(t, None | Some(Turn::Interrupted)))
    {
        return ModuleOutcome::Interrupted;
    }
    let (mut ran, mut before, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for (s, t) in turns {
        match t {
            Some(Turn::Ran) => ran.push(s.name.clone()),
            Some(Turn::AlreadyRan(note)) => before.push(format!("{}: {note}", s.name)),
            Some(Turn::Failed(why)) => failed.push(why.clone()),
            _ => {}
        }
    }
    if !failed.is_empty() {
        // runparts runs them all, then fails the module naming the failures.
        let why = match turns.len() {
            1 => failed.join(""),
            n => format!(
                "{} of {n} scripts failed: {}",
                failed.len(),
                failed.join("; ")
            ),
        };
        return ModuleOutcome::Failed { why };
    }
    if ran.is_empty() {
        return ModuleOutcome::Skipped {
            why: format!("already ran ({})", before.join("; ")),
        };
    }
    let mut note = format!("ran {}", ran.join(", "));
    if !before.is_empty() {
        note.push_str(&format!("; already ran before: {}", before.len()));
    }
    ModuleOutcome::Ran { note }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::userdata;

    use crate::cloud_config::parts::test_multipart as mime;

    fn planned(user: &str, vendor: Option<&str>) -> Scripts {
        let u = userdata::read(user.as_bytes(), vendor.map(str::as_bytes)).unwrap();
        assert!(u.problems.is_empty(), "{:?}", u.problems);
        plan(&u.scripts, &u.config.runcmd)
    }

    fn rows(s: &Scripts) -> Vec<(&str, &str, Frequency)> {
        s.scripts
            .iter()
            .map(|s| (s.module, s.name.as_str(), s.frequency))
            .collect()
    }

    #[test]
    fn file_names_are_cleaned_as_cloud_init_cleans_them() {
        for (name, want) in [
            ("setup.sh", Some("setup.sh")),
            ("a/b c.sh", Some("a_bc.sh")),
            ("../x", Some(".._x")),
            ("ünï(1).sh", Some("n(1).sh")),
            ("  ", None),
            ("..", None),
            (".", None),
            ("$%&", None),
        ] {
            assert_eq!(clean_filename(name).as_deref(), want, "{name:?}");
        }
    }

    #[test]
    fn scripts_are_named_ordered_and_given_their_modules_frequencies() {
        use Frequency::*;
        let user = mime(&[
            ("Content-Type: text/cloud-config", "#cloud-config\nruncmd: [ls]"),
            // Blank: not run, but cloud-init numbers it, so the next is part-003.
            ("Content-Type: text/x-shellscript", " "),
            ("Content-Type: text/x-shellscript", "#!/bin/sh\necho unnamed"),
            (
                "Content-Type: text/x-shellscript\nContent-Disposition: attachment; filename=\"zz.sh\"",
                "#!/bin/sh\necho zz",
            ),
            (
                "Content-Type: text/x-shellscript; name=\"a b.sh\"",
                "#!/bin/sh\r\necho crlf\r\n",
            ),
            (
                "Content-Type: text/x-shellscript-per-boot\nContent-Disposition: attachment; filename=\"dir/every.sh\"",
                "#!/bin/sh\necho boot",
            ),
            ("Content-Type: text/x-shellscript-per-once", "#!/bin/sh\necho once"),
            ("Content-Type: text/x-shellscript-per-instance", "#!/bin/sh\necho inst"),
            ("Content-Type: text/cloud-boothook", "#cloud-boothook\n\n#!/bin/sh\necho hook"),
        ]);
        let s = planned(&user, None);
        assert_eq!(
            rows(&s),
            [
                ("boothooks", "part-009", PerBoot),
                ("scripts_per_once", "part-007", PerOnce),
                ("scripts_per_boot", "every.sh", PerBoot),
                ("scripts_per_instance", "part-008", PerInstance),
                // runparts' sorted names: runcmd's script among the parts.
                ("scripts_user", "ab.sh", PerInstance),
                ("scripts_user", "part-003", PerInstance),
                ("runcmd", "runcmd", PerInstance),
                ("scripts_user", "zz.sh", PerInstance),
            ]
        );
        let by = |name: &str| s.scripts.iter().find(|x| x.name == name).unwrap();
        assert_eq!(&by("part-009").body[..], b"#!/bin/sh\necho hook");
        assert_eq!(&by("ab.sh").body[..], b"#!/bin/sh\necho crlf\n");
        assert_eq!(&by("runcmd").body[..], b"#!/bin/sh\nls\n");
        assert_eq!(by("every.sh").rel, Path::new("scripts/per-boot/every.sh"));
        assert_eq!(by("part-003").rel, Path::new("scripts/part-003"));
        assert_eq!(by("part-003").from, "user-data part 1");
        let records: Vec<&str> = s.scripts.iter().map(|x| x.record.as_str()).collect();
        assert_eq!(
            records,
            [
                "boothooks+user+009",
                "scripts+per-once+part-007",
                "scripts+per-boot+every.sh",
                "scripts+per-instance+part-008",
                "scripts+ab.sh",
                "scripts+part-003",
                "runcmd",
                "scripts+zz.sh",
            ]
        );
        assert!(s.notes.is_empty() && s.not_run.is_empty(), "{s:?}");
        // Bodies are never printed.
        assert!(!format!("{s:?}").contains("echo"));
        assert!(
            by("ab.sh").describe().contains(
                "ab.sh (user-data part 3, 20 bytes): scripts_user (late stage), once per instance"
            ),
            "{}",
            by("ab.sh").describe()
        );
    }

    #[test]
    fn a_later_file_of_the_same_name_replaces_an_earlier_one() {
        let named = |n: &str, body: &str| {
            (
                format!("Content-Type: text/x-shellscript\nContent-Disposition: attachment; filename=\"{n}\""),
                body.to_string(),
            )
        };
        let parts = [
            named("same.sh", "#!/bin/sh\necho first"),
            named("same.sh", "#!/bin/sh\necho second"),
            named("runcmd", "#!/bin/sh\necho mine"),
            (
                "Content-Type: text/cloud-config".to_string(),
                "#cloud-config\nruncmd: [ls]".to_string(),
            ),
        ];
        let refs: Vec<(&str, &str)> = parts
            .iter()
            .map(|(h, b)| (h.as_str(), b.as_str()))
            .collect();
        let s = planned(&mime(&refs), None);
        let names: Vec<(&str, &str)> = s
            .scripts
            .iter()
            .map(|x| (x.name.as_str(), x.from.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("runcmd", "the 1 runcmd entries"),
                ("same.sh", "user-data part 1")
            ]
        );
        assert_eq!(s.notes.len(), 2, "{:?}", s.notes);
        assert!(
            s.notes[0].contains("user-data part 0 (same.sh) is not run"),
            "{:?}",
            s.notes
        );
        // Without runcmd entries the part named runcmd runs, under its own record.
        let s = planned(&mime(&refs[2..3]), None);
        assert_eq!(
            rows(&s),
            [("scripts_user", "runcmd", Frequency::PerInstance)]
        );
        assert_eq!(s.scripts[0].record, "scripts+runcmd");
    }

    #[test]
    fn vendor_scripts_run_as_scripts_vendor_and_its_per_frequency_ones_not_at_all() {
        let user = mime(&[(
            "Content-Type: text/cloud-boothook",
            "#cloud-boothook\necho u",
        )]);
        let vendor = mime(&[
            ("Content-Type: text/x-shellscript", "#!/bin/sh\necho v"),
            (
                "Content-Type: text/x-shellscript-per-boot",
                "#!/bin/sh\necho vb",
            ),
            (
                "Content-Type: text/cloud-boothook",
                "#cloud-boothook\necho vh",
            ),
        ]);
        let s = planned(&user, Some(&vendor));
        let got: Vec<(&str, &str, &str)> = s
            .scripts
            .iter()
            .map(|x| (x.module, x.name.as_str(), x.record.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("boothooks", "part-001", "boothooks+user+001"),
                ("boothooks", "part-003", "boothooks+vendor+003"),
                ("scripts_vendor", "part-001", "scripts+vendor+part-001"),
            ]
        );
        assert_eq!(s.scripts[1].from, "vendor-data part 2");
        assert_eq!(s.not_run.len(), 1);
        assert!(
            s.not_run[0]
                .starts_with("vendor-data part 1: a text/x-shellscript-per-boot part is not run"),
            "{:?}",
            s.not_run
        );
        // vendor_data: {enabled: false} in the user-data: no vendor script at all.
        let off = mime(&[(
            "Content-Type: text/cloud-config",
            "#cloud-config\nvendor_data: {enabled: false}",
        )]);
        let s = planned(&off, Some(&vendor));
        assert!(s.scripts.is_empty() && s.not_run.is_empty(), "{s:?}");
    }

    #[test]
    fn a_module_fails_when_one_of_its_scripts_fails_and_says_which() {
        let s = planned(
            &mime(&[
                ("Content-Type: text/x-shellscript", "#!/bin/sh\necho a"),
                ("Content-Type: text/x-shellscript", "#!/bin/sh\necho b"),
            ]),
            None,
        );
        let [a, b] = [&s.scripts[0], &s.scripts[1]];
        let failed = Turn::Failed("part-002: exited with status 1".into());
        let ran = Turn::Ran;
        let done = Turn::AlreadyRan("ran: user-data part 0".into());
        type Turns<'t> = Vec<(&'t Script, Option<&'t Turn>)>;
        let cases: Vec<(Turns, &str)> = vec![
            (vec![], "skipped"),
            (vec![(a, Some(&ran)), (b, Some(&failed))], "failed"),
            (vec![(a, Some(&ran)), (b, None)], "interrupted"),
            (vec![(a, Some(&done)), (b, Some(&ran))], "ran"),
            (vec![(a, Some(&done)), (b, Some(&done))], "skipped"),
        ];
        for (turns, want) in cases {
            let got = outcome("scripts_user", &turns);
            let kind = match &got {
                ModuleOutcome::Ran { .. } => "ran",
                ModuleOutcome::Skipped { .. } => "skipped",
                ModuleOutcome::Failed { .. } => "failed",
                ModuleOutcome::Interrupted => "interrupted",
            };
            assert_eq!(kind, want, "{got:?}");
        }
        let got = outcome("scripts_user", &[(a, Some(&ran)), (b, Some(&failed))]);
        assert_eq!(
            got,
            ModuleOutcome::Failed {
                why: "1 of 2 scripts failed: part-002: exited with status 1".into()
            }
        );
        assert_eq!(
            outcome("scripts_user", &[(a, Some(&done))]),
            ModuleOutcome::Skipped {
                why: "already ran (part-001: ran: user-data part 0)".into()
            }
        );
    }
}
