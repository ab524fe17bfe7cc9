//! `vmcust collect-logs`: everything needed to diagnose a customization, in one tar.gz
//! to attach to a ticket, with secrets redacted.
//!
//! Collected (each under `vmcust-logs/`, the root's paths kept): vmcust's log, the run
//! status, every instance's records (`result.json`, `applied.json`), the boot times, the
//! settings file, the network files vmcust wrote, open-vm-tools' own logs
//! (`/var/log/vmware-*.log`, `vmware-imc/toolsDeployPkg.log`), and the output of
//! `vmcust status`, `query`, `analyze show` and `detect`; on the running system also the
//! journal of every vmcust unit and the kernel log. Never collected: the pending
//! customization and `cust.cfg`, which hold passwords; a file that is a symbolic link,
//! or that another user may have planted. `MANIFEST.txt` lists what was found and what
//! was not, and why.
//!
//! Nothing is staged on disk: the files are read (bounded) into memory and the tar.gz is
//! written to a temporary file created `O_EXCL` with mode 0600 in the tarball's own
//! directory, then renamed over the name asked for. A symlink planted at that name is
//! replaced, never written through, and no other user can read a byte of it meanwhile.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::Args;

use crate::root::Root;

/// Write one tar.gz with the logs, status, records and settings, secrets redacted.
#[derive(Debug, Args)]
pub(crate) struct CollectLogsArgs {
    /// Root directory of the system.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// The tarball to write.
    #[arg(
        long,
        short = 't',
        value_name = "FILE",
        default_value = "vmcust-logs.tar.gz"
    )]
    pub tarfile: PathBuf,
}

/// Files taken as they are (after redaction), when present.
const FILES: &[&str] = &[
    crate::state::LOG_PATH,
    crate::state::OLD_LOG_PATH,
    crate::state::STATUS_PATH,
    crate::state::SETTINGS_PATH,
    crate::state::BOOT_TIMES,
    "/var/log/vmware-imc/toolsDeployPkg.log",
    "/etc/cloud/cloud.cfg.d/99-vmcust.cfg",
    crate::state::TEMPLATE_ID_RECORD,
    crate::state::KEY_TYPES_RECORD,
];

/// Words that mark a `key = value` or `key: value` line as holding a secret.
const SECRET_WORDS: &[&str] = &["pass", "secret", "token", "private", "credential"];

