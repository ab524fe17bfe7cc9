//! Applying a validated [`CloudConfig`](super::CloudConfig) to a root, module by module,
//! as cloud-init's `cc_*` modules do: pure planners turning the document and
//! the root's [`Facts`](crate::facts::Facts) into plan [`Action`](crate::plan::Action)s (write_files, host name
//! and `/etc/hosts`, time zone, NTP, CA certificates, the final message), runners for
//! what must run a program (bootcmd, runcmd, packages, growpart/resizefs, power_state,
//! the NTP and CA follow-up commands), the user-data's script parts ([`scripts`]), once-only records ([`semaphore`]) and a driver per
//! boot stage ([`driver::run_early`], [`driver::run_late`]) returning one outcome per
//! module. docs/cloud-config-modules.md describes each module.
//!
//! The accounts modules (users, groups, chpasswd, SSH keys, sudo, ssh_pwauth) are planned
//! by `src/plan/accounts`, not here.

pub(crate) mod commands;
pub(crate) mod conf_text;
pub(crate) mod disk;
pub(crate) mod driver;
pub(crate) mod error;
pub(crate) mod exec;
pub(crate) mod journal;

pub(crate) mod preview;
pub(crate) mod scripts;
pub(crate) mod semaphore;

pub use driver::{run_early, run_late, ModuleOutcome, ModuleReport, StageContext};
