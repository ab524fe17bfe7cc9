//! What a customization applied, kept per instance in
//! `/var/lib/vmcust/instances/<id>/applied.json` for `vmcust query`: host name, network
//! per NIC, DNS, time zone, SSH keys by fingerprint, the scripts run and how they ended,
//! the user-data's disposition and the files written. Never a secret: a root password is
//! recorded as `set`, never its value or hash.
//!
//! The boot stages call [`record`] once the plan is applied and [`script_ran`] after each
//! script; [`flush_scripts`] adds the scripts of this run to the newest instance's record
//! at the end of the stage (a pre-customization script runs before anything is applied,
//! so its instance has no record yet when it ends). After each stage's cloud-config
//! modules, [`record_modules`] adds how each module ended, the files its actions touched
//! and the programs it ran, from the modules' generic reports (so a new module needs no
//! code here).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::apply::Change;
use crate::cloud_config::apply::journal::{CommandDone, FileDone};
use crate::cloud_config::apply::{ModuleOutcome, ModuleReport};
use crate::engine::customize::{Prepared, UserDataDisposition};
use crate::model::{Interface, Ipv4Config, Ipv6Config, Network};
use crate::plan::Action;
use crate::root::Root;
use crate::scripts::run::ScriptEnd;
use crate::state::APPLIED_JSON;

/// Most script runs kept in one record (a record is rewritten, never appended forever).
pub(crate) const MAX_SCRIPTS: usize = 16;
/// Longest text kept from a script's result.
const MAX_RESULT: usize = 400;

/// What one customization applied to the root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// The instance id.
    pub instance_id: String,
    /// Which command applied it: `vmcust run` or `vmcust apply`.
    pub by: String,
    /// Seconds since the epoch when it was recorded (RFC 3339 in the file).
    #[serde(with = "crate::state::time::as_rfc3339")]
    pub recorded: u64,
    /// The short host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    /// The fully qualified name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fqdn: Option<String>,
    /// The time zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// `utc` or `local`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_clock: Option<String>,
    /// `set`, `set, expires at next login` or `expires at next login`: never the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_password: Option<String>,
    /// Whose `authorized_keys` got the keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh_user: Option<String>,
    /// The SSH keys installed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ssh_keys: Vec<KeyRecord>,
    /// The network stack written for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renderer: Option<String>,
    /// The network, when the customization set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkRecord>,
    /// The MARKER-ID and whether it was new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
    /// The scripts run for this instance, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<ScriptRecord>,
    /// The user-data kept for the late stage and what it is to become.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<UserDataRecord>,
    /// Every file (and the live host name) the plan and the cloud-config modules touched,
    /// with what happened to it.
    #[serde(default)]
    pub files: Vec<FileRecord>,
    /// The users and groups the customization created or changed.
    #[serde(default, skip_serializing_if = "AccountsRecord::is_empty")]
    pub accounts: AccountsRecord,
    /// How each cloud-config module ended, in the order they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<ModuleRecord>,
    /// The programs the cloud-config modules ran (bootcmd, runcmd, scripts, tools), and
    /// how each ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandDone>,
    /// What was asked for and left out, and why (a spec's password or script without a
    /// new MARKER-ID, cloud-config vmcust does not apply, accounts cloud-init would leave
    /// out too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkipRecord>,
}

/// The users and groups the customization created or changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountsRecord {
    /// Users, in the order they were made.
    #[serde(default)]
    pub users: Vec<AccountRecord>,
    /// Groups, in the order they were made.
    #[serde(default)]
    pub groups: Vec<AccountRecord>,
}

impl AccountsRecord {
    /// Neither users nor groups.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && self.groups.is_empty()
    }
}

