//! Which VM this is, and whether guestinfo and OVF data may customize it: the DMI product
//! UUID recorded at every boot and with every customization, and the rule built on it.
//!
//! Guestinfo can be written by any process in the guest unless the host closed that door
//! (`docs/security.md`), so a changed instance-id there proves nothing. The product UUID
//! can only be changed by the host (a clone or a new deployment gets a new one). Hence:
//! guestinfo and the OVF environment customize a *new* VM — one whose product UUID is not
//! the one recorded at the last boot nor one recorded with a customization — or a VM that
//! was never customized (a failed customization that changed nothing does not count: the
//! VM is as it was); on the same VM a new instance-id from them is refused, unless
//! `[trust] recustomize_same_vm` says the host closed the door.
//!
//! ```text
//! /var/lib/vmcust/boot-identity          the product UUID at the last early stage
//! /var/lib/vmcust/instances/ID/vm-uuid   the product UUID the instance was customized on
//! /var/lib/vmcust/refused.json           the last new instance refused on this VM
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::host::platform::Platform;
use crate::model::InstanceId;
use crate::root::Root;
use crate::state::BOOT_IDENTITY;
use crate::state::CUSTOMIZED_ON;
use crate::state::REFUSED;
use crate::state::{self, INSTANCES_DIR};

/// Longest product UUID kept (a UUID is 36 characters; DMI may hold junk).
const MAX_UUID_CHARS: usize = 64;

/// What the state directory says about this VM, read once at the start of a boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    /// This boot's product UUID, lower-cased; `None` when DMI cannot be read.
    pub current: Option<String>,
    /// The product UUID recorded at the last boot.
    pub last_boot: Option<String>,
    /// The product UUIDs recorded with customizations.
    pub customized_on: Vec<String>,
    /// Whether any customization was ever recorded (with or without a UUID), other than
    /// failures that changed nothing.
    pub customized: bool,
}

impl Identity {
    /// Reads the records under `root` for the VM `platform` describes. Unreadable records
    /// count as absent, except the list of instances: a list that cannot be read counts
    /// as customized (fail closed), as "never customized" would let guestinfo in.
    pub(crate) fn read(root: &Root, platform: &Platform) -> Identity {
        let last_boot = read_uuid(root, Path::new(BOOT_IDENTITY));
        let mut customized_on = Vec::new();
        let mut customized = false;
        let names = root.list_dir(Path::new(INSTANCES_DIR)).unwrap_or_else(|e| {
            tracing::warn!(
                "cannot list {INSTANCES_DIR} ({e}): counting this VM as customized \
                     before, so guestinfo and OVF data do not customize it unless its \
                     product UUID is new"
            );
            customized = true;
            Vec::new()
        });
        for name in names {
            let dir = Path::new(INSTANCES_DIR).join(&name);
            let result = dir.join(state::RESULT_JSON);
            if !root.is_file(&result) {
                // Not (yet) a customization: no record of how one ended.
            } else if failed_without_change(root, &result) {
                // It failed and changed nothing: the VM is as if never customized, so
                // this instance neither counts nor makes its UUID "seen".
                continue;
            } else {
                customized = true;
            }
            if let Some(uuid) = read_uuid(root, &dir.join(CUSTOMIZED_ON)) {
                customized_on.push(uuid);
            }
        }
        Identity {
            current: platform.default_instance_id().map(|u| clean(&u)),
            last_boot,
            customized_on,
            customized,
        }
    }

    /// Whether this boot may be a new VM's first: the product UUID differs from the last
    /// boot's, or either is unknown. Only then is it worth waiting for a vSphere spec.
    pub(crate) fn may_be_new(&self) -> bool {
        match (&self.current, &self.last_boot) {
            (Some(now), Some(last)) => now != last,
            _ => true,
        }
    }

