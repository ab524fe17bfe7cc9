//! vmcust answering as `cloud-init`, so open-vm-tools hands it the customization spec.
//!
//! Installed as `/usr/bin/cloud-init` (a symlink to vmcust, only where no real cloud-init
//! exists), the binary answers the two questions tools asks (reference open-vm-tools.md
//! §2.5, §2.9): `cloud-init -v` (must succeed, and give a version ≥ 21.1 for raw data) and
//! `cloud-init status` (tools waits while it says `not run` or `running`). The status is
//! vmcust's own progress, which the run engine records with [`write_status`]; off VMware,
//! where vmcust never runs, it is `disabled` from the start.
//!
//! The environment variable `VMCUST_ROOT` (default `/`) sets the root the persona reads
//! its status and settings from; it exists for tests and image tooling and is read by
//! nothing else.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::root::Root;

/// The status file the run engine keeps, inside the root. Under `/run` so a reboot
/// starts from "not run".
pub const STATUS_PATH: &str = "/run/vmcust/status.json";

/// The cloud-init version the persona claims: ≥ 21.1 so tools hands over raw cloud-init
/// data, and 23.4 because vmcust's `status` follows that release's exit codes.
pub const CLAIMED_CLOUD_INIT_VERSION: &str = "23.4.0";

/// The environment variable naming the root the persona reads (default `/`).
pub const ROOT_ENV: &str = "VMCUST_ROOT";

/// How often `status --wait` looks at the status file.
const WAIT_POLL: Duration = Duration::from_millis(250);

/// Where vmcust is in its work, as `cloud-init status` would put it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// No stage has started this boot.
    NotStarted,
    /// A stage is working (including the wait for cust.cfg), or the late stage is
    /// still to come after the early one.
    Running,
    /// Every stage finished.
    Done,
    /// A stage failed; `last_error` says why.
    Error,
    /// vmcust is switched off for this boot (`[imc] enabled = false`, stepped aside, or
    /// not on VMware).
    Disabled,
}

impl RunState {
    /// The word after `status: `, chosen from those open-vm-tools parses (§2.9).
    /// `not run` rather than cloud-init 24.1's `not started`: every tools release since
    /// 12.1.5 recognises it, while older ones would read `not started` as "unknown" and
    /// stop waiting.
    pub fn word(self) -> &'static str {
        match self {
            RunState::NotStarted => "not run",
            RunState::Running => "running",
            RunState::Done => "done",
            RunState::Error => "error",
            RunState::Disabled => "disabled",
        }
    }
}

/// vmcust's progress as recorded in [`STATUS_PATH`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunStatus {
    /// The overall state.
    pub state: RunState,
    /// The stage or step in hand, a short name such as `early` or `late` (shown by
    /// `status --long`; avoid the words `running`, `done`, `error` in it, which tools
    /// would read).
    #[serde(default)]
    pub stage: Option<String>,
    /// Why the run failed, for `status --long` and the log. Never a secret.
    #[serde(default)]
    pub last_error: Option<String>,
    /// When this was written, seconds since the Unix epoch.
    pub updated: u64,
}

impl RunStatus {
    /// A status stamped with the current time.
    pub fn now(state: RunState, stage: Option<&str>, last_error: Option<String>) -> RunStatus {
        RunStatus {
            state,
            stage: stage.map(str::to_string),
            last_error,
            updated: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        }
    }
}

/// Records `status` in the root's [`STATUS_PATH`] atomically, so `cloud-init status`
/// never reads half a file.
pub fn write_status(root: &Root, status: &RunStatus) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut json = serde_json::to_vec_pretty(status).context("encoding the run status")?;
    json.push(b'\n');
    root.write_file(Path::new(STATUS_PATH), &json, 0o644)
        .with_context(|| format!("writing {STATUS_PATH}"))
}

/// Reads the root's [`STATUS_PATH`]; `Ok(None)` when no stage has written it yet.
pub fn read_status(root: &Root) -> anyhow::Result<Option<RunStatus>> {
    use anyhow::Context;
    let Some(bytes) = root
        .read(Path::new(STATUS_PATH))
        .with_context(|| format!("reading {STATUS_PATH}"))?
    else {
        return Ok(None);
    };
    let status = serde_json::from_slice(&bytes).with_context(|| {
        format!("{STATUS_PATH} is not a vmcust run status; remove it and rerun `vmcust run`")
    })?;
    Ok(Some(status))
}