impl Applied {
    /// What was asked for and left out, and why: the record's skipped actions, then the
    /// cloud-config modules skipped for a reason other than the document not asking for
    /// them (its key absent or off, no part of its kind). For `query` and `status`.
    pub fn left_out(&self) -> Vec<(String, Option<String>)> {
        let mut out: Vec<(String, Option<String>)> = self
            .skipped
            .iter()
            .map(|k| (k.what.clone(), k.why.clone()))
            .collect();
        out.extend(
            self.modules
                .iter()
                .filter(|m| m.outcome == "skipped" && !not_asked(&m.detail))
                .map(|m| (format!("cloud-config {}", m.module), Some(m.detail.clone()))),
        );
        out
    }
}

/// A module's reason for skipping that says the document did not ask for its work.
fn not_asked(why: &str) -> bool {
    why.ends_with("is not in the cloud-config")
        || why.starts_with("no ")
        || why.contains(" is not true")
}

/// A user or group the customization created or changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountRecord {
    /// Its name.
    pub name: String,
    /// `created` or `changed`.
    pub change: String,
}

/// How one cloud-config module ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleRecord {
    /// cloud-init's module name.
    pub module: String,
    /// `early` or `late`.
    pub stage: String,
    /// `ran`, `skipped`, `failed` or `interrupted`.
    pub outcome: String,
    /// What it did, or why it was skipped or failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// Something asked for that was left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkipRecord {
    /// What was not done.
    pub what: String,
    /// Why, and what to change to have it done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// An SSH key as `ssh-keygen -l` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// Whose `authorized_keys` got it, when the customization installs keys for several
    /// users (cloud-config); else [`Applied::ssh_user`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// `ssh-ed25519`, `ssh-rsa`, …
    pub key_type: String,
    /// `SHA256:` and the unpadded base64 of the key blob's digest; for a certificate, of
    /// the plain key it certifies (as `ssh-keygen -l`).
    pub fingerprint: String,
    /// The comment after the key, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The network as applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkRecord {
    /// One entry per NIC, in the source's order.
    pub interfaces: Vec<NicRecord>,
    /// DNS for the whole machine.
    pub dns: DnsRecord,
}

/// One NIC as applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NicRecord {
    /// The source's name (`NIC1`).
    pub id: String,
    /// Its MAC address.
    pub mac: String,
    /// `dhcp`, `disabled`, or the static addresses.
    pub ipv4: String,
    /// `auto`, `dhcp`, `disabled`, or the static addresses.
    pub ipv6: String,
    /// Routes, `DEST via GATEWAY [metric N]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<String>,
    /// DNS of this NIC only.
    #[serde(default, skip_serializing_if = "DnsRecord::is_empty")]
    pub dns: DnsRecord,
}

/// Name servers and search domains.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DnsRecord {
    /// Name servers in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<String>,
    /// Search domains in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
}

impl DnsRecord {
    /// Neither servers nor search domains.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.search.is_empty()
    }
}

/// One script run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptRecord {
    /// `precustomization`, `postcustomization` or `user-data`.
    pub phase: String,
    /// The script's file name.
    pub script: String,
    /// `succeeded`, `interrupted`, or why it failed.
    pub result: String,
    /// How long it ran, in milliseconds.
    pub ms: u64,
    /// Seconds since the epoch when it ended (RFC 3339 in the file).
    #[serde(with = "crate::state::time::as_rfc3339")]
    pub finished: u64,
}

/// User-data kept for the late stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserDataRecord {
    /// Its source.
    pub from: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// What the late stage does with it.
    pub disposition: String,
}

/// A file the plan touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// The path in the root (or `running host name`).
    pub path: String,
    /// Why it was written.
    pub purpose: String,
    /// `created`, `updated`, `unchanged` or `skip`.
    pub change: String,
    /// Its permission bits as it was left (`0640`), when it is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Its owner and group as it was left (`alice:alice`; numbers without a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The cloud-config module whose action it was; none for the customization's plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
}