    /// Whether guestinfo and OVF data may bring a new instance: the VM was never
    /// customized, or its product UUID is known and recorded neither at the last boot nor
    /// with any customization (a clone, a new deployment). An unreadable UUID on a VM
    /// customized before fails closed.
    pub(crate) fn is_new_vm(&self) -> bool {
        if !self.customized {
            return true;
        }
        let Some(now) = &self.current else {
            return false;
        };
        let seen = self.last_boot.as_ref() == Some(now) || self.customized_on.contains(now);
        let known = self.last_boot.is_some() || !self.customized_on.is_empty();
        known && !seen
    }

    /// Why [`is_new_vm`](Self::is_new_vm) says what it says, for the log and `detect`.
    pub(crate) fn reason(&self) -> String {
        let uuid = self.current.as_deref().unwrap_or("unknown");
        if !self.customized {
            return format!("this VM (product UUID {uuid}) was never customized");
        }
        if self.is_new_vm() {
            return format!(
                "a new VM: its product UUID {uuid} differs from the one recorded at the last \
                 boot and with every customization (a clone or a new deployment)"
            );
        }
        match &self.current {
            None => "the product UUID cannot be read (sys/class/dmi/id/product_uuid), so this \
                     VM, customized before, cannot be told from a new one"
                .to_string(),
            Some(_) => format!(
                "the same VM as customized before (product UUID {uuid}); guestinfo and the \
                 OVF environment customize a new VM only, as guest users can write guestinfo"
            ),
        }
    }
}

/// Records this boot's product UUID as the last boot's. A failure is logged, not fatal:
/// the per-customization record still tells the same VM apart.
pub(crate) fn record_boot(root: &Root, platform: &Platform) {
    let Some(uuid) = platform.default_instance_id() else {
        return;
    };
    let text = format!("{}\n", clean(&uuid));
    if let Err(e) = root.write_file(Path::new(BOOT_IDENTITY), text.as_bytes(), 0o644) {
        tracing::warn!("could not record this VM's identity in {BOOT_IDENTITY}: {e}");
    }
}

/// Records the product UUID `id` was customized on, next to its result.
pub(crate) fn record_customization(root: &Root, id: &InstanceId, platform: &Platform) {
    let Some(uuid) = platform.default_instance_id() else {
        return;
    };
    let path = state::instance_dir(id).join(CUSTOMIZED_ON);
    let text = format!("{}\n", clean(&uuid));
    if let Err(e) = root.write_file(&path, text.as_bytes(), 0o644) {
        tracing::warn!(
            "could not record the VM identity in {}: {e}",
            path.display()
        );
    }
}

/// A new instance refused on the same VM, as `vmcust status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Refusal {
    /// The instance id that was refused.
    pub instance_id: InstanceId,
    /// Where it came from (e.g. `OVF environment (/dev/sr0)`).
    pub source: String,
    /// Why, for people.
    pub reason: String,
    /// Seconds since the epoch.
    pub at: u64,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refused: new instance {} from {} at {}: {}; to allow it, close the guestinfo \
             door on the host and set [trust] recustomize_same_vm = true (docs/security.md)",
            self.instance_id,
            self.source,
            crate::state::rfc3339(self.at),
            self.reason
        )
    }
}

/// Records `refusal` for `vmcust status`; a failure is logged.
pub(crate) fn record_refusal(root: &Root, refusal: &Refusal) {
    let written = serde_json::to_string_pretty(refusal)
        .map_err(std::io::Error::other)
        .and_then(|t| root.write_file(Path::new(REFUSED), (t + "\n").as_bytes(), 0o644));
    if let Err(e) = written {
        tracing::warn!("could not record the refusal in {REFUSED}: {e}");
    }
}

/// Forgets an earlier refusal (the boot that looked found none, or took a new instance).
pub(crate) fn clear_refusal(root: &Root) {
    if let Ok(path) = root.resolve(Path::new(REFUSED), false) {
        let _ = std::fs::remove_file(path);
    }
}

/// The recorded refusal, if any (an unreadable record counts as none).
pub(crate) fn read_refusal(root: &Root) -> Option<Refusal> {
    let text = root.read_text(Path::new(REFUSED)).ok().flatten()?;
    serde_json::from_str(&text).ok()
}

