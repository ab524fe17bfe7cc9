//! The module registry: one table saying, for each cloud-config key, which module takes
//! it, how often (cloud-init's frequency) and in which boot stage it would run, and the
//! parser that reads it into [`CloudConfig`].
//!
//! The accounts keys (`users`, `groups`, `chpasswd`, …) belong to the accounts engine:
//! its parser (`plan::accounts::node::parse_key`) checks them, reporting problems at their
//! lines, and keeps them as redacted raw nodes ([`super::accounts`]) for
//! `plan::accounts::node::request`.

use serde::Serialize;

use super::node::Node;
use super::read::Reader;
use super::CloudConfig;
use super::{certs, commands, disk, files, host, packages, power, time, vendor};

/// How often a module runs, as cloud-init's `PER_INSTANCE`, `PER_ALWAYS`, `PER_ONCE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Frequency {
    /// Once for each instance id (a clone runs it again; a reboot does not).
    PerInstance,
    /// Once on every boot (cloud-init's "always" for boot-stage modules).
    PerBoot,
    /// Once for the life of the machine, whatever its instance id.
    PerOnce,
    /// Each time its stage runs, a re-run in the same boot included (only for what is
    /// harmless to repeat, such as printing the final message).
    Always,
}

/// When a module runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// The early unit, before the network is up (cloud-init's init stage).
    Early,
    /// The late unit, after network-online (cloud-init's config and final stages).
    Late,
    /// Not a module: read while the user-data is read (`vendor_data`, `merge_how`).
    Read,
}

/// Reads one key's value into the document, reporting problems to the reader.
pub type ParseFn = fn(&mut CloudConfig, &mut Reader, &str, &Node);

/// One row of the registry.
#[derive(Clone, Copy)]
pub struct ModuleSpec {
    /// The top-level keys this row takes (aliases after the first).
    pub keys: &'static [&'static str],
    /// cloud-init's module name (`cc_<name>`).
    pub module: &'static str,
    /// How often it runs.
    pub frequency: Frequency,
    /// When it runs.
    pub stage: Stage,
    /// Its parser.
    pub parse: ParseFn,
}

/// Every key vmcust reads, in cloud-init's module order.
pub const REGISTRY: &[ModuleSpec] = &[
    row(
        &["bootcmd"],
        "bootcmd",
        Frequency::PerBoot,
        Stage::Early,
        commands::bootcmd,
    ),
    // Entries with `defer: true` run late (cloud-init's write_files_deferred).
    row(
        &["write_files"],
        "write_files",
        Frequency::PerInstance,
        Stage::Early,
        files::parse,
    ),
    row(
        &["growpart"],
        "growpart",
        Frequency::PerBoot,
        Stage::Early,
        disk::growpart,
    ),
    row(
        &["resize_rootfs"],
        "resizefs",
        Frequency::PerBoot,
        Stage::Early,
        disk::resize_rootfs,
    ),
    row(
        &["hostname"],
        "set_hostname",
        Frequency::PerInstance,
        Stage::Early,
        host::hostname,
    ),
    row(
        &["fqdn"],
        "set_hostname",
        Frequency::PerInstance,
        Stage::Early,
        host::fqdn,
    ),
    row(
        &["prefer_fqdn_over_hostname"],
        "set_hostname",
        Frequency::PerInstance,
        Stage::Early,
        host::prefer_fqdn,
    ),
    row(
        &["preserve_hostname"],
        "set_hostname",
        Frequency::PerInstance,
        Stage::Early,
        host::preserve,
    ),
    row(
        &["manage_etc_hosts"],
        "update_etc_hosts",
        Frequency::PerBoot,
        Stage::Early,
        host::manage_etc_hosts,
    ),
    row(
        &["ca_certs", "ca-certs"],
        "ca_certs",
        Frequency::PerInstance,
        Stage::Early,
        certs::parse,
    ),
    // The accounts engine's keys (see the module comment).
    row(
        &["groups"],
        "users_groups",
        Frequency::PerInstance,
        Stage::Early,
        crate::plan::accounts::node::parse_key,
    ),
    row(
        &["users"],
        "users_groups",
        Frequency::PerInstance,
        Stage::Early,
        crate::plan::accounts::node::parse_key,
    ),
    row(
        &["ssh_authorized_keys"],
        "ssh",
        Frequency::PerInstance,
        Stage::Early,
        crate::plan::accounts::node::parse_key,
    ),
    row(
        &["disable_root"],
        "ssh",
        Frequency::PerInstance,
        Stage::Early,
        crate::plan::accounts::node::parse_key,
    ),
    row(
        &["disable_root_opts"],
        "ssh",
        Frequency::PerInstance,
        Stage::Early,
        crate::plan::accounts::node::parse_key,
    ),
    row(
        &["ssh_pwauth"],
        "set_passwords",
        Frequency::PerInstance,
        Stage::Early,
        crate::plan::accounts::node::parse_key,
    ),
    row(
        &["chpasswd"],
        "set_passwords",
        Frequency::PerInstance,
        Stage::Early,
        crate::plan::accounts::node::parse_key,
    ),
    row(
        &["password"],
        "set_passwords",
        Frequency::PerInstance,
        Stage::Early,
        crate::plan::accounts::node::parse_key,
    ),
    row(
        &["ntp"],
        "ntp",
        Frequency::PerInstance,
        Stage::Late,
        time::ntp,
    ),
    row(
        &["timezone"],
        "timezone",
        Frequency::PerInstance,
        Stage::Late,
        time::timezone,
    ),
    row(
        &["packages"],
        "package_update_upgrade_install",
        Frequency::PerInstance,
        Stage::Late,
        packages::packages,
    ),
    row(
        &["package_update", "apt_update"],
        "package_update_upgrade_install",
        Frequency::PerInstance,
        Stage::Late,
        packages::update,
    ),
    row(
        &["package_upgrade", "apt_upgrade"],
        "package_update_upgrade_install",
        Frequency::PerInstance,
        Stage::Late,
        packages::upgrade,
    ),
    row(
        &["package_reboot_if_required", "apt_reboot_if_required"],
        "package_update_upgrade_install",
        Frequency::PerInstance,
        Stage::Late,
        packages::reboot_if_required,
    ),
    row(
        &["runcmd"],
        "runcmd",
        Frequency::PerInstance,
        Stage::Late,
        commands::runcmd,
    ),
    row(
        &["final_message"],
        "final_message",
        Frequency::Always,
        Stage::Late,
        power::final_message,
    ),
    row(
        &["power_state"],
        "power_state_change",
        Frequency::PerInstance,
        Stage::Late,
        power::power_state,
    ),
    row(
        &["vendor_data"],
        "vendor_data",
        Frequency::PerInstance,
        Stage::Read,
        vendor::parse,
    ),
];