/// Whether this process was started under the name `cloud-init`.
pub fn invoked_as_cloud_init() -> bool {
    std::env::args_os().next().is_some_and(|argv0| {
        Path::new(&argv0)
            .file_name()
            .is_some_and(|n| n == "cloud-init")
    })
}

/// The `cloud-init -v` line. The first digit in it must be the major version, because
/// tools reads the version from the first digit of the text (§2.9), so it names the
/// fixed path tools runs, never `argv[0]` (which could contain digits).
pub fn version_line() -> String {
    format!(
        "/usr/bin/cloud-init {CLAIMED_CLOUD_INIT_VERSION} (vmcust {} standing in for cloud-init)",
        env!("CARGO_PKG_VERSION")
    )
}

/// Runs the persona with the process's arguments and returns its exit status.
pub fn main() -> ExitCode {
    // Keeps the marker bytes in the binary so `coexist` can recognise a copy of vmcust
    // installed as /usr/bin/cloud-init.
    std::hint::black_box(crate::coexist::PERSONA_MARKER);
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let root_dir = std::env::var_os(ROOT_ENV).unwrap_or_else(|| OsString::from("/"));
    let code = run(
        &args,
        Path::new(&root_dir),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    ExitCode::from(code)
}

/// The persona's logic, with its streams and root given (for tests).
pub fn run(args: &[OsString], root_dir: &Path, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let first = args.first().map(String::as_str);
    match first {
        Some("-v" | "--version") => {
            let _ = writeln!(out, "{}", version_line());
            0
        }
        Some("status") => status(&args[1..], root_dir, out, err),
        Some("-h" | "--help") => {
            let _ = writeln!(out, "{}", usage());
            0
        }
        Some(other) => {
            let _ = writeln!(
                err,
                "cloud-init {other}: not available; this is vmcust {} standing in for \
                 cloud-init, which answers only `cloud-init --version` and `cloud-init status \
                 [--wait] [--long]` for open-vm-tools; use `vmcust --help`",
                env!("CARGO_PKG_VERSION")
            );
            1
        }
        None => {
            let _ = writeln!(err, "{}", usage());
            1
        }
    }
}

fn usage() -> String {
    format!(
        "usage: cloud-init [-v | --version] | status [--wait] [--long]\n\
         vmcust {} standing in for cloud-init so open-vm-tools hands it the VMware \
         customization; see `vmcust --help`",
        env!("CARGO_PKG_VERSION")
    )
}

fn status(args: &[String], root_dir: &Path, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut wait = false;
    let mut long = false;
    for arg in args {
        match arg.as_str() {
            "-w" | "--wait" => wait = true,
            "-l" | "--long" => long = true,
            other => {
                // argparse's usage-error code, so tools never mistakes it for an error state (1).
                let _ = writeln!(
                    err,
                    "cloud-init status: unknown option {other}; vmcust's cloud-init accepts \
                     --wait and --long"
                );
                return 2;
            }
        }
    }
    let root = match Root::new(root_dir) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(out, "status: error");
            let _ = writeln!(
                err,
                "cannot open root {} ({e}); check {ROOT_ENV}",
                root_dir.display()
            );
            return 1;
        }
    };
    let deadline = Instant::now() + wait_limit(&root);
    // Off VMware vmcust never runs (its units are conditioned on VMware), so no stage
    // will ever write a status: say `disabled` at once, as cloud-init does where it is
    // switched off, instead of `not run` (which `status --wait` would wait out).
    let off_vmware = !crate::host::platform::Platform::detect(root_dir).is_vmware();
    let current = loop {
        let current = match read_status(&root) {
            Ok(None) if off_vmware => Ok(Some(RunStatus {
                state: RunState::Disabled,
                stage: None,
                last_error: None,
                updated: 0,
            })),
            other => other,
        };
        let busy = matches!(
            &current,
            Ok(None)
                | Ok(Some(RunStatus {
                    state: RunState::NotStarted | RunState::Running,
                    ..
                }))
        );
        if !wait || !busy || Instant::now() >= deadline {
            break current;
        }
        std::thread::sleep(WAIT_POLL);
    };
    let status = match current {
        Ok(s) => s.unwrap_or(RunStatus {
            state: RunState::NotStarted,
            stage: None,
            last_error: None,
            updated: 0,
        }),
        Err(e) => {
            // Unreadable progress is reported as an error (exit 1): tools then stops
            // waiting instead of waiting for a state that will never change.
            let _ = writeln!(out, "status: error");
            let _ = writeln!(err, "{e:#}");
            return 1;
        }
    };
    let _ = writeln!(out, "status: {}", status.state.word());
    if long {
        if let Some(stage) = &status.stage {
            let _ = writeln!(out, "stage: {stage}");
        }
        if status.updated > 0 {
            let _ = writeln!(out, "last_update: {} (unix time)", status.updated);
        }
        let _ = writeln!(
            out,
            "detail: vmcust {} standing in for cloud-init",
            env!("CARGO_PKG_VERSION")
        );
        // Only an error state prints its reason: a stale message next to another state
        // would put the word "error" in text that tools searches.
        if status.state == RunState::Error {
            if let Some(e) = &status.last_error {
                let _ = writeln!(out, "errors: {e}");
            }
        }
    }
    if status.state == RunState::Error {
        1
    } else {
        0
    }
}

