//! `vmcust settings check`: reads the settings file as a boot would and reports each
//! problem, so a template is checked before it is sealed instead of at the first boot.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};

use crate::failure::Failure;
use crate::root::Root;
use crate::settings::load;
use crate::state::SETTINGS_PATH;

/// Check the settings file, /etc/vmcust/vmcust.conf.
#[derive(Debug, Args)]
pub(crate) struct SettingsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// `vmcust settings` sub-commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Action {
    /// Check the settings file: print each problem and the settings a boot would use; exit
    /// 65 when there are problems.
    Check {
        /// Root directory of the system.
        #[arg(long, value_name = "DIR", default_value = "/")]
        root: PathBuf,
    },
}

/// Runs `vmcust settings`.
pub(super) fn run(args: SettingsArgs) -> Result<()> {
    let Action::Check { root } = args.action;
    let root = Root::new(&root).with_context(|| format!("opening root {}", root.display()))?;
    let (settings, warnings) = load(&root);
    if !root.is_file(Path::new(SETTINGS_PATH)) {
        println!("{SETTINGS_PATH}: not there; every setting has its default");
    }
    for w in &warnings {
        println!("problem: {w}");
    }
    println!("in effect:");
    let renderer = settings
        .renderer
        .map(|r| r.name().to_string())
        .unwrap_or_else(|| "auto".into());
    for (key, value) in [
        ("[imc] enabled", settings.imc_enabled.to_string()),
        ("[imc] allow_raw_data", settings.allow_raw_data.to_string()),
        ("[imc] max_wait", settings.max_wait.as_secs().to_string()),
        (
            "[scripts] timeout",
            settings.script_timeout.as_secs().to_string(),
        ),
        ("[network] renderer", renderer),
        (
            "[ssh] user",
            settings
                .ssh_user
                .as_ref()
                .map_or_else(|| "root".to_string(), |u| u.to_string()),
        ),
        ("[log] level", settings.log_level.to_string().to_lowercase()),
        ("[cloud-init] step_aside", settings.step_aside.to_string()),
        (
            "[hygiene] ssh_host_keys",
            settings.hygiene_ssh_host_keys.to_string(),
        ),
        (
            "[hygiene] machine_id",
            settings.hygiene_machine_id.to_string(),
        ),
        (
            "[trust] recustomize_same_vm",
            settings.recustomize_same_vm.to_string(),
        ),
        ("[trust] sources", settings.sources.list()),
    ] {
        println!("  {key} = {value}");
    }
    if warnings.is_empty() {
        println!("{SETTINGS_PATH}: no problems");
        Ok(())
    } else {
        Err(Failure::invalid(format!(
            "{} problem(s) in {SETTINGS_PATH}; fix the lines named above (each kept its default)",
            warnings.len()
        ))
        .into())
    }
}
