//! The module table: every cloud-config module vmcust implements is one [`Module`] row of
//! [`TABLE`] — cloud-init's module name, the top-level keys it reads and their parsers,
//! how often it runs, its stage (its order is its place in the table), how it runs, and
//! what `vmcust plan` shows for it, and what it needs of the root's facts. The document
//! reader (schema check included), both stage drivers, their module lists, the plan's
//! preview and the request for the root's facts (`cloud_config::wanted`: which programs,
//! files and module facts to read) all read the table; nothing else lists the modules.
//!
//! A module's parser, planner, runner and preview live in one file named after it
//! (`ntp.rs` for `ntp`); docs/architecture.md, "Adding a cloud-config module", is the
//! recipe. The accounts keys (`users`, `groups`, `chpasswd`, …) are read here too
//! ([`accounts`]) and planned by `src/plan/accounts` with the engine's plan.

pub(crate) mod accounts;
pub(crate) mod ansible;
pub(crate) mod apt_configure;
pub(crate) mod apt_pipelining;
pub(crate) mod bootcmd;
pub(crate) mod ca_certs;
pub(crate) mod disk_setup;
pub(crate) mod final_message;
pub(crate) mod growpart;
pub(crate) mod keyboard;
pub(crate) mod locale;
pub(crate) mod mounts;
pub(crate) mod ntp;
pub(crate) mod package_update_upgrade_install;
pub(crate) mod power_state_change;
pub(crate) mod resizefs;
pub(crate) mod resolv_conf;
pub(crate) mod rh_subscription;
pub(crate) mod rsyslog;
pub(crate) mod runcmd;
pub(crate) mod set_hostname;
pub(crate) mod snap;
pub(crate) mod ssh_authkey_fingerprints;
pub(crate) mod ssh_host_keys;
pub(crate) mod ssh_keys;
pub(crate) mod timezone;
pub(crate) mod update_etc_hosts;
pub(crate) mod vendor_data;
pub(crate) mod write_files;
pub(crate) mod yum_add_repo;
pub(crate) mod zypper_add_repo;

use serde::Serialize;

use super::apply::driver::{ModuleOutcome, StageContext, Step};
use super::apply::preview::{script_lines, Look};
use super::node::Node;
use super::read::Reader;
use super::CloudConfig;
use crate::facts::Wanted;

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

impl Stage {
    /// `early` or `late` (`read` for what is no module), as `plan` shows it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Early => "early",
            Stage::Late => "late",
            Stage::Read => "read",
        }
    }
}

/// Reads one key's value into the document, reporting problems to the reader.
pub(crate) type ParseFn = fn(&mut CloudConfig, &mut Reader, &str, &Node);

/// A module's work in its stage: the driver has checked its records and hands it the
/// stage's means ([`Step`]).
pub(crate) type RunFn = fn(&Step) -> ModuleOutcome;

/// What a module would do, one line each (or why nothing), for `vmcust plan`.
pub(crate) type PreviewFn = fn(&Look) -> Vec<String>;

/// One top-level key a module reads.
pub struct Key {
    /// The key, then its aliases (`package_update`, `apt_update`).
    pub names: &'static [&'static str],
    /// Its parser.
    pub parse: ParseFn,
}

/// How a module runs.
pub enum Run {
    /// Its own work, gated by its once-only records. `reads_root`: it plans from the
    /// root's facts, which the driver reads once, before the first module that does.
    Body {
        /// The work.
        run: RunFn,
        /// Whether it needs [`Step::cc`].
        reads_root: bool,
    },
    /// Scripts, each gated by its own record ([`super::apply::scripts`]).
    Scripts(Scripts),
    /// Not run by a stage driver; says who does it.
    Elsewhere(&'static str),
}

/// A script module.
pub struct Scripts {
    /// What it says when it has no script.
    pub nothing: &'static str,
    /// The module its scripts run among, in name order, and are reported with (`runcmd`'s
    /// script is one of `scripts_user`'s files).
    pub runs_with: Option<&'static str>,
    /// The scripts' environment.
    pub env: fn(&StageContext) -> Vec<(String, String)>,
    /// The words put before each script's path (vendor-data's `prefix`).
    pub prefix: fn(&CloudConfig) -> &[String],
}

/// One cloud-config module.
pub struct Module {
    /// cloud-init's module name (`cc_<name>`), as records, reports and `plan` name it.
    pub name: &'static str,
    /// The top-level keys it reads.
    pub keys: &'static [Key],
    /// How often it runs.
    pub frequency: Frequency,
    /// When it runs; within a stage, modules run in table order.
    pub stage: Stage,
    /// How it runs.
    pub run: Run,
    /// What `plan` shows for it (none for what the engine's plan shows itself).
    pub preview: Option<PreviewFn>,
    /// The programs (by name on the fixed `PATH`) it may run or look for with this
    /// document, so that the root's facts look for those only.
    pub programs: fn(&CloudConfig) -> &'static [&'static str],
    /// What else it needs of the root's facts with this document (files, zones, what
    /// its own facts need), added to the request the facts are read for.
    pub wants: fn(&CloudConfig, &mut Wanted),
}

