//! Clone hygiene: a clone of a template must not keep the template's SSH host keys or
//! machine-id.
//!
//! [`plan`] reads what is to be done for a new instance (`vmcust plan` prints it, as the
//! boot steps' `hygiene`), and [`carry_out`] does it in the early stage once the
//! customization applied, before the network starts (systemd-networkd and
//! NetworkManager derive the DHCP client identity from `/etc/machine-id`):
//!
//! - **SSH host keys**: the keys of every type the template had are replaced by fresh ones
//!   (`ssh-keygen`, types only, as `ssh-keygen -A` would but never adding a type). "The
//!   types the template had" are the types present now plus those `vmcust clean
//!   --ssh-host-keys` removed and recorded in [`KEY_TYPES_RECORD`], so a template sealed
//!   without keys still boots clones that have them.
//! - **machine-id**: replaced only when the clone still carries an id known to be the
//!   template's: the one recorded in [`TEMPLATE_ID_RECORD`] (written by `vmcust clean` and
//!   by the packages' install scripts) or the one the previous instance ran with
//!   ([`LAST_ID_RECORD`], written here at every refresh). An empty or `uninitialized`
//!   file is left to systemd, which generates one at boot.
//!
//! The records live in `/var/lib/vmcust/hygiene/`; docs/boot.md, "Clone hygiene".

use std::io::Read as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{bail, Context as _, Result};
use serde::Serialize;

use crate::process::{self, Cmd, Ended, Output};
use crate::root::{Existing, Root};
use crate::settings::Settings;
use crate::state::{INSTANCE_RECORD, KEY_TYPES_RECORD, LAST_ID_RECORD, TEMPLATE_ID_RECORD};

/// systemd's machine-id file.
pub(crate) const MACHINE_ID: &str = "/etc/machine-id";
/// D-Bus's copy of the machine-id (a symlink to /etc/machine-id on most distributions).
pub(crate) const DBUS_MACHINE_ID: &str = "/var/lib/dbus/machine-id";
/// Where OpenSSH keeps its host keys.
pub(crate) const SSH_DIR: &str = "/etc/ssh";
/// The host key types OpenSSH knows, in `ssh-keygen -A` order.
pub(crate) const KEY_TYPES: &[&str] = &["rsa", "ecdsa", "ed25519", "dsa"];

/// The private host key file of a type.
pub(crate) fn host_key_path(key_type: &str) -> PathBuf {
    Path::new(SSH_DIR).join(format!("ssh_host_{key_type}_key"))
}

/// The host key types whose private key exists in the root now.
pub(crate) fn present_key_types(root: &Root) -> Vec<&'static str> {
    KEY_TYPES
        .iter()
        .copied()
        .filter(|t| root.is_file(&host_key_path(t)))
        .collect()
}

/// Reads the root's machine-id: `None` when missing, empty or `uninitialized` (systemd
/// generates one at boot then).
pub(crate) fn machine_id(root: &Root) -> Result<Option<String>> {
    let text = root
        .read(Path::new(MACHINE_ID))
        .with_context(|| format!("reading {MACHINE_ID}"))?;
    let id = text
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|s| !s.is_empty() && s != "uninitialized");
    Ok(id)
}

fn read_record(root: &Root, path: &str) -> Result<Option<String>> {
    let text = root
        .read(Path::new(path))
        .with_context(|| format!("reading {path}"))?;
    Ok(text
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|s| !s.is_empty()))
}

fn write_record(root: &Root, path: &str, value: &str) -> Result<()> {
    root.write_file(Path::new(path), format!("{value}\n").as_bytes(), 0o600)
        .with_context(|| format!("writing {path}"))
}

/// Records the template's identity before it is sealed: its machine-id (unless cleared)
/// and its SSH host key types (`removed_key_types` adds types about to be removed).
/// Returns the record files written.
pub(crate) fn record_template(root: &Root, removed_key_types: &[&str]) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    if let Some(id) = machine_id(root)? {
        write_record(root, TEMPLATE_ID_RECORD, &id)?;
        written.push(PathBuf::from(TEMPLATE_ID_RECORD));
    }
    let mut types: Vec<String> = recorded_key_types(root)?;
    for t in present_key_types(root)
        .into_iter()
        .chain(removed_key_types.iter().copied())
    {
        if !types.iter().any(|have| have == t) {
            types.push(t.to_string());
        }
    }
    if !types.is_empty() {
        write_record(root, KEY_TYPES_RECORD, &types.join("\n"))?;
        written.push(PathBuf::from(KEY_TYPES_RECORD));
    }
    Ok(written)
}