/// The record of `prepared` applied to `root` with `changes` (one per action), by `by`.
pub(crate) fn from_prepared(
    root: &Root,
    prepared: &Prepared,
    changes: &[Change],
    by: &str,
) -> Option<Applied> {
    let owners = Owners::read(root);
    let id = prepared.steps.instance_id.as_ref()?;
    let c = &prepared.customization;
    let identity = &c.identity;
    let password = identity
        .root_password
        .as_ref()
        .map(|p| match (p.password.is_some(), p.expire) {
            (true, false) => "set",
            (true, true) => "set, expires at next login",
            (false, _) => "expires at next login",
        })
        .map(String::from);
    let files = prepared
        .plan
        .actions
        .iter()
        .zip(changes)
        .map(|(action, change)| {
            let (mode, owner) = match action {
                Action::SetHostname { .. } => (None, None),
                Action::Rename { to, .. } => owners.of(root, to),
                other => owners.of(root, other.path()),
            };
            FileRecord {
                path: match action {
                    Action::SetHostname { name } => format!("running host name {name}"),
                    Action::Rename { from, to, .. } => {
                        format!("{} moved to {}", from.display(), to.display())
                    }
                    other => other.path().display().to_string(),
                },
                purpose: action.purpose().to_string(),
                change: crate::apply::done_word(action, *change).to_string(),
                mode,
                owner,
                module: None,
            }
        })
        .collect();
    let steps = &prepared.steps;
    let native = steps.user_data.as_ref().and_then(|u| u.native.as_ref());
    let mut ssh_keys: Vec<KeyRecord> = identity
        .ssh_authorized_keys
        .iter()
        .map(|k| key_record(k.as_str()))
        .collect();
    let mut accounts = AccountsRecord::default();
    let mut skipped: Vec<SkipRecord> = steps
        .skipped
        .iter()
        .map(|s| SkipRecord {
            what: s.action.clone(),
            why: Some(s.reason.clone()),
        })
        .collect();
    skipped.extend(steps.degraded.iter().map(|d| SkipRecord {
        what: d.clone(),
        why: Some("vmcust does not apply it: the customization ends degraded".to_string()),
    }));
    if let Some(n) = native {
        ssh_keys.extend(n.keys.iter().map(|(user, line)| KeyRecord {
            user: Some(user.clone()),
            ..key_record(line)
        }));
        for a in &n.accounts {
            let rec = AccountRecord {
                name: a.name.clone(),
                change: if a.created { "created" } else { "changed" }.to_string(),
            };
            match a.kind {
                "group" => accounts.groups.push(rec),
                _ => accounts.users.push(rec),
            }
        }
        skipped.extend(n.notes.iter().map(|note| SkipRecord {
            what: note.clone(),
            why: None,
        }));
    }
    Some(Applied {
        instance_id: id.to_string(),
        by: by.to_string(),
        recorded: crate::state::now(),
        host_name: identity.host_name.as_ref().map(|h| h.short().to_string()),
        fqdn: identity.fqdn(),
        time_zone: identity.time_zone.as_ref().map(ToString::to_string),
        hardware_clock: identity.hardware_clock.map(|h| {
            match h {
                crate::model::HardwareClock::Utc => "utc",
                crate::model::HardwareClock::Local => "local",
            }
            .to_string()
        }),
        root_password: password,
        ssh_user: (!identity.ssh_authorized_keys.is_empty()).then(|| {
            identity
                .ssh_user
                .as_ref()
                .map_or_else(|| "root".to_string(), ToString::to_string)
        }),
        ssh_keys,
        renderer: prepared
            .renderer
            .as_ref()
            .map(|r| r.renderer.name().to_string()),
        network: c.network.as_ref().map(network_record),
        marker: steps.marker.as_ref().map(|m| {
            if m.new {
                format!("{} (new: password and scripts applied)", m.id)
            } else {
                format!("{} (used before: password and scripts left out)", m.id)
            }
        }),
        scripts: Vec::new(),
        user_data: steps.user_data.as_ref().map(|u| UserDataRecord {
            from: u.from.to_string(),
            bytes: u.bytes,
            disposition: match &u.disposition {
                UserDataDisposition::CloudInitSeed => "handed to cloud-init".to_string(),
                UserDataDisposition::RunScript => "run once as a #! script".to_string(),
                UserDataDisposition::Native => "applied by vmcust (cloud-config)".to_string(),
                UserDataDisposition::Rejected(why) => format!("not run: {why}"),
            },
        }),
        files,
        accounts,
        modules: Vec::new(),
        commands: Vec::new(),
        skipped,
    })
}

