//! The `vmcust` command line: sub-commands, exit codes and error reporting.

mod apply;
mod detect;
mod guestinfo;
mod input;
mod plan;
mod show;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: an internal error not covered below.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status: the command line was wrong (sysexits `EX_USAGE`).
pub const EXIT_USAGE: u8 = 64;
/// Exit status: the customization is invalid or cannot apply to this root
/// (sysexits `EX_DATAERR`). Nothing was changed.
pub const EXIT_INVALID: u8 = 65;
/// Exit status: reading or writing a file failed (sysexits `EX_IOERR`).
pub const EXIT_IO: u8 = 74;

/// VMware/OVF guest customization engine.
#[derive(Debug, Parser)]
#[command(
    name = "vmcust",
    version,
    propagate_version = true,
    help_expected = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The sub-commands.
#[derive(Debug, Subcommand)]
pub enum Command {
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
}

/// Output formats for machine-readable commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people.
    Text,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

/// An error whose cause is the input, not the system: exit [`EXIT_INVALID`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidInput(pub String);

/// Runs the command line and returns the process exit status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    init_logging();
    let result = match cli.command {
        Command::Show(args) => show::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Apply(args) => apply::run(args),
        Command::Guestinfo(args) => guestinfo::run(args),
        Command::Detect(args) => detect::run(args),
    };
    match result {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) => {
            eprintln!("vmcust: error: {e:#}");
            ExitCode::from(exit_code(&e))
        }
    }
}

/// The exit status for an error: invalid input, I/O, or other.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if e.chain().any(|c| {
        c.is::<InvalidInput>()
            || c.is::<crate::plan::PlanError>()
            || c.is::<vmcust_imc::SpecError>()
            || c.is::<vmcust_imc::ReadError>()
    }) {
        EXIT_INVALID
    } else if e.chain().any(|c| c.is::<std::io::Error>()) {
        EXIT_IO
    } else {
        EXIT_FAILURE
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::builder()
        .with_default_directive(tracing::level_filters::LevelFilter::INFO.into())
        .with_env_var("VMCUST_LOG")
        .from_env_lossy();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .with_target(false)
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
}