/// The key types recorded by `vmcust clean`, known types only.
fn recorded_key_types(root: &Root) -> Result<Vec<String>> {
    Ok(read_record(root, KEY_TYPES_RECORD)?
        .map(|text| {
            text.lines()
                .map(str::trim)
                .filter(|t| KEY_TYPES.contains(t))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default())
}

/// Which parts of clone hygiene are switched on (`[hygiene]` in the settings file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Switches {
    /// `[hygiene] machine_id`.
    pub machine_id: bool,
    /// `[hygiene] ssh_host_keys`.
    pub ssh_host_keys: bool,
}

impl Switches {
    /// The switches as `settings` has them.
    pub(crate) fn from_settings(settings: &Settings) -> Switches {
        Switches {
            machine_id: settings.hygiene_machine_id,
            ssh_host_keys: settings.hygiene_ssh_host_keys,
        }
    }
}

/// What clone hygiene does for one instance, read from the root before anything
/// changes: `vmcust plan` prints it, the early stage carries it out ([`carry_out`]) once
/// the customization applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct HygienePlan {
    /// The instance it is done for.
    pub instance_id: String,
    /// False when this instance had its identity refreshed already (a reboot, a resumed
    /// run): then nothing is done.
    pub new_instance: bool,
    /// What happens to `/etc/machine-id`.
    pub machine_id: MachineIdPlan,
    /// What happens to the SSH host keys.
    pub ssh_host_keys: HostKeysPlan,
    /// Every file replaced (or, for a DSA key `ssh-keygen` can no longer make, removed).
    pub files: Vec<PathBuf>,
    /// Host key types whose keys are removed, not replaced: the cloud-config's
    /// `ssh_deletekeys` with `ssh_genkeytypes` not naming them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed_key_types: Vec<String>,
    /// The cloud-config gives host keys (`ssh_keys`): none is made, the `ssh` module
    /// writes them after this.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub given_keys: bool,
}

pub(crate) use crate::cloud_config::modules::ssh_host_keys::HostKeyWish;
pub(crate) use crate::cloud_config::modules::ssh_host_keys::GEN_KEY_TYPES;

/// What happens to the machine-id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum MachineIdPlan {
    /// Switched off by `[hygiene] machine_id`: nothing, not even the record.
    Off,
    /// There is none yet (missing, empty or `uninitialized`): systemd makes one at boot.
    Missing,
    /// Not known to be the template's: kept, and recorded as this instance's.
    Keep,
    /// The template's (or the previous instance's): replaced, D-Bus's own copy of it too
    /// when `dbus_copy`.
    Replace {
        /// `/var/lib/dbus/machine-id` is a file holding the same id.
        dbus_copy: bool,
    },
}

/// What happens to the SSH host keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum HostKeysPlan {
    /// Switched off by `[hygiene] ssh_host_keys`.
    Off,
    /// The template has none, and none were recorded.
    None,
    /// Fresh keys of these types replace the template's.
    Replace(Vec<String>),
}

impl HygienePlan {
    /// The files [`carry_out`] may write, so that the boot can say of each whether it
    /// was created or replaced.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        let mut paths = vec![PathBuf::from(MACHINE_ID), PathBuf::from(DBUS_MACHINE_ID)];
        if let HostKeysPlan::Replace(types) = &self.ssh_host_keys {
            for t in types {
                let key = host_key_path(t);
                paths.push(key.with_extension("pub"));
                paths.push(key);
            }
        }
        paths
    }

    /// One line for people (`vmcust plan`).
    pub(crate) fn describe(&self) -> String {
        if !self.new_instance {
            return format!(
                "clone hygiene: done for instance {} already, nothing to do",
                self.instance_id
            );
        }
        let id = match &self.machine_id {
            MachineIdPlan::Off => "machine-id left alone ([hygiene] machine_id = false)",
            MachineIdPlan::Missing => "no machine-id yet (systemd makes one at boot)",
            MachineIdPlan::Keep => "machine-id kept (not known to be the template's)",
            MachineIdPlan::Replace { .. } => {
                "a new machine-id (this one is the template's or the previous instance's)"
            }
        };
        let keys = match &self.ssh_host_keys {
            HostKeysPlan::Off => {
                "SSH host keys left alone ([hygiene] ssh_host_keys = false)".into()
            }
            HostKeysPlan::None if self.given_keys => {
                "no SSH host keys made (the cloud-config gives them: ssh_keys)".into()
            }
            HostKeysPlan::None => "no SSH host keys to replace".into(),
            HostKeysPlan::Replace(types) => format!("fresh SSH host keys ({})", types.join(", ")),
        };
        let keys = if self.removed_key_types.is_empty() {
            keys
        } else {
            format!(
                "{keys}; SSH host keys removed ({}: ssh_deletekeys, not in {})",
                self.removed_key_types.join(", "),
                if self.given_keys {
                    "ssh_keys"
                } else {
                    "ssh_genkeytypes"
                }
            )
        };
        format!(
            "clone hygiene for new instance {}: {id}; {keys}",
            self.instance_id
        )
    }
}

