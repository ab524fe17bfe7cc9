//! Custom scripts (`CUSTOM-SCRIPT|SCRIPT-NAME`): whether VMware Tools allows them
//! ([`gate`]), staging the script as `customize.sh` ([`stage`]) and running it in its own
//! process group with a timeout ([`run`]). The caller owns the marker rule and the status
//! codes it reports (6 when disabled, 100 when a script fails); see `docs/custom-scripts.md`.

pub(crate) mod gate;
pub(crate) mod keyfile;
pub(crate) mod run;
pub(crate) mod stage;
