//! cloud-config, read natively: user-data split into parts ([`parts`]), each
//! `#cloud-config` part read as YAML with line numbers ([`node`]), the parts merged with
//! cloud-init's rules and vendor-data put under them ([`merge`], [`userdata`]), and the
//! result validated into a [`CloudConfig`] through the module registry ([`registry`]).
//!
//! Nothing here applies anything to a root: it reads, validates, merges and describes.
//! `vmcust schema FILE` (src/cli/schema.rs) prints the problems found; docs/cloud-config.md
//! lists every key.

pub mod accounts;
pub mod apply;
pub mod certs;
pub mod commands;
pub mod decode;
pub mod disk;
pub mod document;
pub mod files;
pub mod host;
pub mod jinja;
pub mod merge;
pub mod node;
pub mod packages;
pub mod parts;
pub mod power;
pub mod read;
pub mod redact;
pub mod registry;
pub mod time;
pub mod userdata;
pub mod vendor;

use serde::Serialize;

use crate::model::{HostName, Timezone};

pub use document::UnknownKey;
pub use read::{Problem, Severity};

/// A validated cloud-config document: every key vmcust implements, typed, with
/// cloud-init's defaults; the accounts keys raw (redacted when shown); the keys it does
/// not implement listed.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CloudConfig {
    /// `write_files`, in order.
    pub write_files: Vec<files::WriteFile>,
    /// `bootcmd`.
    pub bootcmd: Vec<commands::Command>,
    /// `runcmd`.
    pub runcmd: Vec<commands::Command>,
    /// `hostname`.
    pub hostname: Option<HostName>,
    /// `fqdn`.
    pub fqdn: Option<HostName>,
    /// `prefer_fqdn_over_hostname` (unset: the distribution decides).
    pub prefer_fqdn_over_hostname: Option<bool>,
    /// `preserve_hostname` (default false).
    pub preserve_hostname: bool,
    /// `manage_etc_hosts` (unset: false).
    pub manage_etc_hosts: Option<host::ManageEtcHosts>,
    /// `timezone`.
    pub timezone: Option<Timezone>,
    /// `ntp`.
    pub ntp: Option<time::Ntp>,
    /// `packages`.
    pub packages: Vec<packages::Package>,
    /// `package_update` (or `apt_update`).
    pub package_update: bool,
    /// `package_upgrade` (or `apt_upgrade`).
    pub package_upgrade: bool,
    /// `package_reboot_if_required` (or `apt_reboot_if_required`).
    pub package_reboot_if_required: bool,
    /// `ca_certs`.
    pub ca_certs: Option<certs::CaCerts>,
    /// `growpart` (unset: cloud-init's default, mode auto on `/`).
    pub growpart: Option<disk::Growpart>,
    /// `resize_rootfs` (unset: true).
    pub resize_rootfs: Option<disk::ResizeRootfs>,
    /// `power_state`.
    pub power_state: Option<power::PowerState>,
    /// `final_message`.
    pub final_message: Option<String>,
    /// `vendor_data`.
    pub vendor_data: vendor::VendorData,
    /// The accounts engine's keys, raw.
    pub accounts: Vec<accounts::RawModule>,
    /// Keys vmcust does not implement (top level and inside modules): the customization
    /// ends *degraded* naming them.
    pub unknown: Vec<UnknownKey>,
}