/// Reads what clone hygiene would do for instance `instance_id` with `switches`; changes
/// nothing.
pub(crate) fn plan(root: &Root, switches: Switches, instance_id: &str) -> Result<HygienePlan> {
    plan_with(root, switches, instance_id, None)
}

/// [`plan`] with what the cloud-config asks of the host keys (`ssh_deletekeys`,
/// `ssh_genkeytypes`): with a `wish`, cloud-init's rules pick the types instead of "the
/// types the template had" — all given (or default) types fresh while deleting, only the
/// missing ones while not, and the other types' keys removed while deleting; with
/// `ssh_keys` none is made, and while deleting every type's but the given private keys'
/// is removed.
pub(crate) fn plan_with(
    root: &Root,
    switches: Switches,
    instance_id: &str,
    wish: Option<&HostKeyWish>,
) -> Result<HygienePlan> {
    let mut out = HygienePlan {
        instance_id: instance_id.to_string(),
        new_instance: read_record(root, INSTANCE_RECORD)?.as_deref() != Some(instance_id),
        machine_id: MachineIdPlan::Off,
        ssh_host_keys: HostKeysPlan::Off,
        files: Vec::new(),
        removed_key_types: Vec::new(),
        given_keys: wish.is_some_and(|w| w.given.is_some()),
    };
    if !out.new_instance {
        return Ok(out);
    }
    if switches.machine_id {
        out.machine_id = plan_machine_id(root)?;
        if let MachineIdPlan::Replace { dbus_copy } = out.machine_id {
            out.files.push(PathBuf::from(MACHINE_ID));
            if dbus_copy {
                out.files.push(PathBuf::from(DBUS_MACHINE_ID));
            }
        }
    }
    if switches.ssh_host_keys {
        let types = match wish.filter(|w| !w.is_empty()) {
            None => key_types_to_replace(root)?,
            Some(w) => {
                let want: Vec<String> = w
                    .types
                    .clone()
                    .unwrap_or_else(|| GEN_KEY_TYPES.iter().map(|t| t.to_string()).collect());
                let present = present_key_types(root);
                if let Some(given) = &w.given {
                    // `ssh_keys`: nothing is made; while deleting, every type but the
                    // given private keys' goes (those the `ssh` module writes over).
                    if w.delete.unwrap_or(true) {
                        out.removed_key_types = present
                            .iter()
                            .filter(|t| !given.iter().any(|g| g == *t))
                            .map(|t| t.to_string())
                            .collect();
                    }
                    Vec::new()
                } else if w.delete.unwrap_or(true) {
                    out.removed_key_types = present
                        .iter()
                        .filter(|t| !want.iter().any(|w| w == *t))
                        .map(|t| t.to_string())
                        .collect();
                    want
                } else {
                    want.into_iter()
                        .filter(|t| !present.contains(&t.as_str()))
                        .collect()
                }
            }
        };
        for t in &types {
            let key = host_key_path(t);
            let pub_key = key.with_extension("pub");
            // In the order carry_out reports them: the private key first.
            out.files.extend([key, pub_key]);
        }
        for t in &out.removed_key_types {
            let key = host_key_path(t);
            let pub_key = key.with_extension("pub");
            out.files.extend([key, pub_key]);
        }
        out.ssh_host_keys = if types.is_empty() {
            HostKeysPlan::None
        } else {
            HostKeysPlan::Replace(types)
        };
    }
    Ok(out)
}

