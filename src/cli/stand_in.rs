//! vmcust answering as `cloud-init`, so open-vm-tools hands it the customization spec.
//!
//! Installed as `/usr/bin/cloud-init` (a symlink to vmcust, only where no real cloud-init
//! exists), the binary answers the two questions tools asks (reference open-vm-tools.md
//! §2.5, §2.9): `cloud-init -v` (must succeed, and give a version ≥ 21.1 for raw data) and
//! `cloud-init status` (tools waits while it says `not run` or `running`). The status is
//! vmcust's own progress, which the run engine records with [`crate::state::write_status`]; off VMware,
//! where vmcust never runs, it is `disabled` from the start. It also answers what
//! template builds and scripts ask: `status --wait`, `status --format json|yaml`, `clean`
//! (mapped onto [`crate::clean`]), `collect-logs` and `query` (the instance data,
//! [`crate::cloud_init::query`]), with cloud-init's flags, parsed by clap. Its page is vmcust-cloud-init(8).
//!
//! The environment variable `VMCUST_ROOT` (default `/`) sets the root the stand-in reads
//! its status and settings from; it exists for tests and image tooling and is read by
//! nothing else.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use crate::cloud_init::units::{self, Outlook};
use crate::root::Root;
use crate::settings::Settings;
use crate::state::{read_status, RunState, RunStatus, ROOT_ENV, STATUS_PATH};

pub(crate) use crate::cloud_init::CLAIMED_CLOUD_INIT_VERSION;

/// How often `status --wait` looks at the status file.
const WAIT_POLL: Duration = Duration::from_millis(250);

/// Whether this process was started under the name `cloud-init`.
pub(crate) fn invoked_as_cloud_init() -> bool {
    std::env::args_os().next().is_some_and(|argv0| {
        Path::new(&argv0)
            .file_name()
            .is_some_and(|n| n == "cloud-init")
    })
}

/// The `cloud-init -v` line. The first digit in it must be the major version, because
/// tools reads the version from the first digit of the text (§2.9), so it names the
/// fixed path tools runs, never `argv[0]` (which could contain digits).
pub(crate) fn version_line() -> String {
    format!(
        "/usr/bin/cloud-init {CLAIMED_CLOUD_INIT_VERSION} (vmcust {} standing in for cloud-init)",
        env!("CARGO_PKG_VERSION")
    )
}

/// Runs the stand-in with the process's arguments and returns its exit status.
pub(crate) fn main() -> ExitCode {
    // Keeps the marker bytes in the binary so `coexist` can recognise a copy of vmcust
    // installed as /usr/bin/cloud-init.
    std::hint::black_box(crate::cloud_init::coexist::STAND_IN_MARKER);
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

/// The commands of cloud-init's command line that the stand-in answers, with cloud-init's
/// own flags (22.4–23.x argparse definitions: short, long and combined, `-ls`).
#[derive(Debug, Parser)]
#[command(
    name = "cloud-init",
    bin_name = "cloud-init",
    disable_version_flag = true,
    about = "vmcust standing in for cloud-init, so that open-vm-tools hands it the VMware \
             guest customization",
    long_about = "vmcust standing in for cloud-init, so that open-vm-tools hands it the VMware \
                  guest customization. It answers the commands tools, template builds and \
                  scripts ask (`--version`, `status`, `clean`, `collect-logs`, `query`) from vmcust's \
                  own state; every other cloud-init command fails with exit status 1 and \
                  names the vmcust command that does it, or says why there is none. See vmcust-cloud-init(8) and `vmcust --help`.",
    after_help = "Exit status: 0 success, 1 error (status: vmcust's run failed), \
                  2 usage error (status: the run finished with recoverable errors)."
)]
pub(crate) struct StandIn {
    /// Print the cloud-init version vmcust claims, and exit.
    #[arg(short = 'v', long = "version")]
    version: bool,
    /// Accepted as cloud-init does; vmcust's log level is [log] level in
    /// /etc/vmcust/vmcust.conf.
    #[arg(short = 'd', long = "debug")]
    debug: bool,
    /// Accepted as cloud-init does; changes nothing.
    #[arg(long = "force")]
    force: bool,
    #[command(subcommand)]
    command: Option<StandInCommand>,
}

