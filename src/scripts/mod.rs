//! Custom scripts (`CUSTOM-SCRIPT|SCRIPT-NAME`): whether VMware Tools allows them
//! ([`gate`]), staging the script as `customize.sh` ([`stage`]) and running it in its own
//! process group with a timeout ([`run`]). The caller owns the marker rule and the status
//! codes it reports (6 when disabled, 100 when a script fails); see `docs/custom-scripts.md`.

pub mod gate;
pub mod keyfile;
pub mod run;
pub mod stage;

pub use gate::{custom_scripts_enabled, custom_scripts_gate, Gate, GateReason};
pub use run::{run_script_blocking, Limits, Outcome, Phase, RunError, ScriptRun};
pub use stage::{stage_script, unstage, StageError, Staged};

/// `deployPkg.update.state` error code for a failed custom script (customization failed).
pub const STATUS_SCRIPT_FAILED: u32 = 100;
