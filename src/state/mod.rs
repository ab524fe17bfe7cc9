//! The files vmcust keeps on disk, in one place (as cloud-init's `helpers.Paths`): every
//! path under `/var/lib/vmcust` and `/run/vmcust`, the log and the settings file, the
//! instance record ([`InstanceResult`]), the run status ([`RunStatus`]) and the time
//! stamps written in them. Every other module asks here for a path; this module sits on
//! the ground floor and imports only `model` and `root` (docs/architecture.md).
//!
//! ```text
//! /var/run/vmware-imc/                 what open-vm-tools hands over (removed once ingested)
//! /var/lib/vmcust/pending/             the ingested copy (0700, files 0600) + journal, until done
//! /var/lib/vmcust/instances/ID/        result.json, applied.json, user-data, post-script flags
//! /var/lib/vmcust/.markerfile-M.txt    the MARKER-ID marker (password and scripts once)
//! /var/lib/vmcust/sem/                 cloud-config once-per-instance/always records
//! /var/lib/vmcust/hygiene/             clone-hygiene records
//! /var/lib/vmcust/boot-times.json      the last boots' stage and step times
//! /run/vmcust/status.json, lock        the run status (`cloud-init status`), the run lock
//! /var/log/vmcust.log                  the log
//! /etc/vmcust/vmcust.conf              the settings
//! ```

pub(crate) mod instance;
pub(crate) mod status;
pub(crate) mod time;

use std::path::{Path, PathBuf};

pub(crate) use instance::add_degraded;
pub(crate) use status::STATUS_PATH;
pub use time::now;
pub use {
    instance::read_results, instance::write_result, instance::InstanceResult,
    instance::UserDataDisposition,
};
pub use {status::read_status, status::write_status, status::RunState, status::RunStatus};
pub(crate) use {time::rfc2822, time::rfc3339};

use crate::model::{FileName, InstanceId};
use crate::root::Root;

/// Directory open-vm-tools copies the customization into.
pub(crate) const IMC_DIR: &str = "/var/run/vmware-imc";
/// The spec file whose appearance means the hand-over is complete.
pub(crate) const CUST_CFG: &str = "cust.cfg";
/// NIC ordinals to reconnect, next to `cust.cfg`.
pub(crate) const NICS_TXT: &str = "nics.txt";

/// vmcust's state directory.
pub(crate) const STATE_DIR: &str = "/var/lib/vmcust";
/// The ingested customization in progress.
pub(crate) const PENDING_DIR: &str = "/var/lib/vmcust/pending";
/// Where a new pending copy is assembled before it is renamed into place.
pub(crate) const PENDING_NEW: &str = "/var/lib/vmcust/pending.new";
/// Where the pending copy is renamed to when its customization is over, then removed.
pub(crate) const PENDING_RETIRED: &str = "/var/lib/vmcust/pending.retired";
/// Hand-overs that could not be used, moved aside (with the reason) for an administrator.
pub(crate) const REFUSED_DIR: &str = "/var/lib/vmcust/refused";
/// Per-instance records.
pub(crate) const INSTANCES_DIR: &str = "/var/lib/vmcust/instances";
/// Where the early stage keeps the product UUID of the VM it last ran on.
pub(crate) const BOOT_IDENTITY: &str = "/var/lib/vmcust/boot-identity";
/// The last new instance refused on this VM, for `vmcust status`.
pub(crate) const REFUSED: &str = "/var/lib/vmcust/refused.json";
/// What the late stage waits for before publishing addresses (guestinfo metadata's
/// `wait-on-network`), written by the plan when it differs from the default.
pub(crate) const WAIT_ON_NETWORK: &str = "/var/lib/vmcust/wait-on-network";
/// The last boots' stage and step times.
pub(crate) const BOOT_TIMES: &str = "/var/lib/vmcust/boot-times.json";
/// Where cloud-config's per-once records live.
pub(crate) const ONCE_DIR: &str = "/var/lib/vmcust/sem";
/// The directory of hygiene records.
pub(crate) const HYGIENE_DIR: &str = "/var/lib/vmcust/hygiene";
/// The template's machine-id, as recorded when the template was sealed or vmcust installed.
pub(crate) const TEMPLATE_ID_RECORD: &str = "/var/lib/vmcust/hygiene/template-machine-id";
/// The machine-id the last customized instance ran with.
pub(crate) const LAST_ID_RECORD: &str = "/var/lib/vmcust/hygiene/last-machine-id";
/// The instance whose identity clone hygiene last refreshed: a second call for it does
/// nothing.
pub(crate) const INSTANCE_RECORD: &str = "/var/lib/vmcust/hygiene/instance";
/// SSH host key types removed by `vmcust clean --ssh-host-keys`, one per line.
pub(crate) const KEY_TYPES_RECORD: &str = "/var/lib/vmcust/hygiene/ssh-host-key-types";
/// Where the RANDOM passwords of `chpasswd` are written, for root alone to read.
pub(crate) const RANDOM_PASSWORDS: &str = "/var/lib/vmcust/random-passwords";
/// vmcust's own OVF environment seed file.
pub(crate) const OVF_SEED: &str = "/var/lib/vmcust/seed/ovf-env.xml";

