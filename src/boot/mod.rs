//! `vmcust run`: the boot-time engine — wait for the customization, apply it once per
//! instance, report to vCenter, survive kills and reboots.
//!
//! Two stages, run by two systemd units (see `docs/boot.md`): `early` before networking
//! (identity, network, password, pre-customization script, NIC connect, final state) and
//! `late` after the network is online (post-customization script, user-data).

pub(crate) mod apply_step;
pub(crate) mod cloud_config;
pub(crate) mod early;
pub(crate) mod journal;
pub(crate) mod late;
pub(crate) mod ovf_and_guestinfo;
pub(crate) mod progress;
pub(crate) mod reconfigure_network;
pub(crate) mod state;
pub(crate) mod stop;
pub(crate) mod vm_identity;
pub(crate) mod wait;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::host::platform::Platform;
use crate::host::GuestRpc;
use crate::model::InstanceId;
use crate::report::NicTiming;
use crate::root::Root;
use crate::scripts::run::{run_script_in, Limits, Outcome, Phase};
use crate::settings::Settings;

/// The two boot stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Stage {
    /// Before networking: identity, network, password, pre-script, report.
    Early,
    /// After the network is online: post-script, user-data.
    Late,
}

/// How a stage ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// There was nothing to do (no customization, or it is not ours to do).
    Nothing,
    /// A customization was carried out and reported.
    Done,
    /// A customization failed; it was reported and nothing half-done was left.
    Failed(crate::failure::Failure),
    /// SIGTERM arrived; progress is journaled and the next boot resumes.
    Interrupted,
}

/// Everything a stage works with.
pub(crate) struct Context<'a> {
    /// The system being customized.
    pub root: Root,
    /// The host.
    pub rpc: &'a mut dyn GuestRpc,
    /// The settings file's values.
    pub settings: Settings,
    /// Set by SIGTERM.
    pub stop: &'a AtomicBool,
    /// Attempts and waits of the NIC handshake (shortened in tests).
    pub nic_timing: NicTiming,
    /// DMI facts (default instance id).
    pub platform: Platform,
    /// Why the IMC spec is left to a real cloud-init, if it is.
    pub step_aside: Option<String>,
    /// The network is up already (a late hand-over): make the running stack take the new
    /// configuration after applying it.
    pub reconfigure_network: bool,
}

impl Ending {
    /// A failure of `kind`.
    pub(crate) fn failed(kind: crate::failure::FailureKind, reason: impl Into<String>) -> Ending {
        Ending::Failed(crate::failure::Failure::new(kind, reason))
    }
}

impl Context<'_> {
    /// Whether SIGTERM arrived.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// The instance id when the source names none: the lower-cased DMI product UUID.
    pub(crate) fn default_instance_id(&self) -> InstanceId {
        self.platform.instance_id_or_default()
    }

    /// How to plan: the settings' renderer, SSH user and clone hygiene, and whether the
    /// network is up already (then the plan's network reload asks the stack to take the
    /// new files).
    pub(crate) fn options(&self) -> crate::engine::customize::Options<'_> {
        let mut opts = crate::engine::customize::Options::from_settings(&self.settings, None);
        opts.network_up = self.reconfigure_network;
        opts
    }
}

/// Runs `stage`. What it wrote is on disk once the caller syncs the root (`vmcust run`
/// does, after its own last records) or drops its last clone.
pub(crate) fn run(ctx: &mut Context, stage: Stage) -> anyhow::Result<Ending> {
    match stage {
        Stage::Early => {
            let ending = early::run(ctx)?;
            if matches!(ending, Ending::Interrupted) {
                return Ok(ending);
            }
            // The current instance's cloud-config: bootcmd on every boot, the rest once.
            Ok(cloud_config::early(ctx)?.unwrap_or(ending))
        }
        Stage::Late => late::run(ctx),
    }
}

pub(crate) use crate::scripts::run::ScriptEnd;

/// Runs a staged script for `phase` with the settings' timeout, inside the root being
/// customized (sealed inside it when it is not `/`); the whole process group is killed on timeout
/// or SIGTERM.
pub(crate) fn run_script(ctx: &Context, script: &Path, phase: Phase) -> ScriptEnd {
    let limits = Limits {
        timeout: ctx.settings.script_timeout,
        ..Limits::default()
    };
    let started = Instant::now();
    let end = match run_script_in(&ctx.root, script, phase, limits, ctx.stop) {
        Ok(run) => match run.outcome {
            Outcome::Exited(0) => ScriptEnd::Succeeded,
            Outcome::Cancelled => ScriptEnd::Interrupted,
            Outcome::Exited(code) => {
                ScriptEnd::Failed(format!("{} script exited with status {code}", phase.name()))
            }
            Outcome::Signalled(sig) => ScriptEnd::Failed(format!(
                "{} script was killed by signal {sig}",
                phase.name()
            )),
            Outcome::TimedOut => ScriptEnd::Failed(format!(
                "{} script ran longer than {} s and was stopped",
                phase.name(),
                limits.timeout.as_secs()
            )),
        },
        Err(e) => ScriptEnd::Failed(e.to_string()),
    };
    crate::applied::script_ran(phase.name(), script, &end, started.elapsed());
    // Each script is a step of its own in `analyze`, named by its phase and file.
    crate::timings::step(
        &format!(
            "{} script {}",
            phase.name(),
            script
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        ),
        started,
    );
    end
}

/// Sleeps for `d` unless `stop` is set first; returns false when interrupted.
pub(crate) fn sleep_unless(stop: &AtomicBool, d: Duration) -> bool {
    let end = Instant::now() + d;
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
}

/// Environment variable naming a journal step after which the process kills itself with
/// SIGKILL: the tests' way to stop a run at every step exactly as a power cut would.
pub const CRASH_AFTER_ENV: &str = "VMCUST_TEST_CRASH_AFTER";

/// Called right after each journal step is recorded (see [`CRASH_AFTER_ENV`]).
pub(crate) fn crash_point(step: journal::Step) {
    if std::env::var(CRASH_AFTER_ENV).is_ok_and(|v| v == step.name()) {
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}

/// Runs `f` and logs, at debug level, how long the step `what` took: the boot profile
/// (`VMCUST_LOG=debug` or `[log] level = debug`) that shows where boot time goes.
pub(crate) fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    crate::timings::step(what, start);
    tracing::debug!(
        "{what} took {:.3} ms",
        start.elapsed().as_secs_f64() * 1000.0
    );
    out
}