fn no_programs(_: &CloudConfig) -> &'static [&'static str] {
    &[]
}

fn no_wants(_: &CloudConfig, _: &mut Wanted) {}

fn no_env(_: &StageContext) -> Vec<(String, String)> {
    Vec::new()
}

fn no_prefix(_: &CloudConfig) -> &[String] {
    &[]
}

fn instance_env(ctx: &StageContext) -> Vec<(String, String)> {
    vec![("INSTANCE_ID".to_string(), ctx.instance.to_string())]
}

const fn key(names: &'static [&'static str], parse: ParseFn) -> Key {
    Key { names, parse }
}

const fn script_module(
    name: &'static str,
    frequency: Frequency,
    stage: Stage,
    scripts: Scripts,
    preview: PreviewFn,
) -> Module {
    Module {
        name,
        keys: &[],
        frequency,
        stage,
        run: Run::Scripts(scripts),
        preview: Some(preview),
        programs: no_programs,
        wants: no_wants,
    }
}

/// Every module, in run order: the early stage's, the late stage's, then what is read
/// with the user-data.
pub static TABLE: &[Module] = &[
    // cloud-init runs them while it reads the user-data, before its init modules.
    script_module(
        "boothooks",
        Frequency::PerBoot,
        Stage::Early,
        Scripts {
            nothing: "no cloud-boothook part",
            runs_with: None,
            env: instance_env,
            prefix: no_prefix,
        },
        |l| script_lines(l, "boothooks", false),
    ),
    Module {
        name: "bootcmd",
        keys: &[key(&["bootcmd"], bootcmd::parse)],
        frequency: Frequency::PerBoot,
        stage: Stage::Early,
        run: Run::Body {
            run: bootcmd::run,
            reads_root: false,
        },
        preview: Some(bootcmd::preview),
        programs: no_programs,
        wants: no_wants,
    },
    // Entries with `defer: true` run late (write_files_deferred).
    Module {
        name: "write_files",
        keys: &[key(&["write_files"], write_files::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        run: Run::Body {
            run: write_files::run_now,
            reads_root: true,
        },
        preview: Some(write_files::preview_now),
        programs: no_programs,
        wants: write_files::wants,
    },
    Module {
        name: "growpart",
        keys: &[key(&["growpart"], growpart::parse)],
        frequency: Frequency::PerBoot,
        stage: Stage::Early,
        run: Run::Body {
            run: growpart::run,
            reads_root: true,
        },
        preview: Some(growpart::preview),
        programs: growpart::programs,
        wants: no_wants,
    },
    Module {
        name: "resizefs",
        keys: &[key(&["resize_rootfs"], resizefs::parse)],
        frequency: Frequency::PerBoot,
        stage: Stage::Early,
        run: Run::Body {
            run: resizefs::run,
            reads_root: true,
        },
        preview: Some(resizefs::preview),
        programs: growpart::programs,
        wants: no_wants,
    },
    // cloud-init's init stage: growpart, resizefs, disk_setup, mounts, set_hostname.
    Module {
        name: "disk_setup",
        keys: &[
            key(&["disk_setup"], disk_setup::parse_disks),
            key(&["fs_setup"], disk_setup::parse_filesystems),
            key(&["device_aliases"], disk_setup::parse_aliases),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        run: Run::Body {
            run: disk_setup::run,
            reads_root: true,
        },
        preview: Some(disk_setup::preview),
        programs: disk_setup::programs,
        wants: disk_setup::wants,
    },
    Module {
        name: "mounts",
        keys: &[
            key(&["mounts"], mounts::parse),
            key(&["mount_default_fields"], mounts::parse_default_fields),
            key(&["swap"], mounts::parse_swap),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        run: Run::Body {
            run: mounts::run,
            reads_root: true,
        },
        preview: Some(mounts::preview),
        programs: mounts::programs,
        wants: mounts::wants,
    },
    Module {
        name: "set_hostname",
        keys: &[
            key(&["hostname"], set_hostname::hostname),
            key(&["fqdn"], set_hostname::fqdn),
            key(&["prefer_fqdn_over_hostname"], set_hostname::prefer_fqdn),
            key(&["preserve_hostname"], set_hostname::preserve),
            key(
                &["create_hostname_file"],
                set_hostname::create_hostname_file,
            ),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        run: Run::Body {
            run: set_hostname::run,
            reads_root: true,
        },
        preview: Some(set_hostname::preview),
        programs: no_programs,
        wants: no_wants,
    },
    Module {
        name: "update_etc_hosts",
        keys: &[key(&["manage_etc_hosts"], update_etc_hosts::parse)],
        frequency: Frequency::PerBoot,
        stage: Stage::Early,
        run: Run::Body {
            run: update_etc_hosts::run,
            reads_root: true,
        },
        preview: Some(update_etc_hosts::preview),
        programs: no_programs,
        wants: no_wants,
    },
    Module {
        name: "resolv_conf",
        keys: &[
            key(&["manage_resolv_conf"], resolv_conf::parse_manage),
            key(&["resolv_conf"], resolv_conf::parse),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        run: Run::Body {
            run: resolv_conf::run,
            reads_root: true,
        },
        preview: Some(resolv_conf::preview),
        programs: no_programs,
        wants: no_wants,
    },
    Module {
        name: "ca_certs",
        keys: &[key(&["ca_certs", "ca-certs"], ca_certs::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        run: Run::Body {
            run: ca_certs::run,
            reads_root: true,
        },
        preview: Some(ca_certs::preview),
        programs: ca_certs::programs,
        wants: no_wants,
    },
    // cloud-init's init stage runs rsyslog after ca_certs, before the accounts modules.
    Module {
        name: "rsyslog",
        keys: &[key(&["rsyslog"], rsyslog::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        run: Run::Body {
            run: rsyslog::run,
            reads_root: true,
        },
        preview: Some(rsyslog::preview),
        programs: rsyslog::programs,
        wants: no_wants,
    },
    // The accounts engine's modules: planned with the engine's plan, after the modules
    // above.
    Module {
        name: "users_groups",
        keys: &[
            key(&["groups"], accounts::parse_key),
            key(&["users"], accounts::parse_key),
            key(&["user"], accounts::parse_key),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        run: Run::Elsewhere("the accounts engine (src/plan/accounts)"),
        preview: None,
        programs: no_programs,
        wants: no_wants,
    },
    Module {
        name: "ssh",
        keys: &[
            key(&["ssh_authorized_keys"], accounts::parse_key),
            key(&["disable_root"], accounts::parse_key),
            key(&["disable_root_opts"], accounts::parse_key),
            key(&["ssh_deletekeys"], ssh_host_keys::parse_deletekeys),
            key(&["ssh_genkeytypes"], ssh_host_keys::parse_genkeytypes),
            key(&["ssh_quiet_keygen"], ssh_host_keys::parse_quiet_keygen),
            key(
                &["ssh_publish_hostkeys"],
                ssh_host_keys::parse_publish_hostkeys,
            ),
            key(&["ssh_keys"], ssh_keys::parse),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        // Its run writes the given host keys (`ssh_keys`); the authorized keys are the
        // accounts engine's (src/plan/accounts), deleting and making host keys clone
        // hygiene's (src/hygiene.rs), which runs before it.
        run: Run::Body {
            run: ssh_keys::run,
            reads_root: true,
        },
        preview: Some(ssh_keys::preview),
        programs: no_programs,
        wants: ssh_keys::wants,
    },
    Module {
        name: "set_passwords",
        keys: &[
            key(&["ssh_pwauth"], accounts::parse_key),
            key(&["chpasswd"], accounts::parse_key),
            key(&["password"], accounts::parse_key),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Early,
        run: Run::Elsewhere("the accounts engine (src/plan/accounts)"),
        preview: None,
        programs: no_programs,
        wants: no_wants,
    },
    // cloud-init's config stage starts with snap (Ubuntu only: skipped by distro
    // elsewhere).
    Module {
        name: "snap",
        keys: &[key(&["snap"], snap::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: snap::run,
            reads_root: true,
        },
        preview: Some(snap::preview),
        programs: snap::programs,
        wants: no_wants,
    },
    // cloud-init's config stage: keyboard, then locale (Debian, SUSE; RHEL has locale
    // only), then the repository modules, then ntp.
    Module {
        name: "keyboard",
        keys: &[key(&["keyboard"], keyboard::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: keyboard::run,
            reads_root: true,
        },
        preview: Some(keyboard::preview),
        programs: keyboard::programs,
        wants: no_wants,
    },
    Module {
        name: "locale",
        keys: &[
            key(&["locale"], locale::parse),
            key(&["locale_configfile"], locale::parse_configfile),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: locale::run,
            reads_root: true,
        },
        preview: Some(locale::preview),
        programs: locale::programs,
        wants: locale::wants,
    },
    // RHEL's config stage: locale, then rh_subscription (RHEL and Fedora only: skipped
    // by distro elsewhere), then the repository modules.
    Module {
        name: "rh_subscription",
        keys: &[key(&["rh_subscription"], rh_subscription::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: rh_subscription::run,
            reads_root: true,
        },
        preview: Some(rh_subscription::preview),
        programs: rh_subscription::programs,
        wants: no_wants,
    },
    // Debian's: apt_pipelining, then apt_configure, before ntp (which may install a
    // package) and the final stage's packages.
    Module {
        name: "apt_pipelining",
        keys: &[key(&["apt_pipelining"], apt_pipelining::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: apt_pipelining::run,
            reads_root: true,
        },
        preview: Some(apt_pipelining::preview),
        programs: apt_pipelining::programs,
        wants: no_wants,
    },
    Module {
        name: "apt_configure",
        keys: &[key(&["apt"], apt_configure::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: apt_configure::run,
            reads_root: true,
        },
        preview: Some(apt_configure::preview),
        programs: apt_configure::programs,
        wants: apt_configure::wants,
    },
    Module {
        name: "yum_add_repo",
        keys: &[
            key(&["yum_repos"], yum_add_repo::parse_repos),
            key(&["yum_repo_dir"], yum_add_repo::parse_dir),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: yum_add_repo::run,
            reads_root: true,
        },
        preview: Some(yum_add_repo::preview),
        programs: yum_add_repo::programs,
        wants: yum_add_repo::wants,
    },
    // SUSE's config stage runs it after locale and before ntp, on every boot.
    Module {
        name: "zypper_add_repo",
        keys: &[key(&["zypper"], zypper_add_repo::parse)],
        frequency: Frequency::PerBoot,
        stage: Stage::Late,
        run: Run::Body {
            run: zypper_add_repo::run,
            reads_root: true,
        },
        preview: Some(zypper_add_repo::preview),
        programs: zypper_add_repo::programs,
        wants: zypper_add_repo::wants,
    },
    Module {
        name: "ntp",
        keys: &[key(&["ntp"], ntp::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: ntp::run,
            reads_root: true,
        },
        preview: Some(ntp::preview),
        programs: ntp::programs,
        wants: ntp::wants,
    },
    Module {
        name: "timezone",
        keys: &[key(&["timezone"], timezone::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: timezone::run,
            reads_root: true,
        },
        preview: Some(timezone::preview),
        programs: no_programs,
        wants: timezone::wants,
    },
    Module {
        name: "package_update_upgrade_install",
        keys: &[
            key(&["packages"], package_update_upgrade_install::packages),
            key(
                &["package_update", "apt_update"],
                package_update_upgrade_install::update,
            ),
            key(
                &["package_upgrade", "apt_upgrade"],
                package_update_upgrade_install::upgrade,
            ),
            key(
                &["package_reboot_if_required", "apt_reboot_if_required"],
                package_update_upgrade_install::reboot_if_required,
            ),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: package_update_upgrade_install::run,
            reads_root: true,
        },
        preview: Some(package_update_upgrade_install::preview),
        programs: package_update_upgrade_install::programs,
        wants: no_wants,
    },
    Module {
        name: "write_files_deferred",
        keys: &[],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: write_files::run_deferred,
            reads_root: true,
        },
        preview: Some(write_files::preview_deferred),
        programs: no_programs,
        wants: write_files::wants,
    },
    // Debian's final stage runs ansible after write_files_deferred (and puppet, chef),
    // before the script modules; RHEL's the same way.
    Module {
        name: "ansible",
        keys: &[key(&["ansible"], ansible::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: ansible::run,
            reads_root: true,
        },
        preview: Some(ansible::preview),
        programs: ansible::programs,
        wants: no_wants,
    },
    script_module(
        "scripts_vendor",
        Frequency::PerInstance,
        Stage::Late,
        Scripts {
            nothing: "no vendor-data script part",
            runs_with: None,
            env: no_env,
            prefix: |cfg| &cfg.vendor_data.prefix,
        },
        |l| script_lines(l, "scripts_vendor", false),
    ),
    script_module(
        "scripts_per_once",
        Frequency::PerOnce,
        Stage::Late,
        Scripts {
            nothing: "no text/x-shellscript-per-once part",
            runs_with: None,
            env: no_env,
            prefix: no_prefix,
        },
        |l| script_lines(l, "scripts_per_once", false),
    ),
    script_module(
        "scripts_per_boot",
        Frequency::PerBoot,
        Stage::Late,
        Scripts {
            nothing: "no text/x-shellscript-per-boot part",
            runs_with: None,
            env: no_env,
            prefix: no_prefix,
        },
        |l| script_lines(l, "scripts_per_boot", false),
    ),
    script_module(
        "scripts_per_instance",
        Frequency::PerInstance,
        Stage::Late,
        Scripts {
            nothing: "no text/x-shellscript-per-instance part",
            runs_with: None,
            env: no_env,
            prefix: no_prefix,
        },
        |l| script_lines(l, "scripts_per_instance", false),
    ),
    Module {
        name: "runcmd",
        keys: &[key(&["runcmd"], runcmd::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Scripts(Scripts {
            nothing: "runcmd is not in the cloud-config",
            runs_with: Some("scripts_user"),
            env: no_env,
            prefix: no_prefix,
        }),
        preview: Some(runcmd::preview),
        programs: no_programs,
        wants: no_wants,
    },
    // runcmd's script is one of these: they run in name order.
    script_module(
        "scripts_user",
        Frequency::PerInstance,
        Stage::Late,
        Scripts {
            nothing: "no user-data script part",
            runs_with: None,
            env: no_env,
            prefix: no_prefix,
        },
        |l| script_lines(l, "scripts_user", true),
    ),
    // cloud-init's final stage: after the user's scripts, before final_message.
    Module {
        name: "ssh_authkey_fingerprints",
        keys: &[
            key(
                &["no_ssh_fingerprints"],
                ssh_authkey_fingerprints::parse_disable,
            ),
            key(&["authkey_hash"], ssh_authkey_fingerprints::parse_hash),
        ],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: ssh_authkey_fingerprints::run,
            reads_root: true,
        },
        preview: Some(ssh_authkey_fingerprints::preview),
        programs: no_programs,
        wants: no_wants,
    },
    Module {
        name: "final_message",
        keys: &[key(&["final_message"], final_message::parse)],
        frequency: Frequency::Always,
        stage: Stage::Late,
        run: Run::Body {
            run: final_message::run,
            reads_root: true,
        },
        preview: Some(final_message::preview),
        programs: no_programs,
        wants: no_wants,
    },
    Module {
        name: "power_state_change",
        keys: &[key(&["power_state"], power_state_change::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Late,
        run: Run::Body {
            run: power_state_change::run,
            reads_root: true,
        },
        preview: Some(power_state_change::preview),
        programs: power_state_change::programs,
        wants: no_wants,
    },
    Module {
        name: "vendor_data",
        keys: &[key(&["vendor_data"], vendor_data::parse)],
        frequency: Frequency::PerInstance,
        stage: Stage::Read,
        run: Run::Elsewhere("the user-data reader (src/cloud_config/userdata.rs)"),
        preview: None,
        programs: no_programs,
        wants: no_wants,
    },
];

/// The module reading `key` and that key's row, if any.
pub(crate) fn lookup(key: &str) -> Option<(&'static Module, &'static Key)> {
    TABLE.iter().find_map(|m| {
        m.keys
            .iter()
            .find(|k| k.names.contains(&key))
            .map(|k| (m, k))
    })
}

/// The module named `name`.
pub fn module(name: &str) -> Option<&'static Module> {
    TABLE.iter().find(|m| m.name == name)
}

/// Every key the table takes, aliases included.
pub fn keys() -> impl Iterator<Item = &'static str> {
    TABLE
        .iter()
        .flat_map(|m| m.keys.iter())
        .flat_map(|k| k.names.iter().copied())
}

/// The modules a stage driver runs in `stage`, in order.
pub(crate) fn modules_of(stage: Stage) -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|m| m.stage == stage && !matches!(m.run, Run::Elsewhere(_)))
        .map(|m| m.name)
        .collect()
}

/// Top-level keys of cloud-init's schema that vmcust does not implement: a document
/// using one is valid for cloud-init, and vmcust ends *degraded* naming it.
pub(crate) const CLOUD_INIT_ONLY: &[&str] = &[
    // cloud-init's legacy (v1) apt keys, which it converts into `apt`: write them there.
    "add_apt_repo_match",
    "apt_custom_sources_list",
    "apt_ftp_proxy",
    "apt_http_proxy",
    "apt_https_proxy",
    "apt_mirror",
    "apt_mirror_search",
    "apt_mirror_search_dns",
    "apt_preserve_sources_list",
    "apt_proxy",
    "apt_sources",
    "allow_public_ssh_keys",
    "apk_repos",
    "autoinstall",
    "byobu_by_default",
    "chef",
    "cloud_config_modules",
    "cloud_final_modules",
    "cloud_init_modules",
    "disable_ec2_metadata",
    "drivers",
    "fan",
    "grub-dpkg",
    "grub_dpkg",
    "landscape",
    "launch-index",
    "lxd",
    "mcollective",
    "migrate",
    "output",
    "phone_home",
    "puppet",
    "random_seed",
    "reporting",
    "rpi",
    "salt_minion",
    "spacewalk",
    "ssh",
    "ssh_fp_console_blacklist",
    "ssh_import_id",
    "ssh_key_console_blacklist",
    "system_info",
    "ubuntu_advantage",
    "ubuntu_pro",
    "updates",
    "version",
    "wireguard",
];

/// What the modules' unit tests share.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::cloud_config::document;
    use crate::cloud_config::read::Severity;
    use crate::plan::Action;

    /// The configuration `doc` reads to, which must read without a problem.
    pub(crate) fn clean_config(doc: &str) -> crate::cloud_config::CloudConfig {
        let (cfg, p) = document::from_text(doc);
        assert!(p.is_empty(), "{doc}: {p:?}");
        cfg
    }

    /// Each document of `table` is refused with an error whose `path: message` holds the
    /// text beside it.
    pub(crate) fn assert_refused(table: &[(&str, &str)]) {
        for (doc, want) in table {
            let (_, p) = document::from_text(doc);
            assert!(
                p.iter().any(|p| p.severity == Severity::Error
                    && format!("{}: {}", p.path, p.message).contains(want)),
                "{doc}: {p:?}"
            );
        }
    }

    /// The host name modules' actions on one line: files with their contents, the live
    /// host name.
    pub(crate) fn show_names(actions: &[Action]) -> String {
        actions
            .iter()
            .map(|a| match a {
                Action::WriteFile {
                    path,
                    contents,
                    owner: crate::plan::FileOwner::Kept,
                    ..
                } => {
                    format!("{}={:?}", path.display(), contents.display())
                }
                Action::SetHostname { name } => format!("live={name}"),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

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
        // The keys the accounts planner reads (`plan::accounts::parse`).
        let accounts_keys = [
            "users",
            "user",
            "groups",
            "chpasswd",
            "password",
            "ssh_authorized_keys",
            "ssh_pwauth",
            "disable_root",
            "disable_root_opts",
        ];
        for k in accounts_keys {
            let module = lookup(k).unwrap().0.name;
            assert!(
                ["users_groups", "ssh", "set_passwords"].contains(&module),
                "{k}"
            );
        }
        assert_eq!(lookup("apt_update").unwrap().1.names[0], "package_update");
        assert_eq!(lookup("bootcmd").unwrap().0.frequency, Frequency::PerBoot);
        assert_eq!(lookup("runcmd").unwrap().0.stage, Stage::Late);
        assert!(lookup("runcmdd").is_none());
    }

    #[test]
    fn docs_describe_every_key_and_refused_kind() {
        let doc = include_str!("../../../docs/cloud-config.md");
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
