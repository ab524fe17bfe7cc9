//! cloud-config, read natively: user-data split into parts ([`parts`]), each
//! `#cloud-config` part read as YAML with line numbers ([`node`]), the parts merged with
//! cloud-init's rules and vendor-data put under them ([`merge`], [`userdata`]), and the
//! result validated into a [`CloudConfig`] through the module table ([`modules`]).
//!
//! Nothing here applies anything to a root: it reads, validates, merges and describes.
//! `vmcust schema FILE` (src/cli/schema.rs) prints the problems found; docs/cloud-config.md
//! lists every key.

pub(crate) mod apply;
pub(crate) mod commands;
pub(crate) mod decode;
pub(crate) mod document;
pub(crate) mod instead;
pub(crate) mod jinja;
pub(crate) mod merge;
pub(crate) mod modules;
pub(crate) mod node;
pub(crate) mod parts;
pub(crate) mod read;
pub(crate) mod redact;
pub(crate) mod userdata;
pub(crate) mod wanted;

use serde::Serialize;

use modules::{
    accounts, apt_configure, ca_certs, disk_setup, growpart, mounts, ntp,
    package_update_upgrade_install as packages, power_state_change as power, resizefs, resolv_conf,
    update_etc_hosts, vendor_data, write_files,
};

use crate::model::{HostName, Timezone};

pub(crate) use document::UnknownKey;
pub(crate) use read::{Problem, Severity};

/// A validated cloud-config document: every key vmcust implements, typed, with
/// cloud-init's defaults; the accounts keys raw (redacted when shown); the keys it does
/// not implement listed.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CloudConfig {
    /// `write_files`, in order.
    pub write_files: Vec<write_files::WriteFile>,
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
    /// `create_hostname_file` (unset: true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create_hostname_file: Option<bool>,
    /// `manage_etc_hosts` (unset: false).
    pub manage_etc_hosts: Option<update_etc_hosts::ManageEtcHosts>,
    /// `manage_resolv_conf` (unset: false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manage_resolv_conf: Option<bool>,
    /// `resolv_conf`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolv_conf: Option<resolv_conf::ResolvConf>,
    /// `timezone`.
    pub timezone: Option<Timezone>,
    /// `ntp`.
    pub ntp: Option<ntp::Ntp>,
    /// `packages`.
    pub packages: Vec<packages::Package>,
    /// `package_update` (or `apt_update`).
    pub package_update: bool,
    /// `package_upgrade` (or `apt_upgrade`).
    pub package_upgrade: bool,
    /// `package_reboot_if_required` (or `apt_reboot_if_required`).
    pub package_reboot_if_required: bool,
    /// `ca_certs`.
    pub ca_certs: Option<ca_certs::CaCerts>,
    /// `apt_pipelining`: the depth to write, `None` inside for apt's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apt_pipelining: Option<Option<u8>>,
    /// `apt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apt: Option<apt_configure::Apt>,
    /// `growpart` (unset: cloud-init's default, mode auto on `/`).
    pub growpart: Option<growpart::Growpart>,
    /// `resize_rootfs` (unset: true).
    pub resize_rootfs: Option<resizefs::ResizeRootfs>,
    /// `disk_setup` (cloud-init's `cc_disk_setup`), in document order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_setup: Option<Vec<disk_setup::Disk>>,
    /// `fs_setup`, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fs_setup: Option<Vec<disk_setup::Filesystem>>,
    /// `device_aliases`: name → `/dev/` path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_aliases: Option<std::collections::BTreeMap<String, String>>,
    /// `mounts` (cloud-init's `cc_mounts`), in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mounts: Option<Vec<mounts::Entry>>,
    /// `mount_default_fields` (unset: cloud-init's, with vmcust's unit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mount_default_fields: Option<Vec<Option<String>>>,
    /// `swap`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap: Option<mounts::Swap>,
    /// `power_state`.
    pub power_state: Option<power::PowerState>,
    /// `final_message`.
    pub final_message: Option<String>,
    /// `vendor_data`.
    pub vendor_data: vendor_data::VendorData,
    /// `rsyslog`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rsyslog: Option<modules::rsyslog::Rsyslog>,
    /// `keyboard`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyboard: Option<modules::keyboard::Keyboard>,
    /// `locale`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<modules::locale::LocaleKey>,
    /// `locale_configfile`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale_configfile: Option<String>,
    /// `yum_repos`, in document order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yum_repos: Option<Vec<modules::yum_add_repo::YumRepo>>,
    /// `yum_repo_dir` (unset: `/etc/yum.repos.d`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yum_repo_dir: Option<String>,
    /// `zypper`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zypper: Option<modules::zypper_add_repo::Zypper>,
    /// `snap` (Ubuntu only, as cloud-init).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snap: Option<modules::snap::Snap>,
    /// `ansible`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ansible: Option<modules::ansible::Ansible>,
    /// `rh_subscription` (RHEL and Fedora only, as cloud-init; its password never
    /// serializes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rh_subscription: Option<modules::rh_subscription::RhSubscription>,
    /// The accounts engine's keys, raw.
    pub accounts: Vec<accounts::RawModule>,
    /// `ssh_deletekeys`, `ssh_genkeytypes`: what clone hygiene does with the host keys.
    #[serde(skip_serializing_if = "modules::ssh_host_keys::HostKeyWish::is_empty")]
    pub ssh_host_keys: modules::ssh_host_keys::HostKeyWish,
    /// `ssh_keys`: given host keys (private keys shown redacted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_keys: Option<modules::ssh_keys::GivenHostKeys>,
    /// `no_ssh_fingerprints` (unset: false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_ssh_fingerprints: Option<bool>,
    /// `authkey_hash` (unset: sha256).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authkey_hash: Option<String>,
    /// What vmcust does not apply: keys it does not implement (top level and inside
    /// modules) and values cloud-init takes that it cannot apply (`ntp.ntp_client`); the
    /// rest applies and the customization ends *degraded* naming them.
    pub unknown: Vec<UnknownKey>,
}