/// Whether the record at `path` is of a customization that failed and changed nothing.
/// A record that cannot be read or parsed says no (fail closed: it counts as a
/// customization).
fn failed_without_change(root: &Root, path: &Path) -> bool {
    root.read(path)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<state::InstanceResult>(&b).ok())
        .is_some_and(|r| r.failed_without_change())
}

/// The first line of `path` under `root` as a lower-cased UUID, if it holds one.
fn read_uuid(root: &Root, path: &Path) -> Option<String> {
    let text = root.read_text(path).ok().flatten()?;
    let uuid = clean(text.lines().next().unwrap_or_default());
    (!uuid.is_empty()).then_some(uuid)
}

/// Trimmed, lower-cased (Linux 4.17 changed the case) and bounded.
fn clean(uuid: &str) -> String {
    uuid.trim()
        .chars()
        .take(MAX_UUID_CHARS)
        .collect::<String>()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(
        current: Option<&str>,
        last_boot: Option<&str>,
        on: &[&str],
        customized: bool,
    ) -> Identity {
        Identity {
            current: current.map(str::to_string),
            last_boot: last_boot.map(str::to_string),
            customized_on: on.iter().map(|s| s.to_string()).collect(),
            customized,
        }
    }

    // threat T2 (a guest user's guestinfo re-customizes the same VM) and T5 (a clone
    // must still be customized): the rule, table-driven.
    #[test]
    fn new_vm_rule() {
        let cases = [
            (
                "never customized",
                identity(Some("a"), Some("a"), &[], false),
                true,
            ),
            (
                "never customized, no uuid",
                identity(None, None, &[], false),
                true,
            ),
            (
                "same uuid as last boot",
                identity(Some("a"), Some("a"), &[], true),
                false,
            ),
            (
                "same uuid as a customization",
                identity(Some("a"), Some("b"), &["a"], true),
                false,
            ),
            (
                "clone: new uuid",
                identity(Some("c"), Some("a"), &["a"], true),
                true,
            ),
            (
                "clone: boot record only",
                identity(Some("c"), Some("a"), &[], true),
                true,
            ),
            (
                "unreadable uuid, customized",
                identity(None, Some("a"), &["a"], true),
                false,
            ),
            (
                "customized, nothing recorded",
                identity(Some("a"), None, &[], true),
                false,
            ),
        ];
        for (what, id, new) in cases {
            assert_eq!(id.is_new_vm(), new, "{what}: {}", id.reason());
        }
    }

    // threat T2: an instances directory that cannot be listed must not read as "never
    // customized", which would let guestinfo re-customize the same VM (fail closed).
    #[test]
    fn an_unlistable_instances_directory_counts_as_customized() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        let platform = Platform {
            product_uuid: Some("4217e0a1-aaaa".into()),
            ..Platform::default()
        };
        record_boot(&root, &platform);
        let instances = d.path().join(INSTANCES_DIR.trim_start_matches('/'));
        std::fs::create_dir_all(instances.parent().unwrap()).unwrap();
        std::fs::write(&instances, "not a directory").unwrap();
        assert!(root.list_dir(Path::new(INSTANCES_DIR)).is_err());
        let id = Identity::read(&root, &platform);
        assert!(id.customized, "{id:?}");
        assert!(!id.is_new_vm(), "{}", id.reason());
        // A clone (new product UUID) is still new.
        let clone = Platform {
            product_uuid: Some("4217e0a1-bbbb".into()),
            ..Platform::default()
        };
        assert!(Identity::read(&root, &clone).is_new_vm());
    }

    fn result(id: &str, outcome: &str, nothing_changed: bool) -> state::InstanceResult {
        state::InstanceResult {
            instance_id: InstanceId::parse(id).unwrap(),
            outcome: outcome.into(),
            code: 0,
            error: (outcome == "failed").then(|| "bad time zone".to_string()),
            finished: 1,
            steps: vec![],
            origins: Default::default(),
            degraded: Vec::new(),
            user_data: None,
            nothing_changed,
        }
    }

    // threat T17: a VM whose every customization failed and changed nothing is as if
    // never customized; any other record (done, a failure that changed something, an
    // old record without the field, an unreadable one) counts as customized.
    #[test]
    fn only_failures_that_changed_nothing_leave_a_vm_uncustomized() {
        let platform = Platform {
            product_uuid: Some("4217e0a1-aaaa".into()),
            ..Platform::default()
        };
        let failed_clean = result("i-1", "failed", true);
        let cases: [(&str, Option<&str>, bool); 5] = [
            ("failed, nothing changed", None, false),
            ("failed, something ran", Some("failed-changed"), true),
            ("done", Some("done"), true),
            (
                "old record without the field",
                Some(
                    r#"{"instance_id":"i-2","outcome":"failed","code":0,"finished":1,"steps":[]}"#,
                ),
                true,
            ),
            ("unreadable record", Some("{not json"), true),
        ];
        for (what, second, customized) in cases {
            let d = tempfile::tempdir().unwrap();
            let root = Root::new(d.path()).unwrap();
            record_boot(&root, &platform);
            state::write_result(&root, &failed_clean).unwrap();
            record_customization(&root, &failed_clean.instance_id, &platform);
            let id2 = InstanceId::parse("i-2").unwrap();
            match second {
                None => {}
                Some("failed-changed") => {
                    state::write_result(&root, &result("i-2", "failed", false)).unwrap()
                }
                Some("done") => state::write_result(&root, &result("i-2", "done", false)).unwrap(),
                Some(text) => root
                    .write_file(
                        &state::instance_dir(&id2).join(state::RESULT_JSON),
                        text.as_bytes(),
                        0o644,
                    )
                    .unwrap(),
            }
            if second.is_some() {
                record_customization(&root, &id2, &platform);
            }
            let id = Identity::read(&root, &platform);
            assert_eq!(id.customized, customized, "{what}: {id:?}");
            assert_eq!(id.is_new_vm(), !customized, "{what}: {}", id.reason());
            let expected: &[&str] = if customized { &["4217e0a1-aaaa"] } else { &[] };
            assert_eq!(id.customized_on, expected, "{what}");
        }
    }

    #[test]
    fn may_be_new_compares_with_the_last_boot() {
        assert!(identity(Some("a"), None, &[], true).may_be_new());
        assert!(identity(Some("a"), Some("b"), &[], true).may_be_new());
        assert!(!identity(Some("a"), Some("a"), &[], true).may_be_new());
    }

    #[test]
    fn records_round_trip_and_case_is_ignored() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        let platform = Platform {
            product_uuid: Some("4217E0A1-AAAA".into()),
            ..Platform::default()
        };
        let fresh = Identity::read(&root, &platform);
        assert!(fresh.is_new_vm() && !fresh.customized);
        record_boot(&root, &platform);
        let id = InstanceId::parse("i-1").unwrap();
        state::write_result(
            &root,
            &state::InstanceResult {
                instance_id: id.clone(),
                outcome: "done".into(),
                code: 0,
                error: None,
                finished: 1,
                steps: vec![],
                origins: Default::default(),
                degraded: Vec::new(),
                user_data: None,
                nothing_changed: false,
            },
        )
        .unwrap();
        record_customization(&root, &id, &platform);
        let after = Identity::read(&root, &platform);
        assert_eq!(after.current.as_deref(), Some("4217e0a1-aaaa"));
        assert_eq!(after.last_boot.as_deref(), Some("4217e0a1-aaaa"));
        assert_eq!(after.customized_on, ["4217e0a1-aaaa"]);
        assert!(!after.is_new_vm());
        let refusal = Refusal {
            instance_id: InstanceId::parse("i-2").unwrap(),
            source: "guestinfo".into(),
            reason: "same VM".into(),
            at: 0,
        };
        record_refusal(&root, &refusal);
        assert_eq!(read_refusal(&root), Some(refusal));
        clear_refusal(&root);
        assert_eq!(read_refusal(&root), None);
    }
}
