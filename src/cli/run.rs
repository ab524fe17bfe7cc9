//! `vmcust run --stage early|late`: the boot engine, as the systemd units run it.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::Args;

use crate::boot::progress::{self, StageEnd};
use crate::boot::{self, Context, Ending, Stage};
use crate::host::platform::Platform;
use crate::host::{open, TransportOptions};
use crate::report::NicTiming;
use crate::root::Root;
use crate::state::RunState;
use crate::state::LOCK_PATH;

/// `--stage`: [`Stage`] as the command line names it (the derive stays on the CLI side,
/// out of the boot library's types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StageArg {
    /// Before networking: identity, network, password, pre-script, report.
    Early,
    /// After the network is online: post-script, user-data.
    Late,
}

impl From<StageArg> for Stage {
    fn from(arg: StageArg) -> Stage {
        match arg {
            StageArg::Early => Stage::Early,
            StageArg::Late => Stage::Late,
        }
    }
}

/// Run a boot stage: wait for the customization, apply it, report to vCenter.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Which boot stage to run.
    #[arg(long, value_enum)]
    pub stage: StageArg,
    /// Root directory of the system to customize.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Use a directory of key files as the VMware host (testing; see docs/guestinfo.md).
    #[arg(long, value_name = "DIR")]
    pub guestinfo_dir: Option<PathBuf>,
    /// Run even when the platform does not look like VMware.
    #[arg(long)]
    pub force: bool,
    /// Seconds to wait for cust.cfg, overriding the settings file.
    #[arg(long, value_name = "SECS")]
    pub max_wait: Option<u64>,
    /// Milliseconds between NIC-connect polls (default: VMware's 1 s; shorter for tests).
    #[arg(long, value_name = "MS", hide = true)]
    pub nic_poll_ms: Option<u64>,
    /// The network is up already (vmcust-imc.service): after applying, make the running
    /// network stack take the new configuration.
    #[arg(long)]
    pub reconfigure_network: bool,
}

pub(crate) use crate::failure::EXIT_INTERRUPTED;

/// Runs `vmcust run` with the settings `main` read from the root (for the log level);
/// `None` when it could not open the root, and they are read here. Returns the process
/// exit status.
pub(super) fn run(
    args: RunArgs,
    loaded: Option<(crate::settings::Settings, Vec<crate::settings::Warning>)>,
) -> Result<ExitCode> {
    crate::timings::begin();
    let stage = Stage::from(args.stage);
    let stop = boot::stop::install().context("installing the SIGTERM handler")?;
    let root =
        Root::new(&args.root).with_context(|| format!("opening root {}", args.root.display()))?;
    let platform = boot::timed("platform detection", || Platform::detect(root.path()));
    if !platform.is_vmware() && !args.force && args.guestinfo_dir.is_none() {
        tracing::info!("not a VMware guest (DMI and CPUID say so): nothing to do");
        return Ok(ExitCode::SUCCESS);
    }
    let _lock = lock(&root)?;
    let (mut settings, warnings) = loaded.unwrap_or_else(|| crate::settings::load(&root));
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let settings_warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    if let Some(secs) = args.max_wait {
        settings.max_wait = Duration::from_secs(secs);
    }
    let mut nic_timing = NicTiming::default();
    if let Some(ms) = args.nic_poll_ms {
        nic_timing.poll_wait = Duration::from_millis(ms);
        nic_timing.retry_wait = Duration::from_millis(ms * 5);
    }
    if stage == Stage::Early {
        // The cloud-init stand-in follows the system before anything reads it (a real
        // cloud-init installed since the last boot takes the drop-in away): an rpm has no
        // trigger for that, so every boot does it. Done here rather than in a second
        // process before this one: each process start costs a visible share of an
        // emulated guest's boot (docs/benchmarks.md).
        match crate::cloud_init::link::sync(&root) {
            Ok(did) => did
                .iter()
                .for_each(|d| tracing::info!("cloud-init stand-in: {d}")),
            Err(e) => tracing::warn!("cloud-init stand-in: {e:#}"),
        }
    }
    let step_aside = crate::cloud_init::coexist::should_step_aside(&root, &settings);
    let mut rpc = open(&TransportOptions {
        guestinfo_dir: args.guestinfo_dir.clone(),
        timeout: None,
    });
    let stage_name = match stage {
        Stage::Early => "early",
        Stage::Late => "late",
    };
    // The early unit's stage begins the boot; a late hand-over's re-run of it
    // (`--reconfigure-network`, vmcust-imc.service) is within the boot and keeps its errors.
    let new_boot = stage == Stage::Early && !args.reconfigure_network;
    progress::stage_started(&root, stage, new_boot);
    let mut ctx = Context {
        root: root.clone(),
        rpc: rpc.as_mut(),
        settings,
        stop,
        nic_timing,
        platform,
        step_aside: step_aside.clone(),
        reconfigure_network: args.reconfigure_network,
    };
    let ending = boot::run(&mut ctx, stage);
    let (state, error, code) = match &ending {
        Err(e) => (
            RunState::Error,
            Some(format!("{e:#}")),
            ExitCode::from(super::exit_code(e)),
        ),
        Ok(Ending::Failed(f)) => (
            RunState::Error,
            Some(f.reason.clone()),
            ExitCode::from(f.exit_code()),
        ),
        Ok(Ending::Interrupted) => (RunState::Running, None, ExitCode::from(EXIT_INTERRUPTED)),
        Ok(_) if step_aside.is_some() || !ctx.settings.imc_enabled => {
            (RunState::Disabled, step_aside, ExitCode::SUCCESS)
        }
        // Between the stages the run is still going as far as tools is concerned.
        Ok(_) if stage == Stage::Early => (RunState::Running, None, ExitCode::SUCCESS),
        Ok(_) => (RunState::Done, None, ExitCode::SUCCESS),
    };
    progress::stage_ended(
        &root,
        stage,
        &StageEnd {
            state,
            error,
            recoverable: settings_warnings,
        },
    );
    crate::applied::flush_scripts(&root);
    crate::timings::record_stage(&root, stage_name, ending_word(&ending));
    // The stage's files and the records above on disk, however it ended.
    if let Err(e) = root.sync() {
        tracing::warn!("could not make this stage's files durable: {e}");
    }
    ending?;
    Ok(code)
}

/// How a stage ended, in the boot-times record.
fn ending_word(ending: &Result<Ending>) -> &'static str {
    match ending {
        Err(_) => "error",
        Ok(Ending::Nothing) => "nothing",
        Ok(Ending::Done) => "done",
        Ok(Ending::Failed(_)) => "failed",
        Ok(Ending::Interrupted) => "interrupted",
    }
}

/// Takes the root's run lock, waiting for another stage to finish; held until dropped.
fn lock(root: &Root) -> Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    let path = root.resolve(std::path::Path::new(LOCK_PATH), false)?;
    if let Some(dir) = path.parent() {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(crate::root::DIR_MODE)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o644)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns; no memory is involved.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("locking {}", path.display()));
    }
    Ok(file)
}
