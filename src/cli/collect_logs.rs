//! `vmcust collect-logs`: everything needed to diagnose a customization, in one tar.gz
//! to attach to a ticket, with secrets redacted.
//!
//! Collected (each under `vmcust-logs/`, the root's paths kept): vmcust's log, the run
//! status and every instance record, the settings file, the network files vmcust wrote,
//! open-vm-tools' deployPkg log, the journal of both units (when `journalctl` exists and
//! the root is `/`), and `vmcust detect`'s report. Never collected: the pending
//! customization and `cust.cfg`, which hold passwords. `MANIFEST.txt` lists what was
//! found and what was not, and why.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _, Result};
use clap::Args;

use crate::root::Root;

/// Write one tar.gz with the logs, status, records and settings, secrets redacted.
#[derive(Debug, Args)]
pub struct CollectLogsArgs {
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
    crate::report::LOG_PATH,
    "/var/log/vmcust.log.1",
    crate::cloud_init::facade::STATUS_PATH,
    crate::settings::SETTINGS_PATH,
    "/var/log/vmware-imc/toolsDeployPkg.log",
    "/etc/cloud/cloud.cfg.d/99-vmcust.cfg",
    crate::hygiene::TEMPLATE_ID_RECORD,
    crate::hygiene::KEY_TYPES_RECORD,
];

/// Words that mark a `key = value` or `key: value` line as holding a secret.
const SECRET_WORDS: &[&str] = &["pass", "secret", "token", "private", "credential"];

/// Replaces the value of every line whose key names a secret with `<redacted>`.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let sep = line.find(['=', ':']);
        let secret = sep.is_some_and(|i| {
            let key = line[..i].to_ascii_lowercase();
            SECRET_WORDS.iter().any(|w| key.contains(w))
        });
        match sep {
            Some(i) if secret => {
                out.push_str(&line[..=i]);
                out.push_str(" <redacted>");
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Runs `vmcust collect-logs`.
pub fn run(args: CollectLogsArgs) -> Result<()> {
    collect_logs(&args.root, &args.tarfile)?;
    println!("wrote {}", args.tarfile.display());
    Ok(())
}

/// Writes the tarball of `root_dir`'s logs to `tarfile` (also `cloud-init collect-logs`).
pub fn collect_logs(root_dir: &Path, tarfile: &Path) -> Result<()> {
    let root =
        Root::new(root_dir).with_context(|| format!("opening root {}", root_dir.display()))?;
    let stage = std::env::temp_dir().join(format!("vmcust-logs.{}", std::process::id()));
    let result = collect(&root, &stage, tarfile);
    let _ = std::fs::remove_dir_all(&stage);
    result
}

fn collect(root: &Root, stage: &Path, tarfile: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    let top = stage.join("vmcust-logs");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&top)
        .with_context(|| format!("creating {}", top.display()))?;
    let mut manifest = String::from("vmcust collect-logs\n");
    let _ = writeln!(manifest, "version: {}", super::VERSION);
    let _ = writeln!(manifest, "root: {}", root.path().display());
    let put = |rel: &str, text: &str| -> Result<()> {
        let dest = top.join(rel.trim_start_matches('/'));
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&dest, redact(text)).with_context(|| format!("writing {}", dest.display()))
    };
    let mut paths: Vec<PathBuf> = FILES.iter().map(PathBuf::from).collect();
    let instances = Path::new(crate::boot::state::INSTANCES_DIR);
    for id in root.list_dir(instances).unwrap_or_default() {
        paths.push(instances.join(id).join("result.json"));
    }
    paths.extend(crate::clean::network_files(root));
    for path in &paths {
        match root.read(path) {
            Ok(Some(bytes)) => {
                put(&path.to_string_lossy(), &String::from_utf8_lossy(&bytes))?;
                let _ = writeln!(manifest, "collected: {}", path.display());
            }
            Ok(None) => {
                let _ = writeln!(manifest, "absent: {}", path.display());
            }
            Err(e) => {
                let _ = writeln!(manifest, "unreadable: {} ({e})", path.display());
            }
        }
    }
    // The journal of this and earlier boots, only for the running system.
    if root.path() == Path::new("/") {
        match Command::new("journalctl")
            .args([
                "--no-pager",
                "-o",
                "short-iso-precise",
                "-u",
                "vmcust-early.service",
                "-u",
                "vmcust-late.service",
            ])
            .output()
        {
            Ok(o) => {
                put("journal.txt", &String::from_utf8_lossy(&o.stdout))?;
                let _ = writeln!(manifest, "collected: journal of both units (journal.txt)");
            }
            Err(e) => {
                let _ = writeln!(manifest, "absent: journal (journalctl: {e})");
            }
        }
    } else {
        let _ = writeln!(
            manifest,
            "absent: journal (the root is not the running system)"
        );
    }
    // detect, from this same binary, exactly as a person would run it.
    let detect = std::env::current_exe()
        .context("finding the vmcust binary to run detect")
        .and_then(|exe| {
            Command::new(exe)
                .arg("detect")
                .arg("--root")
                .arg(root.path())
                .output()
                .context("running vmcust detect")
        });
    match detect {
        Ok(o) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            put("detect.txt", &text)?;
            let _ = writeln!(manifest, "collected: vmcust detect (detect.txt)");
        }
        Err(e) => {
            let _ = writeln!(manifest, "absent: vmcust detect ({e:#})");
        }
    }
    manifest.push_str("never collected: /var/lib/vmcust/pending and cust.cfg (passwords)\n");
    put("MANIFEST.txt", &manifest)?;
    let tar_abs = if tarfile.is_absolute() {
        tarfile.to_path_buf()
    } else {
        std::env::current_dir()
            .context("reading the current directory")?
            .join(tarfile)
    };
    let status = Command::new("tar")
        .arg("-C")
        .arg(stage)
        .arg("-czf")
        .arg(&tar_abs)
        .arg("vmcust-logs")
        .status()
        .context("running tar; install it")?;
    if !status.success() {
        bail!(
            "tar failed writing {}; check the directory is writable",
            tar_abs.display()
        );
    }
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&tar_abs, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("setting the mode of {}", tar_abs.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