#[derive(Debug, Subcommand)]
enum StandInCommand {
    /// Report vmcust's progress as cloud-init's status.
    #[command(
        long_about = "Report vmcust's progress as cloud-init's status: `not run`, `running`, \
                      `done`, `error` or `disabled`. With --wait, wait until vmcust's units \
                      have settled this boot: it waits only while systemd has one of them \
                      starting or queued, and says so on standard error."
    )]
    Status(StatusArgs),
    /// Seal the template: remove vmcust's state so the next boot customizes again.
    Clean(CleanArgs),
    /// Collect vmcust's logs into one tar.gz, secrets redacted.
    CollectLogs(CollectLogsArgs),
    /// Query the instance data (/run/cloud-init/instance-data.json).
    Query(crate::cloud_init::query::QueryArgs),
    /// Any other cloud-init command: refused (exit status 1), naming the vmcust equivalent.
    #[command(external_subcommand)]
    Other(Vec<OsString>),
}

/// `cloud-init status`'s output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// `status: done` lines.
    Tabular,
    /// cloud-init's JSON document.
    Json,
    /// The same document as YAML.
    Yaml,
}

#[derive(Debug, Args)]
struct StatusArgs {
    /// Also print the stage, the time of the last update and the reason of an error.
    #[arg(short = 'l', long = "long")]
    long: bool,
    /// Wait until vmcust's units have settled for this boot, then report.
    #[arg(short = 'w', long = "wait")]
    wait: bool,
    /// The output format.
    #[arg(long = "format", value_enum, default_value = "tabular")]
    format: Format,
}

/// What `clean --configs` may name (cloud-init 23.x's choices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Configs {
    /// Everything below.
    All,
    /// Nothing to remove: vmcust writes no sshd configuration.
    #[value(name = "ssh_config")]
    SshConfig,
    /// The network configuration files vmcust wrote.
    Network,
}

#[derive(Debug, Args)]
struct CleanArgs {
    /// Also remove vmcust's log, /var/log/vmcust.log.
    #[arg(short = 'l', long = "logs")]
    logs: bool,
    /// Accepted: the seed is part of vmcust's state, which is always removed.
    #[arg(short = 's', long = "seed")]
    seed: bool,
    /// Empty /etc/machine-id so that the clone gets its own.
    #[arg(long = "machine-id")]
    machine_id: bool,
    /// Also remove configuration vmcust generated.
    #[arg(short = 'c', long = "configs", value_enum, num_args = 1..)]
    configs: Vec<Configs>,
    /// Reboot afterwards (`systemctl reboot`); a failed reboot is an error (exit status 1).
    #[arg(short = 'r', long = "reboot")]
    reboot: bool,
}

#[derive(Debug, Args)]
struct CollectLogsArgs {
    /// The archive to write.
    #[arg(short = 't', long = "tarfile", default_value = "cloud-init.tar.gz")]
    tarfile: PathBuf,
    /// Accepted; changes nothing: user-data may hold secrets and is never collected.
    #[arg(short = 'u', long = "include-userdata")]
    include_userdata: bool,
    /// Accepted; changes nothing.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    verbose: u8,
}

/// The stand-in's command line as clap sees it (for its man page and help).
pub(crate) fn command() -> clap::Command {
    StandIn::command()
}

/// `cloud-init query`: root reads the sensitive instance data, other users the redacted.
fn query(
    a: &crate::cloud_init::query::QueryArgs,
    root_dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    match Root::new(root_dir) {
        Ok(root) => {
            // SAFETY: geteuid has no preconditions and cannot fail.
            let privileged = unsafe { libc::geteuid() } == 0;
            crate::cloud_init::query::run(a, &root, privileged, out, err)
        }
        Err(e) => {
            let _ = writeln!(err, "ERROR: {}: {e}", root_dir.display());
            1
        }
    }
}