const fn row(
    keys: &'static [&'static str],
    module: &'static str,
    frequency: Frequency,
    stage: Stage,
    parse: ParseFn,
) -> ModuleSpec {
    ModuleSpec {
        keys,
        module,
        frequency,
        stage,
        parse,
    }
}

/// The row taking `key`, if any.
pub fn lookup(key: &str) -> Option<&'static ModuleSpec> {
    REGISTRY.iter().find(|m| m.keys.contains(&key))
}

/// Every key the registry takes, aliases included.
pub fn keys() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().flat_map(|m| m.keys.iter().copied())
}

/// Top-level keys of cloud-init's schema that vmcust does not implement: a document
/// using one is valid for cloud-init, and vmcust ends *degraded* naming it.
pub const CLOUD_INIT_ONLY: &[&str] = &[
    "allow_public_ssh_keys",
    "ansible",
    "apk_repos",
    "apt",
    "apt_pipelining",
    "authkey_hash",
    "autoinstall",
    "byobu_by_default",
    "chef",
    "cloud_config_modules",
    "cloud_final_modules",
    "cloud_init_modules",
    "create_hostname_file",
    "device_aliases",
    "disable_ec2_metadata",
    "disk_setup",
    "drivers",
    "fan",
    "fs_setup",
    "grub-dpkg",
    "grub_dpkg",
    "keyboard",
    "landscape",
    "launch-index",
    "locale",
    "locale_configfile",
    "lxd",
    "manage_resolv_conf",
    "mcollective",
    "migrate",
    "mount_default_fields",
    "mounts",
    "no_ssh_fingerprints",
    "output",
    "phone_home",
    "puppet",
    "random_seed",
    "reporting",
    "resolv_conf",
    "rh_subscription",
    "rpi",
    "rsyslog",
    "salt_minion",
    "snap",
    "spacewalk",
    "ssh",
    "ssh_deletekeys",
    "ssh_fp_console_blacklist",
    "ssh_genkeytypes",
    "ssh_import_id",
    "ssh_key_console_blacklist",
    "ssh_keys",
    "ssh_publish_hostkeys",
    "ssh_quiet_keygen",
    "swap",
    "system_info",
    "ubuntu_advantage",
    "ubuntu_pro",
    "updates",
    "user",
    "version",
    "wireguard",
    "yum_repo_dir",
    "yum_repos",
    "zypper",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_one_row_and_none_is_also_cloud_init_only() {
        let mut seen = std::collections::BTreeSet::new();
        for k in keys() {
            assert!(seen.insert(k), "{k} in two rows");
            assert!(!CLOUD_INIT_ONLY.contains(&k), "{k} is implemented");
        }
        for k in [
            "users",
            "groups",
            "chpasswd",
            "password",
            "ssh_authorized_keys",
            "ssh_pwauth",
            "disable_root",
            "disable_root_opts",
        ] {
            let module = lookup(k).unwrap().module;
            assert!(
                ["users_groups", "ssh", "set_passwords"].contains(&module),
                "{k}"
            );
        }
        assert_eq!(lookup("apt_update").unwrap().keys[0], "package_update");
        assert_eq!(lookup("bootcmd").unwrap().frequency, Frequency::PerBoot);
        assert_eq!(lookup("runcmd").unwrap().stage, Stage::Late);
        assert!(lookup("runcmdd").is_none());
    }

    #[test]
    fn docs_describe_every_key_and_refused_kind() {
        let doc = include_str!("../../docs/cloud-config.md");
        for k in keys() {
            assert!(
                doc.contains(&format!("`{k}`")),
                "docs/cloud-config.md lacks `{k}`"
            );
        }
        for refused in [
            "#include",
            "#part-handler",
            "## template: jinja",
            "#cloud-config-archive",
            "#cloud-config-jsonp",
        ] {
            assert!(
                doc.contains(&format!("`{refused}`")),
                "docs/cloud-config.md lacks {refused}"
            );
        }
    }
}