/// Replaces what follows the first `=` or `:` after a secret word, on every line that has
/// one, with `<redacted>`. The word is looked for anywhere in the line, not only at its
/// start, because journal and log lines begin with a time (`10:42:07 … password = …`)
/// whose own `:` would otherwise be taken for the key's end. Redacting too much is safe;
/// too little is not.
pub(super) fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let lower = line.to_ascii_lowercase();
        let sep = SECRET_WORDS
            .iter()
            .filter_map(|w| lower.find(w).map(|at| at + w.len()))
            .min()
            .and_then(|after| line[after..].find(['=', ':']).map(|i| after + i));
        match sep {
            Some(i) => {
                out.push_str(&line[..=i]);
                out.push_str(" <redacted>");
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Largest part of one file collected (the log rotates at 8 MiB; tools' logs do not).
pub(super) const MAX_FILE: u64 = 16 * 1024 * 1024;
/// Largest output kept from one command (a journal of many boots).
pub(super) const MAX_OUTPUT: usize = 16 * 1024 * 1024;
/// How long one command may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// The units whose journal is collected.
const UNITS: &[&str] = &[
    "vmcust-early.service",
    "vmcust-late.service",
    "vmcust-imc.service",
    "vmcust-imc.path",
];

/// Runs `vmcust collect-logs`.
pub(super) fn run(args: CollectLogsArgs) -> Result<()> {
    collect_logs(&args.root, &args.tarfile)?;
    println!("wrote {}", args.tarfile.display());
    Ok(())
}

/// Writes the tarball of `root_dir`'s logs to `tarfile` (also `cloud-init collect-logs`).
pub(crate) fn collect_logs(root_dir: &Path, tarfile: &Path) -> Result<()> {
    let root =
        Root::new(root_dir).with_context(|| format!("opening root {}", root_dir.display()))?;
    let entries = collect(&root);
    write_tarball(tarfile, &entries)
}

/// The tarball's members: a path under `vmcust-logs/` and its (redacted) text.
type Entries = Vec<(String, String)>;

fn collect(root: &Root) -> Entries {
    let mut entries: Entries = Vec::new();
    let mut manifest = String::from("vmcust collect-logs\n");
    let _ = writeln!(manifest, "version: {}", super::VERSION);
    let _ = writeln!(manifest, "root: {}", root.path().display());
    // vmcust's own views hold no secret by construction (a password shows as `set`) and
    // are taken as they are: redacting `"root_password": "set"` would only break the JSON.
    let mut put = |name: &str, text: &str, ours: bool| {
        let text = if ours { text.to_string() } else { redact(text) };
        entries.push((name.trim_start_matches('/').to_string(), text));
    };
    let mut paths: Vec<PathBuf> = FILES.iter().map(PathBuf::from).collect();
    for name in root.list_dir(Path::new("/var/log")).unwrap_or_default() {
        if name.starts_with("vmware-") && name.ends_with(".log") {
            paths.push(Path::new("/var/log").join(name));
        }
    }
    let instances = Path::new(crate::state::INSTANCES_DIR);
    for id in root.list_dir(instances).unwrap_or_default() {
        paths.push(instances.join(&id).join(crate::state::RESULT_JSON));
        paths.push(instances.join(&id).join(crate::state::APPLIED_JSON));
    }
    paths.extend(crate::clean::network_files(root));
    let records = |path: &Path| path.starts_with(instances);
    for path in &paths {
        match read_capped(root, path) {
            Ok(Collected::Skipped(why)) => {
                let _ = writeln!(manifest, "skipped: {} ({why})", path.display());
            }
            Ok(Collected::Read(bytes, cut)) => {
                // vmcust's own records (result.json, applied.json) hold no secret by
                // construction and must stay valid JSON.
                put(
                    &path.to_string_lossy(),
                    &String::from_utf8_lossy(&bytes),
                    records(path),
                );
                let _ = match cut {
                    false => writeln!(manifest, "collected: {}", path.display()),
                    true => writeln!(
                        manifest,
                        "collected: {} (its first {MAX_FILE} bytes)",
                        path.display()
                    ),
                };
            }
            Ok(Collected::Absent) => {
                let _ = writeln!(manifest, "absent: {}", path.display());
            }
            Err(e) => {
                let _ = writeln!(manifest, "unreadable: {} ({e})", path.display());
            }
        }
    }
    // vmcust's own views, from this same code.
    let views: [(&str, &str, Result<String>); 4] = [
        (
            "status.txt",
            "vmcust status",
            super::status::report(root, super::Format::Text, false).map(|(t, _)| t),
        ),
        (
            "query.txt",
            "vmcust query",
            super::query::report(root, None, super::Format::Text),
        ),
        (
            "query.json",
            "vmcust query --format json",
            super::query::report(root, None, super::Format::Json),
        ),
        (
            "analyze.txt",
            "vmcust analyze show",
            crate::timings::read(root).and_then(|t| super::analyze::show(&t, super::Format::Text)),
        ),
    ];
    for (name, what, out) in views {
        match out {
            Ok(text) => {
                put(name, &text, true);
                let _ = writeln!(manifest, "collected: {what} ({name})");
            }
            Err(e) => {
                let _ = writeln!(manifest, "failed: {what} ({e:#})");
            }
        }
    }
    // The journal and the kernel log of this and earlier boots, only for the running
    // system: another root's journal is not this machine's.
    if root.path() == Path::new("/") {
        let mut journal = vec!["--no-pager", "-o", "short-iso-precise"];
        for unit in UNITS {
            journal.extend(["-u", unit]);
        }
        let kernel = ["--no-pager", "-o", "short-iso-precise", "-k", "-b"];
        for (name, what, args) in [
            ("journal.txt", "journal of the vmcust units", &journal[..]),
            ("kernel.txt", "kernel log of this boot", &kernel[..]),
        ] {
            // Without a journal (no systemd-journald), the kernel log is still in dmesg.
            let got = command("journalctl", args).or_else(|e| match name {
                "kernel.txt" => command("dmesg", &[]).map_err(|d| e.context(format!("{d:#}"))),
                _ => Err(e),
            });
            let _ = match got {
                Ok(text) => {
                    put(name, &text, false);
                    writeln!(manifest, "collected: {what} ({name})")
                }
                Err(e) => writeln!(manifest, "absent: {what} ({e:#})"),
            };
        }
    } else {
        let _ = writeln!(
            manifest,
            "absent: journal and kernel log (the root is not the running system)"
        );
    }
    // detect, from this same binary, exactly as a person would run it.
    let detect = std::env::current_exe()
        .context("finding the vmcust binary to run detect")
        .and_then(|exe| {
            let root_arg = root.path().to_string_lossy().into_owned();
            command(&exe.to_string_lossy(), &["detect", "--root", &root_arg])
        });
    let _ = match detect {
        Ok(text) => {
            put("detect.txt", &text, false);
            writeln!(manifest, "collected: vmcust detect (detect.txt)")
        }
        Err(e) => writeln!(manifest, "absent: vmcust detect ({e:#})"),
    };
    manifest.push_str("never collected: /var/lib/vmcust/pending and cust.cfg (passwords)\n");
    put("MANIFEST.txt", &manifest, false);
    entries
}

/// What [`read_capped`] found at a path.
enum Collected {
    /// The first [`MAX_FILE`] bytes, and whether the file was longer.
    Read(Vec<u8>, bool),
    /// Nothing there.
    Absent,
    /// Something not taken, and why: a symbolic link (its target may be any file of
    /// root's, such as `/etc/shadow`, planted under a name that is collected), or a file
    /// another user may have planted.
    Skipped(String),
}

/// The first [`MAX_FILE`] bytes of `path` in the root. Symlinks in the directories on
/// the way resolve inside the root; the file itself is opened without following a link
/// (`/var/log/vmware-x.log -> /etc/shadow` is skipped, not read). A file not owned by
/// root in a directory that group or others may write is skipped too: anyone who may
/// write there could have put it there.
fn read_capped(root: &Root, path: &Path) -> std::io::Result<Collected> {
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let real = root.resolve(path, false)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&real);
    let file = match file {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Collected::Absent),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Ok(Collected::Skipped(
                "a symbolic link: not followed".to_string(),
            ))
        }
        other => other?,
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.uid() != 0 {
        let dir = real.parent().map(std::fs::metadata).transpose()?;
        if let Some(mode) = dir.map(|d| d.mode()).filter(|m| m & 0o022 != 0) {
            return Ok(Collected::Skipped(format!(
                "owned by uid {}, not root, in a directory of mode {:o} that others may \
                 write: it may have been planted",
                meta.uid(),
                mode & 0o7777
            )));
        }
    }
    let read = vmcust_imc::read_at_most(file, MAX_FILE, meta.len())?;
    Ok(Collected::Read(read.bytes, read.cut))
}

/// Runs `program args` through [`crate::process`] (cleared environment, timeout) and
/// returns its standard output and error; a failure to start or a non-zero exit is an
/// error that says so, with the start of what it printed.
fn command(program: &str, args: &[&str]) -> Result<String> {
    let cmd = crate::process::Cmd::new(program, args, COMMAND_TIMEOUT);
    let never = AtomicBool::new(false);
    let done = crate::process::run(&cmd, crate::process::Output::Bytes(MAX_OUTPUT), &never)
        .with_context(|| format!("running {program}"))?;
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&done.stdout),
        String::from_utf8_lossy(&done.stderr)
    );
    if !done.success() {
        let first = out.lines().next().unwrap_or_default();
        anyhow::bail!("{program} ended with {}: {first}", done.ended);
    }
    Ok(out)
}

