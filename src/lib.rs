//! vmcust: VMware/OVF guest customization engine for Linux guests.
//!
//! The job flows through five stages (see `docs/architecture.md`): sources are read into
//! one [`model::Customization`], [`plan::plan`] turns it and the target's
//! [`facts::Facts`] into a [`plan::Plan`], and [`apply::apply`] carries the plan out
//! on a [`root::Root`].

pub mod applied;
pub mod apply;
pub mod boot;
mod clean;
mod cli;
pub mod cloud_config;
pub mod cloud_init;
pub mod engine;
pub mod facts;
pub mod failure;
pub mod host;
pub mod hygiene;
mod log_file;
pub mod model;
pub mod plan;
mod process;
mod report;
pub mod root;
pub mod scripts;
pub mod selinux;
pub mod settings;
pub mod source;
pub mod state;
pub mod timings;
pub(crate) mod yaml;

pub use cli::main;

/// The file mode creation mask vmcust runs with, whatever its caller's (`main` sets it
/// first thing): what a mode given explicitly leaves to the mask, and what the programs it
/// runs create, come out as on a system's usual 022, never world-writable (docs/security.md,
/// "Modes").
pub const UMASK: u32 = 0o022;