/// How long `status --wait` waits at most: both stages' worst case by the settings (the
/// wait for cust.cfg, a pre- and a post-customization script) plus a margin. cloud-init
/// waits forever; a bound keeps a forgotten unit from hanging its caller.
pub fn wait_limit(root: &Root) -> Duration {
    let (settings, _) = crate::settings::load(root);
    settings.max_wait + settings.script_timeout * 2 + Duration::from_secs(300)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tools' version reader (§2.9): from the first digit, `<major>[-.]<minor>`.
    fn tools_version(text: &str) -> Option<(u32, u32)> {
        let start = text.find(|c: char| c.is_ascii_digit())?;
        let rest = &text[start..];
        let major_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major = rest[..major_end].parse().ok()?;
        let rest = rest[major_end..].strip_prefix(['-', '.'])?;
        let minor_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        Some((major, rest[..minor_end].parse().ok()?))
    }

    #[test]
    fn tools_reads_the_version_as_at_least_21_1() {
        let line = version_line();
        let (major, minor) = tools_version(&line).unwrap();
        assert_eq!((major, minor), (23, 4), "{line}");
        assert!((major, minor) >= (21, 1));
        // The pitfall: a digit before the version would be taken as the major version.
        let first_digit = line.find(|c: char| c.is_ascii_digit()).unwrap();
        assert!(
            line[first_digit..].starts_with(CLAIMED_CLOUD_INIT_VERSION),
            "{line}"
        );
        assert_eq!(
            tools_version("/usr/lib/python3.11/cloud-init 23.4"),
            Some((3, 11))
        );
    }

    fn run_status(dir: &Path, args: &[&str]) -> (u8, String) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, dir, &mut out, &mut err);
        (code, String::from_utf8(out).unwrap())
    }

    // How tools reads each status word and exit code is tested on the real binary
    // started as `cloud-init`, in tests/boot_persona.rs.

    #[test]
    fn a_corrupt_status_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        root.write_file(Path::new(STATUS_PATH), b"{", 0o644)
            .unwrap();
        let (code, text) = run_status(dir.path(), &["status"]);
        assert_eq!((code, text.as_str()), (1, "status: error\n"));
    }

    #[test]
    fn other_commands_say_what_this_is() {
        let dir = tempfile::tempdir().unwrap();
        let args = [OsString::from("init"), OsString::from("--local")];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(run(&args, dir.path(), &mut out, &mut err), 1);
        let msg = String::from_utf8(err).unwrap();
        assert!(
            msg.contains("vmcust") && msg.contains("standing in for cloud-init"),
            "{msg}"
        );
        let (code, _) = run_status(dir.path(), &["status", "--format", "json"]);
        assert_eq!(code, 2);
    }
}