/// Carries out `plan` (made by [`plan`] on the same root): returns the files changed
/// (paths inside the root). `stop` (SIGTERM) ends a running `ssh-keygen`.
pub(crate) fn carry_out(
    root: &Root,
    plan: &HygienePlan,
    stop: &AtomicBool,
) -> Result<Vec<PathBuf>> {
    if !plan.new_instance {
        return Ok(Vec::new());
    }
    let mut changed = Vec::new();
    match plan.machine_id {
        MachineIdPlan::Off | MachineIdPlan::Missing => {}
        MachineIdPlan::Keep => {
            if let Some(id) = machine_id(root)? {
                write_record(root, LAST_ID_RECORD, &id)?;
            }
        }
        MachineIdPlan::Replace { dbus_copy } => {
            changed.extend(replace_machine_id(root, dbus_copy)?)
        }
    }
    if let HostKeysPlan::Replace(types) = &plan.ssh_host_keys {
        changed.extend(replace_host_keys(root, types, stop)?);
    }
    changed.extend(remove_host_keys(root, &plan.removed_key_types)?);
    write_record(root, INSTANCE_RECORD, &plan.instance_id)?;
    Ok(changed)
}

/// Gives instance `instance_id` its own identity, each part as switched on in
/// `settings`: [`plan`] then [`carry_out`]. Returns the files changed. It does its work
/// once per instance ([`INSTANCE_RECORD`]), so calling it again on a later boot or on a
/// resumed run of the same instance changes nothing.
pub fn refresh(root: &Root, settings: &Settings, instance_id: &str) -> Result<Vec<PathBuf>> {
    let planned = plan(root, Switches::from_settings(settings), instance_id)?;
    carry_out(root, &planned, &NEVER_STOP)
}

/// The stop flag of callers that have no SIGTERM handler.
static NEVER_STOP: AtomicBool = AtomicBool::new(false);

/// Whether the machine-id is one known to be the template's (or the previous
/// instance's), and whether D-Bus keeps a copy of it.
fn plan_machine_id(root: &Root) -> Result<MachineIdPlan> {
    let Some(current) = machine_id(root)? else {
        return Ok(MachineIdPlan::Missing);
    };
    let known = [
        read_record(root, TEMPLATE_ID_RECORD)?,
        read_record(root, LAST_ID_RECORD)?,
    ];
    if !known.iter().flatten().any(|k| *k == current) {
        return Ok(MachineIdPlan::Keep);
    }
    // D-Bus keeps a copy where it is not a symlink (older distributions).
    let dbus_copy = match root
        .existing(Path::new(DBUS_MACHINE_ID))
        .with_context(|| format!("reading {DBUS_MACHINE_ID}"))?
    {
        Existing::File { contents, .. } => String::from_utf8_lossy(&contents).trim() == current,
        _ => false,
    };
    Ok(MachineIdPlan::Replace { dbus_copy })
}

/// Writes a new machine-id (and D-Bus's copy) and records it as this instance's.
fn replace_machine_id(root: &Root, dbus_copy: bool) -> Result<Vec<PathBuf>> {
    let id = new_machine_id()?;
    root.write_file(Path::new(MACHINE_ID), format!("{id}\n").as_bytes(), 0o444)
        .with_context(|| format!("writing a new {MACHINE_ID}"))?;
    let mut changed = vec![PathBuf::from(MACHINE_ID)];
    if dbus_copy {
        root.write_file(
            Path::new(DBUS_MACHINE_ID),
            format!("{id}\n").as_bytes(),
            0o444,
        )
        .with_context(|| format!("writing {DBUS_MACHINE_ID}"))?;
        changed.push(PathBuf::from(DBUS_MACHINE_ID));
    }
    write_record(root, LAST_ID_RECORD, &id)?;
    Ok(changed)
}

/// Replaces a machine-id that is the template's (or the previous instance's) and records
/// the one this instance runs with.
#[cfg(test)]
pub(crate) fn refresh_machine_id(root: &Root) -> Result<Vec<PathBuf>> {
    match plan_machine_id(root)? {
        MachineIdPlan::Replace { dbus_copy } => replace_machine_id(root, dbus_copy),
        MachineIdPlan::Keep => {
            if let Some(id) = machine_id(root)? {
                write_record(root, LAST_ID_RECORD, &id)?;
            }
            Ok(Vec::new())
        }
        MachineIdPlan::Off | MachineIdPlan::Missing => Ok(Vec::new()),
    }
}