/// Writes `entries` as `vmcust-logs/…` into the tar.gz `tarfile`: a fresh 0600 file in
/// its directory, renamed over `tarfile` once complete.
fn write_tarball(tarfile: &Path, entries: &Entries) -> Result<()> {
    let target = std::path::absolute(tarfile)
        .with_context(|| format!("finding where {} is", tarfile.display()))?;
    let (Some(dir), Some(_)) = (target.parent(), target.file_name()) else {
        return Err(crate::failure::Failure::usage(format!(
            "--tarfile {} names no file; give a file name such as vmcust-logs.tar.gz",
            tarfile.display()
        ))
        .into());
    };
    // `tempfile` creates the file with O_CREAT|O_EXCL and mode 0600 under a random name.
    let mut tmp = tempfile::Builder::new()
        .prefix(".vmcust-logs.")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| {
            format!(
                "writing {}: cannot create a file in {}; check that the directory exists \
                 and is writable",
                target.display(),
                dir.display()
            )
        })?;
    let mtime = crate::state::now();
    let gz = flate2::write::GzEncoder::new(tmp.as_file_mut(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut dir_header = tar::Header::new_gnu();
    dir_header.set_entry_type(tar::EntryType::Directory);
    dir_header.set_mode(0o700);
    dir_header.set_mtime(mtime);
    dir_header.set_size(0);
    let write_err =
        |e: std::io::Error| anyhow::Error::new(e).context(format!("writing {}", target.display()));
    tar.append_data(&mut dir_header, "vmcust-logs/", std::io::empty())
        .map_err(write_err)?;
    for (name, text) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(0o600);
        header.set_mtime(mtime);
        header.set_size(text.len() as u64);
        tar.append_data(&mut header, format!("vmcust-logs/{name}"), text.as_bytes())
            .map_err(write_err)?;
    }
    let gz = tar.into_inner().map_err(write_err)?;
    let file = gz.finish().map_err(write_err)?;
    file.flush().map_err(write_err)?;
    file.sync_all().map_err(write_err)?;
    // rename(2) replaces whatever is at the name (a planted symlink included) without
    // following it.
    tmp.persist(&target).map_err(|e| write_err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_run_with_a_cleared_environment_and_say_how_they_failed() {
        // HOME is set for the tests and must not reach the command.
        assert!(std::env::var_os("HOME").is_some());
        let out = command("sh", &["-c", "echo out; echo err >&2; echo ${HOME:-clean}"]).unwrap();
        assert_eq!(out, "out\nclean\nerr\n");
        let e = command("sh", &["-c", "echo first problem >&2; exit 3"]).unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            "sh ended with exit status 3: first problem"
        );
        let e = command("/nonexistent/journalctl", &[]).unwrap_err();
        assert!(
            format!("{e:#}").starts_with("running /nonexistent/journalctl: "),
            "{e:#}"
        );
    }

    #[test]
    fn secrets_are_redacted_after_a_timestamp_too() {
        for (line, want) in [
            (
                "Dec 01 10:42:07 vm vmcust[12]: root_password: hunter2\n",
                "Dec 01 10:42:07 vm vmcust[12]: root_password: <redacted>\n",
            ),
            (
                "2026-12-01T10:42:07Z [deployPkg] -PASS = c2VjcmV0\n",
                "2026-12-01T10:42:07Z [deployPkg] -PASS = <redacted>\n",
            ),
            (
                "[  1.234] kernel: password=x",
                "[  1.234] kernel: password= <redacted>",
            ),
            // A secret word with no separator after it is left alone.
            ("10:42:07 the check passed\n", "10:42:07 the check passed\n"),
            ("10:42:07 nothing here\n", "10:42:07 nothing here\n"),
        ] {
            assert_eq!(redact(line), want, "{line:?}");
        }
    }

    #[test]
    fn secrets_are_redacted() {
        let text = "[PASSWORD]\n-PASS = c2VjcmV0\nhostname: web01\nroot_password: hunter2\n\
                    Token=abc\nplain line\n";
        let got = redact(text);
        assert_eq!(
            got,
            "[PASSWORD]\n-PASS = <redacted>\nhostname: web01\nroot_password: <redacted>\n\
             Token= <redacted>\nplain line\n"
        );
    }
}
