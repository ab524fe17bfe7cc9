//! The instance record: how a customization ended (`instances/ID/result.json`), what it
//! degraded, and what happens to its user-data, decided once when the plan is made and
//! read by the boot stages.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{instance_dir, INSTANCES_DIR, RESULT_JSON};
use crate::model::InstanceId;
use crate::root::Root;

/// How a customization ended, as recorded for `vmcust status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceResult {
    /// The instance id.
    pub instance_id: InstanceId,
    /// `done` or `failed`.
    pub outcome: String,
    /// The code sent to the host (0 on success).
    pub code: u16,
    /// The reason of a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Seconds since the epoch when it ended (RFC 3339 in the file; an older record's
    /// integer is read too).
    #[serde(with = "super::time::as_rfc3339")]
    pub finished: u64,
    /// Steps completed, in order.
    pub steps: Vec<String>,
    /// Which source each field came from, when several sources were merged (the
    /// user-data's source under `user-data`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub origins: std::collections::BTreeMap<String, String>,
    /// What was asked for and not done (a cloud-config key vmcust does not apply): the
    /// customization is done but degraded, and `status` exits 2 naming each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub degraded: Vec<String>,
    /// What happens to the user-data, as the plan decided it; `None` when there is none
    /// (or the record was written by a vmcust that did not keep the decision).
    #[serde(default, rename = "user-data", skip_serializing_if = "Option::is_none")]
    pub user_data: Option<UserDataDisposition>,
    /// A failed customization that changed nothing: refused before anything was applied,
    /// or applied and fully put back, with no script or user-data command run. Such an
    /// instance does not count as a customization (`boot::vm_identity`,
    /// docs/security.md). `false` for every other record and for records written without
    /// the field (fail closed: they count as customizations).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nothing_changed: bool,
}

impl InstanceResult {
    /// Whether this record is of a customization that failed and changed nothing, so that
    /// the VM is as if it had never been customized.
    pub(crate) fn failed_without_change(&self) -> bool {
        self.outcome == "failed" && self.nothing_changed
    }
}

/// What happens to user-data in the late stage: decided once, when the plan is made
/// (`engine::customize::user_data_disposition`), shown by `vmcust plan`, kept in the
/// instance record and read back by the boot stages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "disposition", content = "reason")]
pub enum UserDataDisposition {
    /// Handed to the installed cloud-init through its NoCloud seed.
    CloudInitSeed,
    /// Run once as a script (it starts with `#!`).
    RunScript,
    /// Applied by vmcust itself (`#cloud-config`, MIME, gzip).
    Native,
    /// Not run: it needs cloud-init, which is not installed.
    Rejected(String),
}

/// Adds `degraded` to the instance's recorded result (best effort: the customization is
/// over and reported; a record that cannot be updated is said in the log).
pub(crate) fn add_degraded(root: &Root, id: &InstanceId, degraded: &[String]) {
    let path = instance_dir(id).join(RESULT_JSON);
    let updated = root
        .read(&path)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<InstanceResult>(&b).ok())
        .map(|mut r| {
            r.degraded.extend(degraded.iter().cloned());
            r
        });
    match updated {
        Some(r) => {
            if let Err(e) = write_result(root, &r) {
                tracing::warn!("recording what was not applied: {e:#}");
            }
        }
        None => tracing::warn!("recording what was not applied: no result for instance {id}"),
    }
}

/// Writes an instance's result record.
pub fn write_result(root: &Root, result: &InstanceResult) -> Result<()> {
    let path = instance_dir(&result.instance_id).join(RESULT_JSON);
    let text = serde_json::to_string_pretty(result)? + "\n";
    // A record: the instance counts as customized once it is on disk, so what it
    // vouches for goes to disk first.
    root.write_record(&path, text.as_bytes(), 0o644)
        .with_context(|| format!("writing {}", path.display()))
}

/// Every recorded instance result, newest first.
pub fn read_results(root: &Root) -> Result<Vec<InstanceResult>> {
    let mut out = Vec::new();
    for id in root.list_dir(Path::new(INSTANCES_DIR))? {
        let path = Path::new(INSTANCES_DIR).join(&id).join(RESULT_JSON);
        if let Some(text) = root.read_text(&path)? {
            match serde_json::from_str::<InstanceResult>(&text) {
                Ok(r) => out.push(r),
                Err(e) => tracing::warn!("ignoring {}: {e}", path.display()),
            }
        }
    }
    out.sort_by_key(|r| std::cmp::Reverse(r.finished));
    Ok(out)
}

/// The recorded result of instance `id`, if there is one that can be read.
pub(crate) fn read_result(root: &Root, id: &InstanceId) -> Option<InstanceResult> {
    let bytes = root
        .read(&instance_dir(id).join(RESULT_JSON))
        .ok()
        .flatten()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(user_data: Option<UserDataDisposition>) -> InstanceResult {
        InstanceResult {
            instance_id: InstanceId::parse("i-1").unwrap(),
            outcome: "done".into(),
            code: 0,
            error: None,
            finished: 1,
            steps: vec![],
            origins: Default::default(),
            degraded: vec![],
            user_data,
            nothing_changed: false,
        }
    }

    /// The plan's decision is written with the record and read back; a record written
    /// without one (by a vmcust that did not keep it) still reads, with none.
    #[test]
    fn the_user_datas_disposition_is_kept_and_old_records_still_read() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        let rejected = UserDataDisposition::Rejected("needs cloud-init".into());
        for fate in [
            UserDataDisposition::CloudInitSeed,
            UserDataDisposition::RunScript,
            UserDataDisposition::Native,
            rejected,
        ] {
            write_result(&root, &record(Some(fate.clone()))).unwrap();
            let back = read_result(&root, &InstanceId::parse("i-1").unwrap()).unwrap();
            assert_eq!(back.user_data, Some(fate));
        }
        let text = serde_json::to_string(&record(Some(UserDataDisposition::Native))).unwrap();
        assert!(
            text.contains(r#""user-data":{"disposition":"native"}"#),
            "{text}"
        );
        let old = r#"{"instance_id":"i-1","outcome":"done","code":0,"finished":1,"steps":[]}"#;
        let old: InstanceResult = serde_json::from_str(old).unwrap();
        assert_eq!(old, record(None));
        assert!(!serde_json::to_string(&old).unwrap().contains("user-data"));
        // An old record, without the field, counts as a customization (fail closed); the
        // field is written only when true.
        assert!(!old.failed_without_change());
        assert!(!serde_json::to_string(&old)
            .unwrap()
            .contains("nothing_changed"));
        let failed = InstanceResult {
            outcome: "failed".into(),
            nothing_changed: true,
            ..record(None)
        };
        let text = serde_json::to_string(&failed).unwrap();
        assert!(text.contains(r#""nothing_changed":true"#), "{text}");
        assert!(serde_json::from_str::<InstanceResult>(&text)
            .unwrap()
            .failed_without_change());
    }
}