/// A random machine-id as systemd makes one: 128 random bits marked as a version 4 UUID,
/// 32 lower-case hex digits.
pub(crate) fn new_machine_id() -> Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom for a new machine-id")?;
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The host key types the template had: those present now, then those recorded.
fn key_types_to_replace(root: &Root) -> Result<Vec<String>> {
    let mut types: Vec<String> = present_key_types(root)
        .into_iter()
        .map(str::to_string)
        .collect();
    for t in recorded_key_types(root)? {
        if !types.contains(&t) {
            types.push(t);
        }
    }
    Ok(types)
}

/// Replaces the host keys of every type the template had with fresh ones, keeping each
/// private key's owner, group and mode (RHEL's `ssh_keys` group, mode 0640).
pub fn refresh_host_keys(root: &Root) -> Result<Vec<PathBuf>> {
    replace_host_keys(root, &key_types_to_replace(root)?, &NEVER_STOP)
}

/// Removes the host keys of `types` (private and public), as `ssh_deletekeys` does for
/// the types `ssh_genkeytypes` does not name; returns the files removed.
fn remove_host_keys(root: &Root, types: &[String]) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for t in types {
        let key = host_key_path(t);
        for p in [key.clone(), key.with_extension("pub")] {
            // Not following a link planted in the root: the link itself goes.
            let real = root.resolve(&p, false)?;
            match std::fs::remove_file(&real) {
                Ok(()) => removed.push(p),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("removing {}", p.display()));
                }
            }
        }
    }
    Ok(removed)
}

/// How long one `ssh-keygen` may take (an RSA key takes about a second).
const KEYGEN_TIMEOUT: Duration = Duration::from_secs(120);