/// Where stages take turns: the early unit, the late unit and vmcust-imc.service never
/// work on the same root at once.
pub(crate) const LOCK_PATH: &str = "/run/vmcust/lock";

/// The log, named in every status message (where an admin finds the details).
pub(crate) const LOG_PATH: &str = "/var/log/vmcust.log";
/// The log's rotated predecessor.
pub(crate) const OLD_LOG_PATH: &str = "/var/log/vmcust.log.1";
/// Where the settings file lives.
pub const SETTINGS_PATH: &str = "/etc/vmcust/vmcust.conf";

/// The environment variable naming the root the `cloud-init` stand-in reads its status
/// and settings from (default `/`).
pub const ROOT_ENV: &str = "VMCUST_ROOT";

/// In the pending copy: the journal of finished steps.
pub(crate) const JOURNAL: &str = "journal";
/// In an instance's directory: how the customization ended.
pub(crate) const RESULT_JSON: &str = "result.json";
/// In an instance's directory: what the customization applied.
pub(crate) const APPLIED_JSON: &str = "applied.json";
/// In an instance's directory: the product UUID it was customized on.
pub(crate) const CUSTOMIZED_ON: &str = "vm-uuid";
/// In an instance's directory: the post-customization script is still to run. Its
/// content is `gc` when the spec asked for `guestinfo.gc.status` updates.
pub(crate) const POST_PENDING: &str = "post-customization-pending";
/// In an instance's directory: the post-customization script was started (as
/// [`USER_DATA_STARTED`]).
pub(crate) const POST_STARTED: &str = "post-customization-started";
/// In an instance's directory: the meta-data kept for the late stage.
pub(crate) const META_DATA: &str = "meta-data";
/// In an instance's directory: the user-data kept for the late stage.
pub const USER_DATA: &str = "user-data";
/// In an instance's directory: the vendor-data kept with it.
pub const VENDOR_DATA: &str = "vendor-data";
/// In an instance's directory: the user-data was handled (run, handed over, applied
/// natively or rejected; its text says how).
pub(crate) const USER_DATA_DONE: &str = "user-data.done";
/// In an instance's directory: the user-data script was started. Written (fsynced)
/// before it runs; found without [`USER_DATA_DONE`], the script was cut off and is not
/// run a second time.
pub(crate) const USER_DATA_STARTED: &str = "user-data.started";

/// The instance's record directory; different ids never share one
/// ([`InstanceId::file_name`]).
pub fn instance_dir(id: &InstanceId) -> PathBuf {
    Path::new(INSTANCES_DIR).join(id.file_name())
}

/// The marker file of a vSphere spec's MARKER-ID.
pub(crate) fn marker_path(marker: &FileName) -> PathBuf {
    Path::new(STATE_DIR).join(format!(".markerfile-{marker}.txt"))
}

/// The text of the [`WAIT_ON_NETWORK`] record (in `host::addresses::Wait::record`'s
/// form); empty when there is none or it cannot be read, which means any address will do.
pub(crate) fn read_wait_on_network(root: &Root) -> String {
    root.read_text_capped(Path::new(WAIT_ON_NETWORK), 64, "wait-on-network record")
        .ok()
        .flatten()
        .unwrap_or_default()
}
