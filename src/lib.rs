//! vmcust: VMware/OVF guest customization engine for Linux guests.
//!
//! The job flows through five stages (see `docs/architecture.md`): sources are read into
//! one [`model::Customization`], [`plan::plan`] turns it and the target's
//! [`facts::Facts`] into a [`plan::Plan`], and [`apply::apply`] carries the plan out
//! on a [`root::Root`].

// Items are `pub(crate)` unless the test API (`test_api`) re-exports them: a `pub` item
// nothing outside the crate can reach is an error, so the surface stays what it says.
#![deny(unreachable_pub)]

mod applied;
mod apply;
mod boot;
mod clean;
mod cli;
mod cloud_config;
mod cloud_init;
mod engine;
mod facts;
mod failure;
mod host;
mod hygiene;
mod log_file;
mod model;
mod plan;
mod process;
mod report;
mod root;
mod scripts;
mod selinux;
mod settings;
mod source;
mod state;
pub mod test_api;
mod timings;
mod yaml;

pub use cli::main;

/// The file mode creation mask vmcust runs with, whatever its caller's (`main` sets it
/// first thing): what a mode given explicitly leaves to the mask, and what the programs it
/// runs create, come out as on a system's usual 022, never world-writable (docs/security.md,
/// "Modes").
pub const UMASK: u32 = 0o022;