/// The stand-in's logic, with its streams and root given (for tests).
pub(crate) fn run(
    args: &[OsString],
    root_dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let argv = std::iter::once(OsString::from("cloud-init")).chain(args.iter().cloned());
    let cli = match StandIn::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => {
            // Help goes to stdout with status 0; a usage error to stderr with argparse's
            // status 2, which open-vm-tools never mistakes for cloud-init's error state (1).
            let code = u8::try_from(e.exit_code()).unwrap_or(2);
            let text = e.render().to_string();
            let _ = if code == 0 {
                write!(out, "{text}")
            } else {
                write!(err, "{text}")
            };
            return code;
        }
    };
    if cli.version {
        let _ = writeln!(out, "{}", version_line());
        return 0;
    }
    match cli.command {
        Some(StandInCommand::Status(a)) => status(&a, root_dir, out, err),
        Some(StandInCommand::Clean(a)) => clean(&a, root_dir, out, err, &REBOOT),
        Some(StandInCommand::CollectLogs(a)) => collect_logs(&a, root_dir, out, err),
        Some(StandInCommand::Query(a)) => query(&a, root_dir, out, err),
        Some(StandInCommand::Other(words)) => {
            let words: Vec<String> = words
                .iter()
                .map(|w| w.to_string_lossy().into_owned())
                .collect();
            let answered: Vec<String> = StandIn::command()
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .filter(|n| n != "help")
                .collect();
            let said = crate::cloud_init::equivalents::refusal(
                &words,
                env!("CARGO_PKG_VERSION"),
                &answered,
            );
            let _ = writeln!(err, "{said}");
            1
        }
        None => {
            let _ = write!(err, "{}", StandIn::command().render_usage());
            let _ = writeln!(
                err,
                "\ncloud-init: a command is needed; this is vmcust {} standing in for \
                 cloud-init, see `cloud-init --help`",
                env!("CARGO_PKG_VERSION")
            );
            1
        }
    }
}

/// Why the status printed is what it is, when systemd's view decided it rather than the
/// status file (shown by `status --long` and in the documents' `detail`).
type Note = Option<String>;

fn status(args: &StatusArgs, root_dir: &Path, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
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
    // One read of the settings: the wait's bound and the recoverable errors both come
    // from it.
    let (settings, warnings) = crate::settings::load(&root);
    let (status, note) = match wait_for_status_saying(&root, &settings, args.wait, err) {
        Ok((s, note)) => (s.unwrap_or(NOT_STARTED), note),
        Err(e) => {
            // Unreadable progress is reported as an error (exit 1): tools then stops
            // waiting instead of waiting for a state that will never change.
            let _ = writeln!(out, "status: error");
            let _ = writeln!(err, "{e:#}");
            return 1;
        }
    };
    let settings_problems: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    let report = crate::cloud_init::status_report::Report::new(
        &status,
        crate::cloud_init::boot_files::read_status_v1(&root),
        &settings_problems,
        note.as_deref(),
    );
    let code = exit_code(status.state, !report.recoverable.is_empty());
    let text = match args.format {
        Format::Tabular => report.tabular(args.long),
        Format::Yaml => crate::yaml::to_string(&report.document()).unwrap_or_default(),
        Format::Json => serde_json::to_string_pretty(&report.document()).unwrap_or_default() + "\n",
    };
    let _ = write!(out, "{text}");
    code
}

/// No stage has written a status this boot.
const NOT_STARTED: RunStatus = RunStatus {
    state: RunState::NotStarted,
    stage: None,
    last_error: None,
    updated: 0,
};

/// cloud-init 23.4's exit codes: 1 for an error, 2 for a finished run with recoverable
/// errors (settings problems), else 0. Never 2 while busy: tools before 13.0.10 stop
/// waiting on any exit code but 0 (reference open-vm-tools.md §2.9).
pub(crate) fn exit_code(state: RunState, recoverable: bool) -> u8 {
    match state {
        RunState::Error => 1,
        RunState::Done | RunState::Disabled if recoverable => 2,
        _ => 0,
    }
}

/// Reads the run status; with `wait`, until no stage is starting or running (bounded by
/// [`wait_limit`]). A missing status counts as "not started".
pub(crate) fn wait_for_status(
    root: &Root,
    settings: &Settings,
    wait: bool,
) -> anyhow::Result<Option<RunStatus>> {
    wait_for_status_saying(root, settings, wait, &mut std::io::sink()).map(|(status, _)| status)
}