/// Replaces the host keys of `types` with fresh ones made by `ssh-keygen`, run through
/// `process.rs` (timeout, cleared environment, stopped by `stop`).
fn replace_host_keys(root: &Root, types: &[String], stop: &AtomicBool) -> Result<Vec<PathBuf>> {
    let mut changed = Vec::new();
    if types.is_empty() {
        return Ok(changed);
    }
    let dir = root
        .resolve(Path::new(SSH_DIR), true)
        .with_context(|| format!("resolving {SSH_DIR}"))?;
    if !dir.is_dir() {
        bail!(
            "{SSH_DIR} is missing but host keys of types {} were recorded; reinstall the \
             ssh server or switch off [hygiene] ssh_host_keys",
            types.join(", ")
        );
    }
    for t in types {
        // SIGTERM between two keys: no new ssh-keygen, and the instance is not recorded,
        // so the next boot does the rest.
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            bail!("stopped before making the {t} host key; the next boot replaces it");
        }
        let key = host_key_path(t);
        let pub_key = key.with_extension("pub");
        let host_key = root.resolve(&key, false)?;
        let host_pub = root.resolve(&pub_key, false)?;
        let (uid, gid, mode) = match std::fs::symlink_metadata(&host_key) {
            Ok(m) if m.is_file() => (m.uid(), m.gid(), m.mode() & 0o7777),
            _ => (0, 0, 0o600),
        };
        // The new pair is made beside the old one and renamed over it, so a missing or
        // failing ssh-keygen leaves the template's keys rather than none (sshd would not
        // start without them).
        let new_key = host_key.with_file_name(format!("ssh_host_{t}_key.vmcust-new"));
        let new_pub = host_key.with_file_name(format!("ssh_host_{t}_key.vmcust-new.pub"));
        for p in [&new_key, &new_pub] {
            let _ = std::fs::remove_file(p);
        }
        let new_key_arg = new_key
            .to_str()
            .with_context(|| format!("{} is not UTF-8", new_key.display()))?;
        let cmd = Cmd::new(
            "ssh-keygen",
            &[
                "-q",
                "-N",
                "",
                "-C",
                "",
                "-t",
                t.as_str(),
                "-f",
                new_key_arg,
            ],
            KEYGEN_TIMEOUT,
        );
        let out = process::run(&cmd, Output::Bytes(4096), stop).context(
            "running ssh-keygen for fresh host keys; install openssh-client or switch off \
             [hygiene] ssh_host_keys",
        )?;
        if matches!(out.ended, Ended::TimedOut | Ended::Stopped) {
            for p in [&new_key, &new_pub] {
                let _ = std::fs::remove_file(p);
            }
            bail!(
                "ssh-keygen -t {t} did not finish ({}); the template's {t} host key is still \
                 in place",
                out.ended
            );
        }
        if !out.success() {
            for p in [&new_key, &new_pub] {
                let _ = std::fs::remove_file(p);
            }
            if *t == "dsa" {
                // OpenSSH 9.8 and later cannot make DSA keys: the clone goes without one
                // rather than sharing the template's (sshd uses the other types).
                for p in [&host_key, &host_pub] {
                    let _ = std::fs::remove_file(p);
                }
                tracing::warn!(
                    "ssh-keygen cannot make dsa keys here ({}): removed the template's dsa host key",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                changed.push(key);
                changed.push(pub_key);
                continue;
            }
            bail!(
                "ssh-keygen -t {t} failed ({}); the template's {t} host key is still in place: \
                 remove {} or switch off [hygiene] ssh_host_keys",
                String::from_utf8_lossy(&out.stderr).trim(),
                key.display()
            );
        }
        std::fs::set_permissions(&new_key, std::fs::Permissions::from_mode(mode))
            .with_context(|| format!("setting the mode of {}", new_key.display()))?;
        std::os::unix::fs::lchown(&new_key, Some(uid), Some(gid))
            .with_context(|| format!("setting the owner of {}", new_key.display()))?;
        std::fs::set_permissions(&new_pub, std::fs::Permissions::from_mode(0o644))
            .with_context(|| format!("setting the mode of {}", new_pub.display()))?;
        // The old keys' SELinux labels (sshd_key_t on RHEL), or the root's policy's.
        for (new, old) in [(&new_key, &host_key), (&new_pub, &host_pub)] {
            root.label_for_rename(new, old)
                .with_context(|| format!("labelling {}", new.display()))?;
        }
        std::fs::rename(&new_pub, &host_pub)
            .with_context(|| format!("replacing {}", pub_key.display()))?;
        std::fs::rename(&new_key, &host_key)
            .with_context(|| format!("replacing {}", key.display()))?;
        changed.push(key);
        changed.push(pub_key);
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn root() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        (dir, root)
    }

    fn keygen(root: &Root, t: &str) {
        let path = root
            .path()
            .join("etc/ssh")
            .join(format!("ssh_host_{t}_key"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-N", "", "-t", t, "-f"])
            .arg(&path)
            .status()
            .expect("ssh-keygen must be installed (apt-get install openssh-client)");
        assert!(ok.success());
    }

    const TEMPLATE_ID: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn new_ids_look_like_systemds() {
        let a = new_machine_id().unwrap();
        let b = new_machine_id().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_eq!(&a[12..13], "4", "{a}");
    }

    /// The template's machine-id at `path`, read-only as systemd writes it.
    fn write_id(root: &Root, path: &str) {
        root.write_file(
            Path::new(path),
            format!("{TEMPLATE_ID}\n").as_bytes(),
            0o444,
        )
        .unwrap();
    }

    #[test]
    fn the_templates_machine_id_is_replaced_once() {
        let (_d, root) = root();
        write_id(&root, MACHINE_ID);
        write_id(&root, DBUS_MACHINE_ID);
        record_template(&root, &[]).unwrap();
        let changed = refresh(&root, &Settings::default(), "i-1").unwrap();
        assert_eq!(
            changed,
            [PathBuf::from(MACHINE_ID), PathBuf::from(DBUS_MACHINE_ID)]
        );
        // The same instance again (a reboot, a resumed run): nothing.
        assert!(refresh(&root, &Settings::default(), "i-1")
            .unwrap()
            .is_empty());
        let new = machine_id(&root).unwrap().unwrap();
        assert_ne!(new, TEMPLATE_ID);
        let dbus = root.read_text(Path::new(DBUS_MACHINE_ID)).unwrap().unwrap();
        assert_eq!(dbus.trim(), new);
        // The next new instance on this clone is a clone of it: replaced again.
        assert_eq!(refresh_machine_id(&root).unwrap().len(), 2);
        assert_ne!(machine_id(&root).unwrap().unwrap(), new);
    }

    #[test]
    fn an_unknown_or_empty_machine_id_is_kept() {
        let (_d, root) = root();
        // Nothing recorded: vmcust cannot tell this is a clone, so it keeps the id.
        write_id(&root, MACHINE_ID);
        assert!(refresh_machine_id(&root).unwrap().is_empty());
        assert_eq!(machine_id(&root).unwrap().unwrap(), TEMPLATE_ID);
        // Empty: systemd generates one at boot.
        root.write_file(Path::new(MACHINE_ID), b"", 0o444).unwrap();
        assert!(refresh_machine_id(&root).unwrap().is_empty());
        // Switched off.
        write_id(&root, MACHINE_ID);
        record_template(&root, &[]).unwrap();
        let off = Settings {
            hygiene_machine_id: false,
            hygiene_ssh_host_keys: false,
            ..Settings::default()
        };
        assert!(refresh(&root, &off, "i-1").unwrap().is_empty());
    }

    #[test]
    fn host_keys_are_replaced_type_for_type() {
        let (_d, root) = root();
        keygen(&root, "ed25519");
        keygen(&root, "rsa");
        let key = root.path().join("etc/ssh/ssh_host_ed25519_key");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o640)).unwrap();
        let before = std::fs::read(&key).unwrap();
        let changed = refresh(&root, &Settings::default(), "i-1").unwrap();
        assert_eq!(changed.len(), 4, "{changed:?}");
        assert_ne!(std::fs::read(&key).unwrap(), before);
        assert_eq!(std::fs::metadata(&key).unwrap().mode() & 0o777, 0o640);
        assert_eq!(present_key_types(&root), ["rsa", "ed25519"]);
        assert!(!root.is_file(&host_key_path("ecdsa")));
    }

    #[test]
    fn the_plan_names_what_carrying_it_out_replaces() {
        let (_d, root) = root();
        write_id(&root, MACHINE_ID);
        write_id(&root, DBUS_MACHINE_ID);
        keygen(&root, "ed25519");
        record_template(&root, &[]).unwrap();
        let on = Switches {
            machine_id: true,
            ssh_host_keys: true,
        };
        let planned = plan(&root, on, "i-1").unwrap();
        assert!(planned.new_instance);
        assert_eq!(
            planned.machine_id,
            MachineIdPlan::Replace { dbus_copy: true }
        );
        assert_eq!(
            planned.ssh_host_keys,
            HostKeysPlan::Replace(vec!["ed25519".into()])
        );
        let files: Vec<PathBuf> = [
            MACHINE_ID,
            DBUS_MACHINE_ID,
            "/etc/ssh/ssh_host_ed25519_key",
            "/etc/ssh/ssh_host_ed25519_key.pub",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(planned.files, files);
        // Planning changed nothing.
        assert_eq!(machine_id(&root).unwrap().unwrap(), TEMPLATE_ID);
        assert_eq!(
            carry_out(&root, &planned, &AtomicBool::new(false)).unwrap(),
            files
        );
        // Done for this instance: the next plan says so and carrying it out does nothing.
        let again = plan(&root, on, "i-1").unwrap();
        assert!(!again.new_instance);
        assert!(again.files.is_empty());
        assert!(again.describe().contains("already"), "{}", again.describe());
        assert!(carry_out(&root, &again, &AtomicBool::new(false))
            .unwrap()
            .is_empty());
        // Switched off: nothing planned, and said so.
        let off = plan(&root, Switches::default(), "i-2").unwrap();
        assert_eq!(
            (off.machine_id.clone(), off.ssh_host_keys.clone()),
            (MachineIdPlan::Off, HostKeysPlan::Off)
        );
        assert!(off.describe().contains("[hygiene] ssh_host_keys = false"));
    }

    #[test]
    fn a_stop_leaves_the_templates_key_and_the_instance_unrecorded() {
        let (_d, root) = root();
        keygen(&root, "ed25519");
        let key = root.path().join("etc/ssh/ssh_host_ed25519_key");
        let before = std::fs::read(&key).unwrap();
        let on = Switches {
            machine_id: true,
            ssh_host_keys: true,
        };
        let planned = plan(&root, on, "i-1").unwrap();
        let err = carry_out(&root, &planned, &AtomicBool::new(true)).unwrap_err();
        assert!(err.to_string().contains("stopped"), "{err:#}");
        assert_eq!(std::fs::read(&key).unwrap(), before);
        assert!(plan(&root, on, "i-1").unwrap().new_instance);
    }

    /// The cloud-config's `ssh_deletekeys` and `ssh_genkeytypes`, as cloud-init's `ssh`
    /// module does them: deleting, the given types are all fresh and the other types gone;
    /// not deleting, only the missing types are made and the template's keys kept.
    #[test]
    fn ssh_deletekeys_and_genkeytypes_as_cloud_init() {
        let on = Switches {
            machine_id: false,
            ssh_host_keys: true,
        };
        let wish = |delete: Option<bool>, types: Option<&[&str]>| HostKeyWish {
            delete,
            types: types.map(|t| t.iter().map(|s| s.to_string()).collect()),
            given: None,
        };
        // (wish, types made, types removed, types present after)
        type Case<'a> = (HostKeyWish, &'a [&'a str], &'a [&'a str], &'a [&'a str]);
        let table: &[Case] = &[
            (
                wish(None, Some(&["ed25519"])),
                &["ed25519"],
                &["rsa"],
                &["ed25519"],
            ),
            (
                wish(Some(false), Some(&["rsa", "ed25519"])),
                &["ed25519"],
                &[],
                &["rsa", "ed25519"],
            ),
            (
                wish(Some(false), None),
                &["ecdsa", "ed25519"],
                &[],
                &["rsa", "ecdsa", "ed25519"],
            ),
            (
                wish(Some(true), None),
                &["rsa", "ecdsa", "ed25519"],
                &[],
                &["rsa", "ecdsa", "ed25519"],
            ),
        ];
        for (w, made, removed, after) in table {
            let (_d, root) = root();
            keygen(&root, "rsa");
            let rsa = root.path().join("etc/ssh/ssh_host_rsa_key");
            let before = std::fs::read(&rsa).unwrap();
            let planned = plan_with(&root, on, "i-1", Some(w)).unwrap();
            let want: Vec<String> = made.iter().map(|t| t.to_string()).collect();
            assert_eq!(planned.ssh_host_keys, HostKeysPlan::Replace(want), "{w:?}");
            assert_eq!(planned.removed_key_types, *removed, "{w:?}");
            let changed = carry_out(&root, &planned, &AtomicBool::new(false)).unwrap();
            assert_eq!(changed, planned.files, "{w:?}");
            assert_eq!(present_key_types(&root), *after, "{w:?}");
            // The template's rsa key is kept only while not deleting.
            let kept = rsa.exists() && std::fs::read(&rsa).unwrap() == before;
            assert_eq!(kept, w.delete == Some(false), "{w:?}");
            if !removed.is_empty() {
                assert!(
                    planned.describe().contains("removed (rsa"),
                    "{}",
                    planned.describe()
                );
            }
        }
    }

    /// `ssh_keys`: no key is made; while deleting, every type but the given private
    /// keys' goes (the `ssh` module writes those after hygiene); not deleting, all stay.
    #[test]
    fn given_keys_are_neither_made_nor_removed() {
        let on = Switches {
            machine_id: false,
            ssh_host_keys: true,
        };
        // (ssh_deletekeys, given private key types, types present after)
        type Case<'a> = (Option<bool>, &'a [&'a str], &'a [&'a str]);
        let table: &[Case] = &[
            (None, &["rsa"], &["rsa"]),
            (None, &[], &[]),
            (Some(false), &[], &["rsa", "ed25519"]),
            (Some(true), &["ed25519", "ecdsa"], &["ed25519"]),
        ];
        for (delete, given, after) in table {
            let (_d, root) = root();
            keygen(&root, "rsa");
            keygen(&root, "ed25519");
            let ed = std::fs::read(root.path().join("etc/ssh/ssh_host_ed25519_key")).unwrap();
            let wish = HostKeyWish {
                delete: *delete,
                types: Some(vec!["rsa".into()]),
                given: Some(given.iter().map(|s| s.to_string()).collect()),
            };
            let planned = plan_with(&root, on, "i-1", Some(&wish)).unwrap();
            assert_eq!(planned.ssh_host_keys, HostKeysPlan::None, "{wish:?}");
            assert!(
                planned.describe().contains("ssh_keys"),
                "{}",
                planned.describe()
            );
            carry_out(&root, &planned, &AtomicBool::new(false)).unwrap();
            assert_eq!(present_key_types(&root), *after, "{wish:?}");
            // A key that stays is the template's own, never a fresh one.
            if after.contains(&"ed25519") {
                let now = std::fs::read(root.path().join("etc/ssh/ssh_host_ed25519_key"));
                assert_eq!(now.unwrap(), ed, "{wish:?}");
            }
        }
    }

    #[test]
    fn recorded_types_come_back_after_a_sealed_template() {
        let (_d, root) = root();
        std::fs::create_dir_all(root.path().join("etc/ssh")).unwrap();
        record_template(&root, &["ecdsa"]).unwrap();
        let changed = refresh_host_keys(&root).unwrap();
        assert_eq!(
            changed,
            [
                PathBuf::from("/etc/ssh/ssh_host_ecdsa_key"),
                PathBuf::from("/etc/ssh/ssh_host_ecdsa_key.pub")
            ]
        );
        assert_eq!(present_key_types(&root), ["ecdsa"]);
    }
}