/// Names of the root's users and groups by number, to show a file's owner.
struct Owners {
    users: std::collections::HashMap<u32, String>,
    groups: std::collections::HashMap<u32, String>,
}

impl Owners {
    /// Reads the root's `/etc/passwd` and `/etc/group` (each capped; unreadable is empty).
    fn read(root: &Root) -> Owners {
        let ids = |path: &str| {
            root.read_text_capped(Path::new(path), 4 << 20, "account file")
                .ok()
                .flatten()
                .map(|t| {
                    t.lines()
                        .filter_map(|l| {
                            let mut f = l.split(':');
                            let name = f.next()?;
                            let id = f.nth(1)?.parse().ok()?;
                            Some((id, name.to_string()))
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        Owners {
            users: ids("/etc/passwd"),
            groups: ids("/etc/group"),
        }
    }

    /// The mode and `owner:group` of `path` in `root` as it is now (a link's own).
    fn of(&self, root: &Root, path: &Path) -> (Option<String>, Option<String>) {
        use std::os::unix::fs::MetadataExt as _;
        let Some(meta) = root
            .resolve(path, false)
            .ok()
            .and_then(|p| std::fs::symlink_metadata(p).ok())
        else {
            return (None, None);
        };
        let name = |m: &std::collections::HashMap<u32, String>, id: u32| {
            m.get(&id).cloned().unwrap_or_else(|| id.to_string())
        };
        (
            Some(format!("{:04o}", meta.mode() & 0o7777)),
            Some(format!(
                "{}:{}",
                name(&self.users, meta.uid()),
                name(&self.groups, meta.gid())
            )),
        )
    }
}

/// An SSH public key line as type, fingerprint and comment. A line vmcust cannot decode
/// (it validated only its shape) gets the fingerprint `unknown`.
pub(crate) fn key_record(line: &str) -> KeyRecord {
    use base64::Engine as _;
    use sha2::Digest as _;
    let words: Vec<&str> = line.split_whitespace().collect();
    // authorized_keys options may come first: the type is the first word that looks like
    // one, the blob the word after it.
    let at = words
        .iter()
        .position(|w| w.starts_with("ssh-") || w.starts_with("ecdsa-") || w.starts_with("sk-"))
        .unwrap_or(0);
    let key_type = words.get(at).copied().unwrap_or_default().to_string();
    let fingerprint = words
        .get(at + 1)
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .map_or_else(
            || "unknown".to_string(),
            |blob| {
                // `ssh-keygen -l` shows a certificate by the key it certifies.
                let blob = certified_key(&blob).unwrap_or(blob);
                let digest = sha2::Sha256::digest(&blob);
                format!(
                    "SHA256:{}",
                    base64::engine::general_purpose::STANDARD_NO_PAD.encode(digest)
                )
            },
        );
    let comment = words
        .get(at + 2..)
        .map(|w| w.join(" "))
        .filter(|c| !c.is_empty());
    KeyRecord {
        user: None,
        key_type,
        fingerprint,
        comment,
    }
}

/// The plain public key blob a certificate blob certifies, as OpenSSH's PROTOCOL.certkeys
/// lays it out: the certificate's type, a nonce, then the plain key's own fields (their
/// count depends on the type), then the certificate's. The plain blob is the plain type and
/// those fields. `None` for a blob that is not a certificate or is cut short.
fn certified_key(blob: &[u8]) -> Option<Vec<u8>> {
    let (cert_type, rest) = wire_string(blob)?;
    let cert_type = std::str::from_utf8(cert_type).ok()?;
    let prefix = cert_type.strip_suffix("-cert-v01@openssh.com")?;
    // The fields of the plain key after its type.
    let fields = match prefix {
        "ssh-rsa" => 2,                         // e, n
        "ssh-dss" => 4,                         // p, q, g, y
        "ssh-ed25519" => 1,                     // the public key
        "sk-ssh-ed25519" => 2,                  // the public key, the application
        "sk-ecdsa-sha2-nistp256" => 3,          // the curve, the point, the application
        p if p.starts_with("ecdsa-sha2-") => 2, // the curve, the point
        _ => return None,
    };
    let plain_type = if prefix.starts_with("sk-") {
        format!("{prefix}@openssh.com")
    } else {
        prefix.to_string()
    };
    let (_nonce, mut rest) = wire_string(rest)?;
    let start = rest;
    for _ in 0..fields {
        rest = wire_string(rest)?.1;
    }
    let key_fields = &start[..start.len() - rest.len()];
    let mut out = Vec::with_capacity(4 + plain_type.len() + key_fields.len());
    out.extend_from_slice(&(plain_type.len() as u32).to_be_bytes());
    out.extend_from_slice(plain_type.as_bytes());
    out.extend_from_slice(key_fields);
    Some(out)
}

/// One SSH wire string (a 4-byte big-endian length, then the bytes) and what follows it.
fn wire_string(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let (length, rest) = b.split_first_chunk::<4>()?;
    let length = usize::try_from(u32::from_be_bytes(*length)).ok()?;
    (rest.len() >= length).then(|| rest.split_at(length))
}

fn network_record(n: &Network) -> NetworkRecord {
    NetworkRecord {
        interfaces: n.interfaces.iter().map(nic_record).collect(),
        dns: dns_record(&n.dns),
    }
}

fn nic_record(i: &Interface) -> NicRecord {
    let join = |v: Vec<String>| v.join(", ");
    NicRecord {
        id: i.id.to_string(),
        mac: i.mac.to_string(),
        ipv4: match &i.ip.ipv4 {
            Ipv4Config::Dhcp => "dhcp".into(),
            Ipv4Config::Disabled => "disabled".into(),
            Ipv4Config::Static(a) => join(a.iter().map(ToString::to_string).collect()),
        },
        ipv6: match &i.ip.ipv6 {
            Ipv6Config::Auto => "auto".into(),
            Ipv6Config::Dhcp => "dhcp".into(),
            Ipv6Config::Disabled => "disabled".into(),
            Ipv6Config::Static(a) => join(a.iter().map(ToString::to_string).collect()),
        },
        routes: i
            .ip
            .routes
            .iter()
            .map(|r| match r.metric {
                Some(m) => format!("{} via {} metric {m}", r.to, r.via),
                None => format!("{} via {}", r.to, r.via),
            })
            .collect(),
        dns: dns_record(&i.ip.dns),
    }
}

fn dns_record(d: &crate::model::Dns) -> DnsRecord {
    DnsRecord {
        servers: d.servers.iter().map(ToString::to_string).collect(),
        search: d.search.iter().map(ToString::to_string).collect(),
    }
}

/// Where an instance's record is.
pub(crate) fn path_for(instance_dir_name: &str) -> PathBuf {
    Path::new(crate::state::INSTANCES_DIR)
        .join(instance_dir_name)
        .join(APPLIED_JSON)
}

fn path_of(id: &crate::model::InstanceId) -> PathBuf {
    crate::state::instance_dir(id).join(APPLIED_JSON)
}

/// Writes `record` for its instance, atomically through `root`.
pub(crate) fn write(root: &Root, record: &Applied) -> Result<()> {
    let id = crate::model::InstanceId::parse(&record.instance_id)
        .map_err(|e| anyhow::anyhow!("instance id {}: {e}", record.instance_id))?;
    let path = path_of(&id);
    let text = serde_json::to_string_pretty(record)? + "\n";
    root.write_file(&path, text.as_bytes(), 0o644)
        .with_context(|| format!("writing {}", path.display()))
}

/// Reads the record in the instance directory named `dir_name`; `None` when there is none
/// (an instance customized before vmcust kept records) or it cannot be read as one.
pub fn read(root: &Root, dir_name: &str) -> Result<Option<Applied>> {
    let path = path_for(dir_name);
    let Some(text) = root
        .read_text(&path)
        .with_context(|| format!("reading {}", path.display()))?
    else {
        return Ok(None);
    };
    match serde_json::from_str(&text) {
        Ok(a) => Ok(Some(a)),
        Err(e) => {
            tracing::warn!("ignoring {}: {e}", path.display());
            Ok(None)
        }
    }
}

/// The boot stages' and `vmcust apply`'s hook: records what `prepared` applied. A record
/// that cannot be written is a warning: the customization itself is done.
pub(crate) fn record(root: &Root, prepared: &Prepared, changes: &[Change], by: &str) {
    let Some(mut rec) = from_prepared(root, prepared, changes, by) else {
        return;
    };
    // Applying again what is already there changes nothing, not even the record of what
    // the first time applied (scripts of this run still reach it through flush_scripts).
    let nothing = changes
        .iter()
        .all(|c| matches!(c, Change::Unchanged | Change::Skipped));
    if nothing && root.is_file(&path_for(&rec_dir_name(&rec))) {
        return;
    }
    // Scripts that ran before the apply in this same run (the pre-customization script)
    // belong to this record.
    rec.scripts = take_scripts();
    if let Err(e) = write(root, &rec) {
        tracing::warn!("could not record what was applied: {e:#}");
    }
}

fn rec_dir_name(rec: &Applied) -> String {
    crate::model::InstanceId::parse(&rec.instance_id)
        .map_or_else(|_| String::new(), |id| id.file_name())
}

/// Script runs of this process not yet in a record.
static SCRIPTS: Mutex<Vec<ScriptRecord>> = Mutex::new(Vec::new());

fn take_scripts() -> Vec<ScriptRecord> {
    SCRIPTS
        .lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default()
}

/// The hook after a script ran.
pub(crate) fn script_ran(phase: &str, script: &Path, end: &ScriptEnd, took: std::time::Duration) {
    let mut result = match end {
        ScriptEnd::Succeeded => "succeeded".to_string(),
        ScriptEnd::Interrupted => "interrupted".to_string(),
        ScriptEnd::Failed(why) => format!("failed: {why}"),
    };
    if let Some((cut, _)) = result.char_indices().nth(MAX_RESULT) {
        result.truncate(cut);
    }
    let rec = ScriptRecord {
        phase: phase.to_string(),
        script: script
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        result,
        ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        finished: crate::state::now(),
    };
    if let Ok(mut s) = SCRIPTS.lock() {
        if s.len() < MAX_SCRIPTS {
            s.push(rec);
        }
    }
}

/// At the end of a stage: adds the scripts this run ran to the newest customized
/// instance's record (creating a record with only them when the customization failed
/// before anything was applied). Bounded to the last [`MAX_SCRIPTS`].
pub(crate) fn flush_scripts(root: &Root) {
    let scripts = take_scripts();
    if scripts.is_empty() {
        return;
    }
    let newest = match crate::state::read_results(root) {
        Ok(r) => r.into_iter().next(),
        Err(e) => {
            tracing::warn!("could not record the scripts' results: {e:#}");
            return;
        }
    };
    let Some(newest) = newest else {
        return;
    };
    let dir_name = newest.instance_id.file_name();
    let mut rec = read(root, &dir_name)
        .ok()
        .flatten()
        .unwrap_or_else(|| Applied {
            instance_id: newest.instance_id.to_string(),
            by: "vmcust run".into(),
            recorded: crate::state::now(),
            ..Applied::default()
        });
    rec.scripts.extend(scripts);
    let excess = rec.scripts.len().saturating_sub(MAX_SCRIPTS);
    rec.scripts.drain(..excess);
    if let Err(e) = write(root, &rec) {
        tracing::warn!("could not record the scripts' results: {e:#}");
    }
}

/// After a stage's cloud-config modules (`stage`: `early` or `late`): adds to the record
/// of instance `id` how each module ended, the files its actions touched (mode and owner
/// as they were left) and the programs it ran. A module skipped because it already ran
/// keeps what its run recorded; `time_zone` is the document's, recorded when the
/// `timezone` module ran. A record that cannot be written is a warning.
pub(crate) fn record_modules(
    root: &Root,
    id: &crate::model::InstanceId,
    stage: &str,
    reports: &[ModuleReport],
    time_zone: Option<String>,
) {
    let dir_name = id.file_name();
    let mut rec = read(root, &dir_name)
        .ok()
        .flatten()
        .unwrap_or_else(|| Applied {
            instance_id: id.to_string(),
            by: "vmcust run".into(),
            recorded: crate::state::now(),
            ..Applied::default()
        });
    let before = rec.clone();
    let owners = Owners::read(root);
    for r in reports {
        let kept = rec.modules.iter().any(|m| m.module == r.module);
        if kept
            && matches!(&r.outcome, ModuleOutcome::Skipped { why } if why.starts_with("already ran"))
        {
            continue;
        }
        let (outcome, detail) = match &r.outcome {
            ModuleOutcome::Ran { note } => ("ran", note.clone()),
            ModuleOutcome::Skipped { why } => ("skipped", why.clone()),
            ModuleOutcome::Failed { why } => ("failed", why.clone()),
            ModuleOutcome::Interrupted => ("interrupted", String::new()),
        };
        let entry = ModuleRecord {
            module: r.module.to_string(),
            stage: stage.to_string(),
            outcome: outcome.to_string(),
            detail,
        };
        match rec.modules.iter_mut().find(|m| m.module == r.module) {
            Some(m) => *m = entry,
            None => rec.modules.push(entry),
        }
        if r.module == "timezone" && outcome == "ran" {
            rec.time_zone.clone_from(&time_zone);
        }
        // This run's files and commands replace the module's earlier ones.
        if !r.files.is_empty() {
            rec.files.retain(|f| f.module.as_deref() != Some(r.module));
            rec.files.extend(
                r.files
                    .iter()
                    .map(|f| module_file(root, &owners, r.module, f)),
            );
        }
        if !r.commands.is_empty() {
            rec.commands.retain(|c| c.module != r.module);
            rec.commands.extend(r.commands.iter().cloned());
        }
    }
    let excess = rec.commands.len().saturating_sub(MAX_COMMANDS);
    rec.commands.drain(..excess);
    if rec == before {
        return;
    }
    if let Err(e) = write(root, &rec) {
        tracing::warn!("could not record what the cloud-config modules did: {e:#}");
    }
}

/// Most commands kept in one record.
pub(crate) const MAX_COMMANDS: usize = 64;

fn module_file(root: &Root, owners: &Owners, module: &str, f: &FileDone) -> FileRecord {
    let (mode, owner) = owners.of(root, Path::new(&f.path));
    FileRecord {
        path: f.path.clone(),
        purpose: f.purpose.clone(),
        change: f.change.clone(),
        mode,
        owner,
        module: Some(module.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_show_as_ssh_keygen_prints_them() {
        // Generated with ssh-keygen; `ssh-keygen -lf` printed this fingerprint for it.
        let line = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFdIi7BduwfuU48BgN9a8EqHjzBXJfeQL+pqg6n+/Jpd alice@example";
        let k = key_record(line);
        assert_eq!(k.key_type, "ssh-ed25519");
        assert_eq!(k.comment.as_deref(), Some("alice@example"));
        assert_eq!(
            k.fingerprint,
            "SHA256:KjluU7sI/9fwI62mQlFT1ge/MZl5nmiUNpQeoEw+ppg"
        );
        let with_options = key_record(&format!("no-pty,command=\"x\" {line}"));
        assert_eq!(with_options.fingerprint, k.fingerprint);
        assert_eq!(key_record("ssh-rsa !!notbase64").fingerprint, "unknown");
        assert_eq!(key_record("ssh-rsa AAAA").comment, None);
    }

    /// A certificate shows as `ssh-keygen -l` shows it: by the fingerprint of the key it
    /// certifies. Real certificates made by `ssh-keygen -s`, for each kind of key.
    #[test]
    fn certificates_show_the_certified_key_as_ssh_keygen_does() {
        use std::process::Command;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let keygen = |args: &[&str]| {
            let out = Command::new("ssh-keygen")
                .args(args)
                .current_dir(d)
                .output()
                .expect("ssh-keygen (openssh-client) is needed for this test");
            assert!(out.status.success(), "ssh-keygen {args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        keygen(&["-q", "-t", "ed25519", "-N", "", "-C", "ca", "-f", "ca"]);
        // DSA only where this OpenSSH still makes DSA keys (it was removed in 9.8).
        let dsa = Command::new("ssh-keygen")
            .args(["-q", "-t", "dsa", "-N", "", "-C", "me@x", "-f", "dsa"])
            .current_dir(d)
            .output()
            .is_ok_and(|o| o.status.success());
        let kinds = [("ed25519", "256"), ("rsa", "2048"), ("ecdsa", "384")];
        for (kind, bits) in kinds.into_iter().chain(dsa.then_some(("dsa", "1024"))) {
            if kind != "dsa" {
                keygen(&[
                    "-q", "-t", kind, "-b", bits, "-N", "", "-C", "me@x", "-f", kind,
                ]);
            }
            keygen(&[
                "-q",
                "-s",
                "ca",
                "-I",
                "id",
                "-n",
                "root",
                &format!("{kind}.pub"),
            ]);
            let cert = std::fs::read_to_string(d.join(format!("{kind}-cert.pub"))).unwrap();
            // `ssh-keygen -l` prints `bits SHA256:... comment (TYPE-CERT)`.
            let listed = keygen(&["-l", "-f", &format!("{kind}-cert.pub")]);
            let want = listed.split_whitespace().nth(1).unwrap();
            let rec = key_record(cert.trim());
            assert!(rec.key_type.ends_with("-cert-v01@openssh.com"), "{rec:?}");
            assert_eq!(rec.fingerprint, want, "{kind}: {listed}");
            // The same as the plain key's.
            let plain = std::fs::read_to_string(d.join(format!("{kind}.pub"))).unwrap();
            assert_eq!(key_record(plain.trim()).fingerprint, want, "{kind}");
        }
        // A certificate cut short after its nonce is hashed whole rather than misread.
        assert!(certified_key(&[0, 0, 0, 1, b'x']).is_none());
        let short = [
            &[0u8, 0, 0, 32][..],
            b"ssh-ed25519-cert-v01@openssh.com",
            &[0, 0, 0, 0],
        ]
        .concat();
        assert!(certified_key(&short).is_none());
    }

    #[test]
    fn scripts_are_bounded() {
        for i in 0..MAX_SCRIPTS + 5 {
            script_ran(
                "user-data",
                Path::new("/x/user-data.sh"),
                &ScriptEnd::Failed("y".repeat(MAX_RESULT + i)),
                std::time::Duration::from_millis(3),
            );
        }
        let taken = take_scripts();
        assert_eq!(taken.len(), MAX_SCRIPTS);
        assert!(taken.iter().all(|s| s.result.chars().count() == MAX_RESULT));
        assert!(taken[0].result.starts_with("failed: yyy"));
        assert_eq!(taken[0].script, "user-data.sh");
        assert!(take_scripts().is_empty());
    }
}