/// [`wait_for_status`], and on the running system systemd's view too: while the status
/// file says "not run" or "running", a boot in which no vmcust unit is starting or queued
/// has settled (units disabled or conditioned out: `disabled`; a unit failed or the run
/// stopped half-way: `error`), so there is nothing to wait for. When it waits, it says for
/// what on `err`, once. Returns the status and, when systemd decided it, why.
pub(crate) fn wait_for_status_saying(
    root: &Root,
    settings: &Settings,
    wait: bool,
    err: &mut dyn Write,
) -> anyhow::Result<(Option<RunStatus>, Note)> {
    let limit = wait_limit(settings);
    let deadline = Instant::now() + limit;
    // Off VMware vmcust never runs (its units are conditioned on VMware), so no stage will
    // ever write a status: `disabled` at once, as cloud-init says where it is switched off,
    // instead of `not run` (which `status --wait` would wait out).
    let off_vmware = !crate::host::platform::Platform::detect(root.path()).is_vmware();
    let mut said = false;
    loop {
        let current = match read_status(root)? {
            None if off_vmware => Some(RunStatus {
                state: RunState::Disabled,
                ..NOT_STARTED
            }),
            other => other,
        };
        let busy = matches!(
            current.as_ref().map(|s| s.state),
            None | Some(RunState::NotStarted | RunState::Running)
        );
        if !busy {
            return Ok((current, None));
        }
        let waiting_for = match units::query(root.path()).map(|u| units::outlook(&u)) {
            Some(Outlook::Settled { failed, why }) => {
                return Ok(settled(current, failed, &why));
            }
            Some(Outlook::Coming(which)) => which,
            None => format!("a vmcust stage to finish ({STATUS_PATH} says it is not done)"),
        };
        if !wait || Instant::now() >= deadline {
            return Ok((current, None));
        }
        if !said {
            let _ = writeln!(
                err,
                "cloud-init status: waiting for {waiting_for}; at most {} s",
                limit.as_secs()
            );
            said = true;
        }
        std::thread::sleep(WAIT_POLL);
    }
}

/// What a busy status file means once systemd says no vmcust unit is starting or queued.
fn settled(
    current: Option<RunStatus>,
    failed: Option<String>,
    why: &str,
) -> (Option<RunStatus>, Note) {
    let stage = current.as_ref().and_then(|s| s.stage.clone());
    let updated = current.as_ref().map_or(0, |s| s.updated);
    if let Some(unit) = failed {
        let error = format!(
            "{unit} failed before vmcust finished; see `journalctl -b -u {}`",
            unit.split(' ').next().unwrap_or(unit.as_str())
        );
        let status = RunStatus {
            state: RunState::Error,
            stage,
            last_error: Some(error),
            updated,
        };
        return (Some(status), Some(format!("systemd reports {why}")));
    }
    match current {
        Some(s) if s.state == RunState::Running => {
            let error = format!(
                "the run stopped half-way: {STATUS_PATH} says a stage is running, but no \
                 vmcust unit is running or queued ({why}); it resumes at the next boot"
            );
            let status = RunStatus {
                state: RunState::Error,
                last_error: Some(error),
                ..s
            };
            (Some(status), Some(format!("systemd reports {why}")))
        }
        _ => (
            Some(RunStatus {
                state: RunState::Disabled,
                ..NOT_STARTED
            }),
            Some(format!(
                "vmcust's units have not run this boot and none is queued ({why})"
            )),
        ),
    }
}

/// How `clean --reboot` reboots: `systemctl reboot`, as open-vm-tools does.
const REBOOT: [&str; 2] = ["systemctl", "reboot"];

/// How long the reboot command may take to be accepted (systemctl returns once the
/// reboot job is queued).
const REBOOT_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs the reboot command through [`crate::process`] (cleared environment, timeout); an
/// error says why it did not happen.
fn reboot(command: &[&str]) -> Result<(), String> {
    use crate::process::{self, Cmd, Ended, Output};
    let (program, args) = command.split_first().ok_or("no reboot command")?;
    let shown = command.join(" ");
    let never = std::sync::atomic::AtomicBool::new(false);
    let done = process::run(
        &Cmd::new(*program, args, REBOOT_TIMEOUT),
        Output::Bytes(4096),
        &never,
    )
    .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    let said = String::from_utf8_lossy(&done.stderr);
    let said = said
        .lines()
        .next()
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    match done.ended {
        Ended::Exited(0) => Ok(()),
        Ended::Exited(n) => Err(format!("`{shown}` failed (exit status {n}){said}")),
        Ended::Signalled(n) => Err(format!("`{shown}` was killed by signal {n}{said}")),
        Ended::TimedOut => Err(format!(
            "`{shown}` did not return within {} s",
            REBOOT_TIMEOUT.as_secs()
        )),
        Ended::Stopped => Err(format!("`{shown}` was stopped")),
    }
}

