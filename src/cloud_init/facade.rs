//! vmcust answering as `cloud-init`, so open-vm-tools hands it the customization spec.
//!
//! Installed as `/usr/bin/cloud-init` (a symlink to vmcust, only where no real cloud-init
//! exists), the binary answers the two questions tools asks (reference open-vm-tools.md
//! §2.5, §2.9): `cloud-init -v` (must succeed, and give a version ≥ 21.1 for raw data) and
//! `cloud-init status` (tools waits while it says `not run` or `running`). The status is
//! vmcust's own progress, which the run engine records with [`write_status`]; off VMware,
//! where vmcust never runs, it is `disabled` from the start. It also answers what
//! template builds and scripts ask: `status --format json` and `clean` (mapped onto
//! [`crate::clean`]).
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
    std::hint::black_box(crate::cloud_init::coexist::PERSONA_MARKER);
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
        Some("clean") => clean(&args[1..], root_dir, out, err),
        Some("collect-logs") => collect_logs(&args[1..], root_dir, out, err),
        Some("-h" | "--help") => {
            let _ = writeln!(out, "{}", usage());
            0
        }
        Some(other) => {
            let _ = writeln!(
                err,
                "cloud-init {other}: not available; this is vmcust {} standing in for \
                 cloud-init, which answers only `cloud-init --version`, `cloud-init status [--wait] \
                 [--long] [--format json]`, `cloud-init clean` and `cloud-init collect-logs`; \
                 use `vmcust --help`",
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

/// A usage error of `cloud-init COMMAND`: the problem on stderr and argparse's exit code 2,
/// so that open-vm-tools never mistakes it for cloud-init's error state (1).
fn usage_error(err: &mut dyn Write, command: &str, problem: &str) -> u8 {
    let _ = writeln!(err, "cloud-init {command}: {problem}");
    2
}

/// [`usage_error`] for an option the stand-in does not take, with those it does.
fn unknown_option(err: &mut dyn Write, command: &str, option: &str, accepted: &str) -> u8 {
    let problem = format!("unknown option {option}; vmcust's cloud-init accepts {accepted}");
    usage_error(err, command, &problem)
}

fn usage() -> String {
    format!(
        "usage: cloud-init [-v | --version]\n\
         \x20      cloud-init status [-w | --wait] [-l | --long] [--format tabular|json|yaml]\n\
         \x20      cloud-init clean [-l | --logs] [-s | --seed] [--machine-id] [-c | --configs all|network|ssh_config] [-r | --reboot]\n\
         \x20      cloud-init collect-logs [-t | --tarfile FILE]\n\
         vmcust {} standing in for cloud-init so open-vm-tools hands it the VMware \
         customization; see `vmcust --help`",
        env!("CARGO_PKG_VERSION")
    )
}

fn status(args: &[String], root_dir: &Path, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut wait = false;
    let mut long = false;
    let mut json = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        match name {
            "-w" | "--wait" => wait = true,
            "-l" | "--long" => long = true,
            "--format" => match inline.or_else(|| rest.next().cloned()).as_deref() {
                // cloud-init's YAML output of this document is the same JSON text.
                Some("json" | "yaml") => json = true,
                Some("tabular") => json = false,
                other => {
                    let got = other.unwrap_or("nothing");
                    let problem = format!("--format takes json, yaml or tabular, not {got}");
                    return usage_error(err, "status", &problem);
                }
            },
            other => {
                let accepted = "--wait, --long and --format";
                return unknown_option(err, "status", other, accepted);
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
    let current = wait_for_status(&root, wait);
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
    let recoverable: Vec<String> = crate::settings::load(&root)
        .1
        .iter()
        .map(ToString::to_string)
        .collect();
    let code = exit_code(status.state, !recoverable.is_empty());
    if json {
        let doc = serde_json::json!({
            "status": status.state.word(),
            "extended_status": status.state.word(),
            "datasource": "vmware",
            "stage": status.stage,
            "detail": format!("vmcust {} standing in for cloud-init", env!("CARGO_PKG_VERSION")),
            "last_update": (status.updated > 0).then(|| rfc3339(status.updated)),
            "errors": status
                .last_error
                .iter()
                .filter(|_| status.state == RunState::Error)
                .collect::<Vec<_>>(),
            "recoverable_errors": if recoverable.is_empty() {
                serde_json::json!({})
            } else {
                serde_json::json!({ "WARNING": recoverable })
            },
        });
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
        return code;
    }
    let _ = writeln!(out, "status: {}", status.state.word());
    if long {
        if let Some(stage) = &status.stage {
            let _ = writeln!(out, "stage: {stage}");
        }
        if status.updated > 0 {
            let _ = writeln!(out, "last_update: {}", rfc3339(status.updated));
        }
        for w in &recoverable {
            let _ = writeln!(out, "recoverable error: {w}");
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
    code
}

/// cloud-init 23.4's exit codes: 1 for an error, 2 for a finished run with recoverable
/// errors (settings problems), else 0. Never 2 while busy: tools before 13.0.10 stop
/// waiting on any exit code but 0 (reference open-vm-tools.md §2.9).
pub fn exit_code(state: RunState, recoverable: bool) -> u8 {
    match state {
        RunState::Error => 1,
        RunState::Done | RunState::Disabled if recoverable => 2,
        _ => 0,
    }
}

/// Reads the run status; with `wait`, until no stage is starting or running (bounded by
/// [`wait_limit`]). A missing status counts as "not started".
pub fn wait_for_status(root: &Root, wait: bool) -> anyhow::Result<Option<RunStatus>> {
    let deadline = Instant::now() + wait_limit(root);
    // Off VMware vmcust never runs (its units are conditioned on VMware), so no stage will
    // ever write a status: `disabled` at once, as cloud-init says where it is switched off,
    // instead of `not run` (which `status --wait` would wait out).
    let off_vmware = !crate::host::platform::Platform::detect(root.path()).is_vmware();
    loop {
        let current = match read_status(root) {
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
            return current;
        }
        std::thread::sleep(WAIT_POLL);
    }
}

/// Seconds since the epoch as an RFC 3339 UTC time, `2026-05-01T12:00:00Z`.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil, valid for every u64 second count we will meet.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// `cloud-init collect-logs [-t/--tarfile FILE]`, mapped onto `vmcust collect-logs`
/// (default `cloud-init.tar.gz`, as cloud-init's). `-u/--include-userdata` is accepted
/// and changes nothing: user-data may hold secrets and is never collected.
fn collect_logs(args: &[String], root_dir: &Path, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut tarfile = String::from("cloud-init.tar.gz");
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        match name {
            "-t" | "--tarfile" => match inline.or_else(|| rest.next().cloned()) {
                Some(t) => tarfile = t,
                None => {
                    return usage_error(err, "collect-logs", "--tarfile needs a file name");
                }
            },
            "-u" | "--include-userdata" | "-v" | "--verbose" => {}
            other => {
                return unknown_option(err, "collect-logs", other, "--tarfile");
            }
        }
    }
    match crate::cli::collect_logs(root_dir, Path::new(&tarfile)) {
        Ok(()) => {
            let _ = writeln!(out, "wrote {tarfile}");
            0
        }
        Err(e) => {
            let _ = writeln!(err, "cloud-init collect-logs: error: {e:#}");
            1
        }
    }
}

/// `cloud-init clean`, mapped onto `vmcust clean`: the state always (cloud-init always
/// removes /var/lib/cloud), `--logs`, `--machine-id`, `--seed` (part of vmcust's state),
/// `--configs network|all` (the network files vmcust wrote; `ssh_config` has nothing to
/// remove, vmcust writes no sshd configuration) and `--reboot` (honoured on `/` only).
fn clean(args: &[String], root_dir: &Path, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut opts = crate::clean::CleanOptions {
        state: true,
        ..Default::default()
    };
    let mut reboot = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        match name {
            "-l" | "--logs" => opts.logs = true,
            "-s" | "--seed" => {}
            "--machine-id" => opts.machine_id = true,
            "-r" | "--reboot" => reboot = true,
            "-c" | "--configs" => match inline.or_else(|| rest.next().cloned()).as_deref() {
                Some("all" | "network") => opts.network_configs = true,
                Some("ssh_config") => {}
                other => {
                    let got = other.unwrap_or("nothing");
                    let problem = format!("--configs takes all, network or ssh_config, not {got}");
                    return usage_error(err, "clean", &problem);
                }
            },
            other => {
                let accepted = "--logs, --seed, --machine-id, --configs and --reboot";
                return unknown_option(err, "clean", other, accepted);
            }
        }
    }
    let done = Root::new(root_dir)
        .map_err(anyhow::Error::from)
        .and_then(|root| crate::clean::clean(&root, &opts));
    match done {
        Ok(done) => {
            let _ = write!(out, "{}", crate::cli::clean_report(&done, false));
        }
        Err(e) => {
            let _ = writeln!(err, "cloud-init clean: error: {e:#}");
            return 1;
        }
    }
    if reboot {
        if root_dir != Path::new("/") {
            let _ = writeln!(
                err,
                "cloud-init clean: not rebooting: {ROOT_ENV} names {}, not the running system",
                root_dir.display()
            );
        } else if let Err(e) = std::process::Command::new("systemctl")
            .arg("reboot")
            .status()
        {
            let _ = writeln!(err, "cloud-init clean: cannot run systemctl reboot: {e}");
            return 1;
        }
    }
    0
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
        let (code, _) = run_status(dir.path(), &["status", "--format", "xml"]);
        assert_eq!(code, 2);
    }

    /// Usage errors exit 2 as argparse's do (tools reads 1 as cloud-init's error state)
    /// and say which command and what is wrong; nothing is changed.
    #[test]
    fn usage_errors_exit_2_and_name_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let cases: &[(&[&str], &str)] = &[
            (
                &["status", "--bogus"],
                "cloud-init status: unknown option --bogus; vmcust's cloud-init accepts --wait",
            ),
            (
                &["status", "--format", "xml"],
                "cloud-init status: --format takes json, yaml or tabular, not xml",
            ),
            (
                &["status", "--format"],
                "cloud-init status: --format takes json, yaml or tabular, not nothing",
            ),
            (
                &["clean", "--configs=foo"],
                "cloud-init clean: --configs takes all, network or ssh_config, not foo",
            ),
            (
                &["clean", "-x"],
                "cloud-init clean: unknown option -x; vmcust's cloud-init accepts --logs",
            ),
            (
                &["collect-logs", "--tarfile"],
                "cloud-init collect-logs: --tarfile needs a file name",
            ),
            (
                &["collect-logs", "-z"],
                "cloud-init collect-logs: unknown option -z; vmcust's cloud-init accepts --tarfile",
            ),
        ];
        for (args, want) in cases {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            let (mut out, mut err) = (Vec::new(), Vec::new());
            assert_eq!(run(&args, dir.path(), &mut out, &mut err), 2, "{args:?}");
            let msg = String::from_utf8(err).unwrap();
            assert!(msg.starts_with(want), "{args:?}: {msg}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn status_json_is_cloud_inits_shape() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let mut st = RunStatus::now(RunState::Done, Some("late"), None);
        st.updated = 1_780_000_000;
        write_status(&root, &st).unwrap();
        for args in [
            &["status", "--format", "json"][..],
            &["status", "--format=json"],
        ] {
            let (code, text) = run_status(dir.path(), args);
            assert_eq!(code, 0, "{text}");
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(doc["status"], "done");
            assert_eq!(doc["last_update"], "2026-05-28T20:26:40Z");
            assert_eq!(doc["errors"], serde_json::json!([]));
        }
        // A settings problem is a recoverable error: exit 2 once the run is over.
        root.write_file(
            Path::new(crate::settings::SETTINGS_PATH),
            b"[imc]\nmax_wait = x\n",
            0o644,
        )
        .unwrap();
        let (code, text) = run_status(dir.path(), &["status", "--format", "json"]);
        assert_eq!(code, 2, "{text}");
        assert!(text.contains("max_wait"), "{text}");
        assert_eq!(exit_code(RunState::Running, true), 0);
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_780_000_000), "2026-05-28T20:26:40Z");
    }

    #[test]
    fn clean_seals_the_root_with_cloud_inits_flags() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        for (p, t) in [
            ("/etc/machine-id", "0123456789abcdef0123456789abcdef\n"),
            ("/var/log/vmcust.log", "x"),
            ("/var/lib/vmcust/instances/a/result.json", "{}"),
        ] {
            root.write_file(Path::new(p), t.as_bytes(), 0o644).unwrap();
        }
        let args: Vec<OsString> = ["clean", "--logs", "--seed", "--machine-id", "-c", "all"]
            .iter()
            .map(OsString::from)
            .collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, dir.path(), &mut out, &mut err);
        assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
        assert!(!root.is_file(Path::new("/var/log/vmcust.log")));
        assert!(!root.is_dir(Path::new("/var/lib/vmcust/instances")));
        assert_eq!(
            root.read_text(Path::new("/etc/machine-id"))
                .unwrap()
                .unwrap(),
            ""
        );
        // --reboot is refused for a root that is not the running system, still exit 0.
        let args: Vec<OsString> = ["clean", "-r"].iter().map(OsString::from).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(run(&args, dir.path(), &mut out, &mut err), 0);
        assert!(String::from_utf8_lossy(&err).contains("not rebooting"));
    }
}
