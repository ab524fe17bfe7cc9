//! The library's surface for its own tests, benchmarks and fuzz targets: everything else in
//! the crate is `pub(crate)`. Each module here is named after the one it draws from and
//! re-exports only what the tests use, so that a test reaches no internal path and the
//! crate's items stay private by default (docs/architecture.md, "The library API"). Not a
//! stable interface for other programs: vmcust is used as the `vmcust` command.

/// What the tests use of `facts::accounts`.
pub mod account_facts {
    pub use crate::facts::accounts::{AccountDbFacts, DbFile, Salt, SALT_LEN};
}
/// What the tests use of `plan::accounts`.
pub mod accounts {
    pub use crate::plan::accounts::{
        gather, plan_accounts, salts_needed, AccountsError, AccountsPlan,
    };
}
/// What the tests use of `applied`.
pub mod applied {
    pub use crate::applied::read;
}
/// What the tests use of `apply`.
pub mod apply {
    pub use crate::apply::{apply, dry_run, Change, FAIL_AT_ENV};
}
/// What the tests use of `boot`.
pub mod boot {
    pub use crate::boot::CRASH_AFTER_ENV;
}
/// What the tests use of `boot::state`.
pub mod boot_state {
    pub use crate::boot::state::MAX_REFUSED;
}
/// What the tests use of `cloud_config::apply`.
pub mod cc_apply {
    pub use crate::cloud_config::apply::{
        run_early, run_late, ModuleOutcome, ModuleReport, StageContext,
    };
}
/// What the tests use of `cloud_config::read`.
pub mod cc_read {
    pub use crate::cloud_config::read::general;
}
/// What the tests use of `plan::accounts::check`.
pub mod check {
    pub use crate::plan::accounts::check::check;
}
/// What the tests use of `cloud_config`.
pub mod cloud_config {
    pub use crate::cloud_config::read::Severity;
    pub use crate::cloud_config::CloudConfig;
}
/// What the tests use of `cloud_init::coexist`.
pub mod coexist {
    pub use crate::cloud_init::coexist::{
        flag_in, is_vmcust_stand_in, real_cloud_init, should_step_aside, vmware_customization,
        VmwareCustomization, STAND_IN_MARKER,
    };
}
/// What the tests use of `source::config_drive`.
pub mod config_drive {
    pub use crate::source::config_drive::meta_data;
}
/// What the tests use of `engine::customize`.
pub mod customize {
    pub use crate::engine::customize::{user_data_disposition, wanted, UserDataDisposition};
}
/// What the tests use of `plan::accounts::dbfile`.
pub mod dbfile {
    pub use crate::plan::accounts::dbfile::DbEdit;
}
/// What the tests use of `cloud_config::document`.
pub mod document {
    pub use crate::cloud_config::document::{from_node, from_text};
}
/// What the tests use of `cloud_config::apply::driver`.
pub mod driver {
    pub use crate::cloud_config::apply::driver::{early_modules, late_modules};
}
/// What the tests use of `source::encoding`.
pub mod encoding {
    pub use crate::source::encoding::{decode, normalize, Encoding};
}
/// What the tests use of `cloud_init::equivalents`.
pub mod equivalents {
    pub use crate::cloud_init::equivalents::EQUIVALENTS;
}
/// What the tests use of `facts`.
pub mod facts {
    pub use crate::facts::{Current, Facts, Family, MountFacts, NetworkFacts};
}
/// What the tests use of `failure`.
pub mod failure {
    pub use crate::failure::EXIT_STATUSES;
}
/// What the tests use of `scripts::gate`.
pub mod gate {
    pub use crate::scripts::gate::{
        custom_scripts_gate, tools_conf_value, DefaultWhy, Gate, GateReason, TOOLBOX_CMD,
    };
}
/// What the tests use of `source::guestinfo`.
pub mod guestinfo {
    pub use crate::source::guestinfo::read;
}
/// What the tests use of `host::guestinfo_dir`.
pub mod guestinfo_dir {
    pub use crate::host::guestinfo_dir::GuestinfoDir;
}
/// What the tests use of `host`.
pub mod host {
    pub use crate::host::{GuestRpc, RpcError};
}
/// What the tests use of `hygiene`.
pub mod hygiene {
    pub use crate::hygiene::{refresh, refresh_host_keys};
}
/// What the tests use of `source::imc`.
pub mod imc {
    pub use crate::source::imc::customization;
}
/// What the tests use of `cloud_init::instance_data`.
pub mod instance_data {
    pub use crate::cloud_init::instance_data::{build, Inputs};
}
/// What the tests use of `cloud_config::jinja`.
pub mod jinja {
    pub use crate::cloud_config::jinja::{render, Vars};
}
/// What the tests use of `scripts::keyfile`.
pub mod keyfile {
    pub use crate::scripts::keyfile::KeyFile;
}
/// What the tests use of `cloud_config::modules::locale`.
pub mod locale {
    pub use crate::cloud_config::modules::locale::{plan_locale, supported_line, SUPPORTED};
}
/// What the tests use of `cloud_config::merge`.
pub mod merge {
    pub use crate::cloud_config::merge::{merge, Mergers};
}
/// What the tests use of `source::metadata`.
pub mod metadata {
    pub use crate::source::metadata::{customization, load_json_or_yaml, network, parse};
}
/// What the tests use of `model`.
pub mod model {
    pub use crate::model::value::{
        Gateway, InstanceId, InterfaceId, NameServer, NicAddr4, NicAddr6, SshKey, UserName,
    };
    pub use crate::model::{
        Customization, Dns, Glob, Identity, Interface, IpSettings, Ipv4Config, Ipv6Config, Network,
        RootPassword, Route,
    };
    pub use vmcust_imc::{DnsName, HostName, MacAddr, Secret};
}
/// What the tests use of `cloud_config::modules`.
pub mod modules {
    pub use crate::cloud_config::modules::{keys, module, Frequency, Module, Run, Stage, TABLE};
}
/// What the tests use of `engine::native`.
pub mod native {
    pub use crate::engine::native::plan_native;
}
/// What the tests use of `source::netconfig`.
pub mod netconfig {
    pub use crate::source::netconfig::translate;
}
/// What the tests use of `plan::network::netplan`.
pub mod netplan {
    pub use crate::plan::network::netplan::document;
}
/// What the tests use of `plan::network`.
pub mod network {
    pub use crate::plan::network::{plan_network, resolve_devices, NetworkError, Renderer, HEADER};
}
/// What the tests use of `source::config_drive::network_data`.
pub mod network_data {
    pub use crate::source::config_drive::network_data::translate;
}
/// What the tests use of `cloud_config::node`.
pub mod node {
    pub use crate::cloud_config::node::parse;
}
/// What the tests use of `plan::accounts::parse`.
pub mod parse {
    pub use crate::plan::accounts::parse::parse_accounts;
}
/// What the tests use of `cloud_config::parts`.
pub mod parts {
    pub use crate::cloud_config::parts::{read, PartKind};
}
/// What the tests use of `plan`.
pub mod plan {
    pub use crate::plan::{plan, Action, Contents, FileOwner, Plan, PlanError, PlanOptions};
}
/// What the tests use of `cloud_config::apply::preview`.
pub mod preview {
    pub use crate::cloud_config::apply::preview::{preview, to_text};
}
/// What the tests use of `cloud_config::redact`.
pub mod redact {
    pub use crate::cloud_config::redact::to_json;
}
/// What the tests use of `plan::network::renderers`.
pub mod renderers {
    pub use crate::plan::network::renderers::{detect, Chosen, TABLE};
}
/// What the tests use of `plan::accounts::request`.
pub mod request {
    pub use crate::plan::accounts::request::{
        AbsPath, AccountsRequest, Gecos, GroupName, PasswordHash, SudoRule,
    };
}
/// What the tests use of `root`.
pub mod root {
    pub use crate::root::{Existing, FileOwner, Root};
}
/// What the tests use of `host::rpctool`.
pub mod rpctool {
    pub use crate::host::rpctool::{search_path, RpcTool};
}
/// What the tests use of `cloud_config::modules::rsyslog`.
pub mod rsyslog {
    pub use crate::cloud_config::modules::rsyslog::plan_rsyslog;
}
/// What the tests use of `scripts::run`.
pub mod run {
    pub use crate::scripts::run::{
        run_script_blocking, run_script_in, Limits, Outcome, Phase, Stream, KEPT_BYTES, KEPT_LINES,
        MAX_LINE_BYTES,
    };
}
/// What the tests use of `scripts`.
pub mod scripts {
    pub use crate::scripts::gate::custom_scripts_enabled;
    pub use crate::scripts::run::RunError;
}
/// What the tests use of `source::seed_media`.
pub mod seed_media {
    pub use crate::source::seed_media::{Medium, MAX_FILE_BYTES};
}
/// What the tests use of `selinux`.
pub mod selinux {
    pub use crate::selinux::file_contexts::{FileContexts, Input, Kind};
    pub use crate::selinux::Labeler;
}
/// What the tests use of `settings`.
pub mod settings {
    pub use crate::settings::{
        known_keys, load, parse, CloudConfigUnknown, Settings, UserDataHandler,
        EARLY_UNIT_TIMEOUT_SECS,
    };
}
/// What the tests use of `plan::ssh_keys`.
pub mod ssh_keys {
    pub use crate::plan::ssh_keys::SshKeyError;
}
/// What the tests use of `scripts::stage`.
pub mod stage {
    pub use crate::scripts::stage::{stage_script, unstage, StageError, MAX_SCRIPT_BYTES};
}
/// What the tests use of `state`.
pub mod state {
    pub use crate::state::{
        instance_dir, now, read_results, read_status, write_result, write_status, InstanceResult,
        RunState, RunStatus, UserDataDisposition, ROOT_ENV, SETTINGS_PATH, USER_DATA, VENDOR_DATA,
    };
}
/// What the tests use of `timings`.
pub mod timings {
    pub use crate::timings::{read, MAX_BOOTS};
}
/// What the tests use of `cloud_config::userdata`.
pub mod userdata {
    pub use crate::cloud_config::userdata::{read, read_rendered};
}
/// What the tests use of `selinux::xattr`.
pub mod xattr {
    pub use crate::selinux::xattr::{get_path, set_path};
}
/// What the tests use of `cloud_config::modules::yum_add_repo`.
pub mod yum_add_repo {
    pub use crate::cloud_config::modules::yum_add_repo::plan_yum_repos;
}
/// What the tests use of `cloud_config::modules::zypper_add_repo`.
pub mod zypper_add_repo {
    pub use crate::cloud_config::modules::zypper_add_repo::plan_zypper;
}
