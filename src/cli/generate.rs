//! `vmcust generate` (hidden): the man pages and shell completions the packages ship,
//! made from the same clap definitions as `--help`, so they can never drift from it.
//! Run at package time by scripts/package.sh; docs/packaging.md.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::{Args, CommandFactory, Subcommand};

use super::Cli;

/// Write the man pages or shell completions (for packaging).
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What to generate.
    #[command(subcommand)]
    pub what: What,
}

/// The generated files.
#[derive(Debug, Subcommand)]
pub enum What {
    /// Man pages: vmcust.1 and one vmcust-COMMAND.1 per sub-command.
    Man {
        /// Directory to write them to (created if missing).
        dir: PathBuf,
    },
    /// Completions for bash, zsh and fish (vmcust.bash, _vmcust, vmcust.fish).
    Completions {
        /// Directory to write them to (created if missing).
        dir: PathBuf,
    },
}

/// Runs `vmcust generate`.
pub fn run(args: GenerateArgs) -> Result<()> {
    match args.what {
        What::Man { dir } => man(&dir),
        What::Completions { dir } => completions(&dir),
    }
}

fn create(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

fn man(dir: &Path) -> Result<()> {
    create(dir)?;
    let cmd = Cli::command();
    // Sub-command pages are named vmcust-COMMAND.1, as git's are.
    clap_mangen::generate_to(cmd, dir)
        .with_context(|| format!("writing man pages to {}", dir.display()))?;
    Ok(())
}

fn completions(dir: &Path) -> Result<()> {
    use clap_complete::Shell;
    create(dir)?;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let mut cmd = Cli::command();
        clap_complete::generate_to(shell, &mut cmd, "vmcust", dir)
            .with_context(|| format!("writing {shell} completions to {}", dir.display()))?;
    }
    Ok(())
}
