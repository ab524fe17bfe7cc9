//! The `vmcust` command line: sub-commands, exit codes and error reporting.

mod analyze;
mod apply;
mod clean;
mod collect_logs;
mod detect;
mod generate;
mod guestinfo;
mod input;
mod link;
pub(crate) mod logline;
mod plan;
mod query;
mod run;
mod schema;
mod settings;
mod show;
pub(crate) mod stand_in;
mod status;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::root::Root;

pub(crate) use clean::report as clean_report;
pub(crate) use collect_logs::collect_logs;

use crate::failure::{exit_code, EXIT_OK, EXIT_USAGE};

/// The version `--version` prints: the package version and, when built from git, the
/// revision (build.rs).
pub(crate) const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("VMCUST_VERSION_SUFFIX"));

/// VMware/OVF guest customization engine.
#[derive(Debug, Parser)]
#[command(
    name = "vmcust",
    version = VERSION,
    propagate_version = true,
    help_expected = true
)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The sub-commands. Each one's arguments are defined only when it is the one invoked
/// (`defer`): building all of them cost a sixth of a whole `vmcust plan`
/// (docs/benchmarks.md).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum Command {
    /// Validate a customization spec and print it, with its network as netplan v2.
    Show(show::ShowArgs),
    /// Print what applying a customization to a root would change.
    Plan(plan::PlanArgs),
    /// Apply a customization to a root and print what changed.
    Apply(apply::ApplyArgs),
    /// Read or write guestinfo keys through the guest RPC transports.
    Guestinfo(guestinfo::GuestinfoArgs),
    /// Print the platform, the guest RPC transports that work and the sources found.
    Detect(detect::DetectArgs),
    /// Run a boot stage: wait for the customization, apply it, report to vCenter.
    Run(run::RunArgs),
    /// Show the run's state and each customized instance's outcome.
    Status(status::StatusArgs),
    /// Show what was applied to the current instance, and from which source.
    Query(query::QueryArgs),
    /// Show each boot stage's and step's time for the last boots.
    Analyze(analyze::AnalyzeArgs),
    /// Seal a template: remove state, logs, machine-id and SSH host keys so clones start fresh.
    Clean(clean::CleanArgs),
    /// Write one tar.gz with the logs, status, records and settings, secrets redacted.
    CollectLogs(collect_logs::CollectLogsArgs),
    /// Check the settings file, /etc/vmcust/vmcust.conf.
    Settings(settings::SettingsArgs),
    /// Check user-data (cloud-config, scripts, MIME multipart) offline.
    Schema(schema::SchemaArgs),
    /// Write the man pages or shell completions (for packaging).
    #[command(hide = true)]
    Generate(generate::GenerateArgs),
    /// Install or remove the `cloud-init` stand-in as the system needs (for packaging).
    #[command(hide = true, name = "cloud-init-link")]
    CloudInitLink(link::LinkArgs),
}

/// Output formats for machine-readable commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// For people.
    Text,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

/// Runs the command line and returns the process exit status.
pub fn main() -> ExitCode {
    // Started under the name `cloud-init`: the stand-in answers instead.
    if stand_in::invoked_as_cloud_init() {
        return stand_in::main();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    // `run` logs to its file too, at the level the settings file asks for; the settings
    // read for that are the ones the run uses (read once).
    let (log_file, settings) = match &cli.command {
        Command::Run(args) => match Root::new(&args.root) {
            Ok(root) => (
                root.resolve(std::path::Path::new(crate::state::LOG_PATH), true)
                    .ok(),
                Some(crate::settings::load(&root)),
            ),
            Err(_) => (None, None),
        },
        _ => (None, None),
    };
    let level = settings
        .as_ref()
        .map_or(tracing::Level::INFO, |(s, _)| s.log_level);
    init_logging(log_file.as_deref(), level);
    let result = match cli.command {
        Command::Run(args) => {
            return match run::run(args, settings) {
                Ok(code) => code,
                Err(e) => {
                    logline::print_error(&e);
                    ExitCode::from(exit_code(&e))
                }
            }
        }
        Command::Status(args) => {
            // cloud-init's exit codes: 0 ok, 1 error, 2 recoverable errors.
            return match status::run(args) {
                Ok(code) => ExitCode::from(code),
                Err(e) => {
                    logline::print_error(&e);
                    ExitCode::from(exit_code(&e))
                }
            };
        }
        Command::Schema(args) => {
            // 0 valid, 2 it would apply degraded, 65 it would be refused.
            return match schema::run(args) {
                Ok(code) => ExitCode::from(code),
                Err(e) => {
                    logline::print_error(&e);
                    ExitCode::from(exit_code(&e))
                }
            };
        }
        Command::Show(args) => show::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Apply(args) => apply::run(args),
        Command::Guestinfo(args) => guestinfo::run(args),
        Command::Detect(args) => detect::run(args),
        Command::Clean(args) => clean::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Settings(args) => settings::run(args),
        Command::CollectLogs(args) => collect_logs::run(args),
        Command::Query(args) => query::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::CloudInitLink(args) => link::run(args),
    };
    match result {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) => {
            logline::print_error(&e);
            ExitCode::from(exit_code(&e))
        }
    }
}

/// Logs go to stderr (the journal under systemd); `vmcust run` also appends them to
/// `<root>/var/log/vmcust.log`, the file every status message sent to vCenter names.
/// `VMCUST_LOG` overrides `level`. Every line reads `vmcust: warning: …` (or `error:`,
/// `debug:`; info has no label); the file's lines start with the time, and stderr's carry
/// an sd-daemon `<N>` priority when stderr is the journal, so `journalctl -p warning`
/// filters them.
fn init_logging(log_file: Option<&std::path::Path>, level: tracing::Level) {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::EnvFilter::builder()
        .with_default_directive(tracing::level_filters::LevelFilter::from_level(level).into())
        .with_env_var("VMCUST_LOG")
        .from_env_lossy();
    // Bounded: rotated to `.1` at 8 MiB (docs/limits.md).
    let file = log_file.and_then(|path| crate::log_file::BoundedLog::open(path).ok());
    let stderr = tracing_subscriber::fmt::layer()
        .event_format(logline::Line {
            priority: logline::stderr_is_journal(),
            time: false,
        })
        .with_writer(std::io::stderr);
    let file = file.map(|f| {
        tracing_subscriber::fmt::layer()
            .event_format(logline::Line {
                priority: false,
                time: true,
            })
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(f))
    });
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(file)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    /// With deferred sub-commands, `vmcust --help` lists each one with its variant's doc
    /// and `vmcust X --help` starts with its arguments struct's: the two must agree.
    #[test]
    fn each_sub_command_describes_itself_as_the_list_does() {
        let cli = Cli::command();
        let mut seen = 0;
        for listed in cli.get_subcommands() {
            let mut own = listed.clone();
            own.build();
            let about = |c: &clap::Command| c.get_about().map(ToString::to_string);
            assert!(
                about(listed).is_some(),
                "{} has no summary",
                listed.get_name()
            );
            let first_line = about(&own).map(|a| a.lines().next().unwrap_or("").to_string());
            assert_eq!(
                first_line,
                about(listed),
                "vmcust {} --help",
                listed.get_name()
            );
            seen += 1;
        }
        assert!(seen >= 10, "{seen}");
    }
}