/// `cloud-init collect-logs`, mapped onto `vmcust collect-logs` (default
/// `cloud-init.tar.gz`, as cloud-init's).
fn collect_logs(
    args: &CollectLogsArgs,
    root_dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    // Accepted for cloud-init's command line; neither changes what is collected.
    let _ = (args.include_userdata, args.verbose);
    match crate::cli::collect_logs(root_dir, &args.tarfile) {
        Ok(()) => {
            let _ = writeln!(out, "wrote {}", args.tarfile.display());
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
/// remove, vmcust writes no sshd configuration) and `--reboot` (honoured on `/` only; a
/// reboot that fails is an error).
fn clean(
    args: &CleanArgs,
    root_dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
    reboot_command: &[&str],
) -> u8 {
    // Accepted for cloud-init's command line: the seed is part of the state, always removed.
    let _ = args.seed;
    let opts = crate::clean::CleanOptions {
        state: true,
        logs: args.logs,
        machine_id: args.machine_id,
        network_configs: args
            .configs
            .iter()
            .any(|c| matches!(c, Configs::All | Configs::Network)),
        ..Default::default()
    };
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
    if !args.reboot {
        return 0;
    }
    if root_dir != Path::new("/") {
        let _ = writeln!(
            err,
            "cloud-init clean: not rebooting: {ROOT_ENV} names {}, not the running system",
            root_dir.display()
        );
        return 0;
    }
    match reboot(reboot_command) {
        Ok(()) => 0,
        Err(why) => {
            let _ = writeln!(
                err,
                "cloud-init clean: error: the template is cleaned but did not reboot: {why}; \
                 reboot it yourself"
            );
            1
        }
    }
}

/// How long `status --wait` waits at most: both stages' worst case by the settings (the
/// wait for cust.cfg, a pre- and a post-customization script) plus a margin. cloud-init
/// waits forever; a bound keeps a forgotten unit from hanging its caller.
pub(crate) fn wait_limit(settings: &Settings) -> Duration {
    settings.max_wait + settings.script_timeout * 2 + Duration::from_secs(300)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::write_status;

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
    // started as `cloud-init`, in tests/boot_stand_in.rs.

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

    fn run_all(dir: &Path, args: &[&str]) -> (u8, String, String) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, dir, &mut out, &mut err);
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (code, text(out), text(err))
    }

    /// Usage errors exit 2 as argparse's do (tools reads 1 as cloud-init's error state),
    /// on stderr, naming what is wrong; nothing is changed.
    #[test]
    fn usage_errors_exit_2_and_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let cases: &[(&[&str], &str)] = &[
            (&["status", "--bogus"], "unexpected argument '--bogus'"),
            (
                &["status", "--format", "xml"],
                "invalid value 'xml' for '--format",
            ),
            (&["status", "--format"], "a value is required for '--format"),
            (&["status", "-x"], "unexpected argument '-x'"),
            (
                &["clean", "--configs=foo"],
                "invalid value 'foo' for '--configs",
            ),
            (&["clean", "-c"], "a value is required for '--configs"),
            (&["clean", "-lx"], "unexpected argument '-x'"),
            (
                &["collect-logs", "--tarfile"],
                "a value is required for '--tarfile",
            ),
            (&["collect-logs", "-z"], "unexpected argument '-z'"),
        ];
        for (args, want) in cases {
            let (code, out, err) = run_all(dir.path(), args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(out.is_empty(), "{args:?}: {out}");
            assert!(err.contains(want), "{args:?}: {err}");
            assert!(err.contains("try '--help'"), "{args:?}: {err}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// `--help` at the top and for each command: on stdout, exit 0, cloud-init's flags
    /// listed.
    #[test]
    fn help_for_every_command() {
        let dir = tempfile::tempdir().unwrap();
        let cases: &[(&[&str], &[&str])] = &[
            (
                &["--help"],
                &["status", "clean", "collect-logs", "--version", "vmcust"],
            ),
            (&["-h"], &["Usage: cloud-init"]),
            (&["help", "status"], &["--wait"]),
            (
                &["status", "--help"],
                &["-w, --wait", "-l, --long", "--format", "yaml"],
            ),
            (
                &["clean", "--help"],
                &[
                    "-l, --logs",
                    "-s, --seed",
                    "--machine-id",
                    "-c, --configs",
                    "-r, --reboot",
                ],
            ),
            (
                &["collect-logs", "-h"],
                &["-t, --tarfile", "-u, --include-userdata", "-v, --verbose"],
            ),
        ];
        for (args, wants) in cases {
            let (code, out, err) = run_all(dir.path(), args);
            assert_eq!(code, 0, "{args:?}: {err}");
            assert!(err.is_empty(), "{args:?}: {err}");
            for want in *wants {
                assert!(out.contains(want), "{args:?} lacks {want}: {out}");
            }
        }
    }

    /// cloud-init's short and combined flags mean what its long ones do: each row gives
    /// the same status output (or the same cleaned root) as its long form.
    #[test]
    fn short_and_combined_flags_are_cloud_inits() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let mut st = RunStatus::now(RunState::Error, Some("early"), Some("no NIC".into()));
        st.updated = 1_780_000_000;
        write_status(&root, &st).unwrap();
        let same: &[(&[&str], &[&str])] = &[
            (&["status", "-l"], &["status", "--long"]),
            (&["status", "-w"], &["status", "--wait"]),
            (&["status", "-wl"], &["status", "--wait", "--long"]),
            (&["status", "-lw"], &["status", "--long", "--wait"]),
            (
                &["status", "--format=yaml"],
                &["status", "--format", "yaml"],
            ),
            (&["-d", "status"], &["status"]),
            (
                &["--debug", "--force", "status", "-l"],
                &["status", "--long"],
            ),
        ];
        for (short, long) in same {
            let a = run_all(dir.path(), short);
            assert_eq!(a, run_all(dir.path(), long), "{short:?} vs {long:?}");
            assert_eq!(a.0, 1, "{short:?}: an error state exits 1");
        }
        assert!(run_all(dir.path(), &["status", "-l"])
            .1
            .contains("errors:\n\t- no NIC\n"));
        // clean: each spelling seals the same things.
        let seal: &[(&[&str], &[&str])] = &[
            (&["clean", "-ls"], &["clean", "--logs", "--seed"]),
            (&["clean", "-sl"], &["clean", "--logs"]),
            (
                &["clean", "-lsc", "all"],
                &["clean", "--logs", "--configs", "all"],
            ),
            (
                &["clean", "-l", "-c", "network", "ssh_config"],
                &["clean", "--logs", "--configs=network"],
            ),
        ];
        for (short, long) in seal {
            let mut outputs = Vec::new();
            for args in [short, long] {
                let d = tempfile::tempdir().unwrap();
                let r = Root::new(d.path()).unwrap();
                for p in [
                    "/var/log/vmcust.log",
                    "/var/lib/vmcust/instances/a/result.json",
                ] {
                    r.write_file(Path::new(p), b"x", 0o644).unwrap();
                }
                let (code, out, err) = run_all(d.path(), args);
                assert_eq!(code, 0, "{args:?}: {err}");
                assert!(!r.is_file(Path::new("/var/log/vmcust.log")), "{args:?}");
                assert!(
                    !r.is_dir(Path::new("/var/lib/vmcust/instances")),
                    "{args:?}"
                );
                outputs.push(out);
            }
            assert_eq!(outputs[0], outputs[1], "{short:?} vs {long:?}");
        }
    }

    #[test]
    fn status_yaml_is_the_json_document_as_yaml() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let mut st = RunStatus::now(RunState::Done, Some("late"), None);
        st.updated = 1_780_000_000;
        write_status(&root, &st).unwrap();
        let (code, yaml, _) = run_all(dir.path(), &["status", "--format", "yaml"]);
        let (_, json, _) = run_all(dir.path(), &["status", "--format", "json"]);
        assert_eq!(code, 0);
        assert!(
            !yaml.trim_start().starts_with('{'),
            "JSON, not YAML: {yaml}"
        );
        assert!(yaml.contains("status: done\n"), "{yaml}");
        let from_yaml: serde_json::Value = serde_norway::from_str(&yaml).unwrap();
        let from_json: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(from_yaml, from_json);
        for key in [
            "status",
            "extended_status",
            "datasource",
            "detail",
            "last_update",
            "errors",
            "recoverable_errors",
        ] {
            assert!(from_json.get(key).is_some(), "no {key}: {json}");
        }
    }

    /// A reboot that does not happen is an error (exit 1) that says so; one that does is
    /// success. The commands stand in for `systemctl reboot` on this machine.
    #[test]
    fn clean_reboot_fails_when_the_reboot_fails() {
        let cases: &[(&[&str], u8, &str)] = &[
            (&["true"], 0, ""),
            (
                &["false"],
                1,
                "did not reboot: `false` failed (exit status 1)",
            ),
            (
                &["sh", "-c", "echo refused >&2; exit 3"],
                1,
                "`sh -c echo refused >&2; exit 3` failed (exit status 3): refused",
            ),
            (
                &["/nonexistent/systemctl", "reboot"],
                1,
                "cannot run `/nonexistent/systemctl reboot`",
            ),
        ];
        for (command, want, msg) in cases {
            let dir = tempfile::tempdir().unwrap();
            let args = CleanArgs {
                logs: false,
                seed: false,
                machine_id: false,
                configs: Vec::new(),
                reboot: true,
            };
            // Only the root `/` reboots; the cleaning itself is done on a scratch root
            // first, then the reboot step is checked alone.
            let (mut out, mut err) = (Vec::new(), Vec::new());
            assert_eq!(clean(&args, dir.path(), &mut out, &mut err, command), 0);
            assert!(String::from_utf8_lossy(&err).contains("not rebooting"));
            let got = reboot(command);
            assert_eq!(u8::from(got.is_err()), *want, "{command:?}: {got:?}");
            if let Err(why) = got {
                let text = format!("did not reboot: {why}");
                assert!(text.contains(msg), "{command:?}: {text}");
            }
        }
    }

    /// Each row: what the status file says, what systemd says once no unit is starting or
    /// queued, and the state reported.
    #[test]
    fn a_settled_boot_is_not_waited_for() {
        let running = RunStatus::now(RunState::Running, Some("early"), None);
        let not_started = RunStatus {
            state: RunState::NotStarted,
            ..running.clone()
        };
        let failed = Some("vmcust-early.service (failed, enabled, timeout)".to_string());
        let cases: &[(Option<RunStatus>, Option<String>, RunState, &str)] = &[
            (None, None, RunState::Disabled, "have not run this boot"),
            (
                Some(not_started),
                None,
                RunState::Disabled,
                "none is queued",
            ),
            (Some(running.clone()), None, RunState::Error, ""),
            (
                Some(running),
                failed.clone(),
                RunState::Error,
                "systemd reports",
            ),
            (None, failed, RunState::Error, "systemd reports"),
        ];
        for (current, failed, want, note) in cases {
            let (status, why) = settled(current.clone(), failed.clone(), "units…");
            let status = status.unwrap();
            assert_eq!(status.state, *want, "{current:?} {failed:?}");
            assert!(why.unwrap().contains(note), "{current:?} {failed:?}");
            if *want == RunState::Error {
                assert!(status.last_error.is_some(), "an error says why");
            }
        }
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
            assert_eq!(doc["last_update"], "Thu, 28 May 2026 20:26:40 +0000");
            assert_eq!(doc["errors"], serde_json::json!([]));
        }
        // A settings problem is a recoverable error: exit 2 once the run is over.
        root.write_file(
            Path::new(crate::state::SETTINGS_PATH),
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
        let (code, _, err) = run_all(dir.path(), &["clean", "-r"]);
        assert_eq!(code, 0);
        assert!(err.contains("not rebooting"), "{err}");
    }
}
