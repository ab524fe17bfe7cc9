//! The files provisioners wait on, in cloud-init's shapes: `status.json` and
//! `result.json` in `/var/lib/cloud/data/` (with the `/run/cloud-init/` links) and
//! `/var/lib/cloud/instance/boot-finished`. The boot stages keep them through
//! `boot::progress`; the stand-in's `status` reads them.
//!
//! Life cycle (reference fleet-contracts.md §1.3, §1.4, §9 item 3): the earliest stage of
//! a boot removes every one of them, each stage records its start and its end in
//! `status.json`, and the late stage writes `result.json` after `status.json` and
//! `boot-finished` last, each atomically (`Root::write_file`, a temporary file renamed),
//! so no reader sees half a file or "done" before the end. vmcust's early stage stands
//! for cloud-init's `init-local` and `init`, its late stage for `modules-config` and
//! `modules-final`. Nothing is written where a real cloud-init is installed: those files
//! are its own.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use super::CLAIMED_CLOUD_INIT_VERSION;
use crate::root::Root;
use crate::state::rfc2822;

/// cloud-init's stage record, the real file (Ansible's `cloud_init_data_facts` reads it
/// here, not through the link).
pub(crate) const DATA_STATUS: &str = "/var/lib/cloud/data/status.json";
/// cloud-init's result record: its existence means the boot's last stage ended.
pub(crate) const DATA_RESULT: &str = "/var/lib/cloud/data/result.json";
/// The link to [`DATA_STATUS`] that `cloud-init status` and most scripts read.
pub(crate) const RUN_STATUS: &str = "/run/cloud-init/status.json";
/// The link to [`DATA_RESULT`].
pub(crate) const RUN_RESULT: &str = "/run/cloud-init/result.json";
/// The link to the current instance's directory under [`INSTANCES`].
pub(crate) const INSTANCE_LINK: &str = "/var/lib/cloud/instance";
/// cloud-init's per-instance directories.
pub(crate) const INSTANCES: &str = "/var/lib/cloud/instances";
/// The file Packer, Terraform and Ansible `wait_for` poll for, in the instance directory.
pub(crate) const BOOT_FINISHED: &str = "/var/lib/cloud/instance/boot-finished";
/// What sealing a template removes (with each instance's `boot-finished`).
pub(crate) const RECORDS: [&str; 5] = [
    RUN_STATUS,
    RUN_RESULT,
    DATA_STATUS,
    DATA_RESULT,
    INSTANCE_LINK,
];
/// The instance cloud-init names when no data source gave one.
const NO_INSTANCE: &str = "iid-datasource-none";

/// The links' targets, relative as cloud-init makes them.
const LINKS: [(&str, &str); 2] = [
    (RUN_STATUS, "../../var/lib/cloud/data/status.json"),
    (RUN_RESULT, "../../var/lib/cloud/data/result.json"),
];

/// The most of a status record read back (a few KiB are expected).
const MAX_RECORD: u64 = 1024 * 1024;

/// One cloud-init stage in `status.json`. Fields in cloud-init's (sorted) key order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StageRecord {
    /// The stage's errors, as messages.
    #[serde(default)]
    pub errors: Vec<String>,
    /// When it ended, seconds since the epoch (cloud-init 23.4's clock).
    #[serde(default)]
    pub finished: Option<f64>,
    /// Recoverable errors by level name (`WARNING`).
    #[serde(default)]
    pub recoverable_errors: BTreeMap<String, Vec<String>>,
    /// When it started, seconds since the epoch.
    #[serde(default)]
    pub start: Option<f64>,
}

/// `status.json`'s `v1` object. Fields in cloud-init's (sorted) key order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StatusV1 {
    /// The data source as cloud-init prints it (`DataSourceVMware [seed=guestinfo]`);
    /// null until one gave a customization.
    #[serde(default)]
    pub datasource: Option<String>,
    /// cloud-init's network stage; vmcust's early stage does its work.
    #[serde(default)]
    pub init: StageRecord,
    /// cloud-init's local stage; vmcust's early stage.
    #[serde(default, rename = "init-local")]
    pub init_local: StageRecord,
    /// cloud-init's config stage; vmcust's late stage does its work.
    #[serde(default, rename = "modules-config")]
    pub modules_config: StageRecord,
    /// cloud-init's final stage; vmcust's late stage.
    #[serde(default, rename = "modules-final")]
    pub modules_final: StageRecord,
    /// The cloud-init stage running, null between and after them.
    #[serde(default)]
    pub stage: Option<String>,
}

impl StatusV1 {
    /// The four stages, in the order they run, with their names.
    pub(crate) fn stages(&self) -> [(&'static str, &StageRecord); 4] {
        [
            ("init-local", &self.init_local),
            ("init", &self.init),
            ("modules-config", &self.modules_config),
            ("modules-final", &self.modules_final),
        ]
    }

    /// Every stage's errors, in stage order.
    pub(crate) fn errors(&self) -> Vec<String> {
        self.stages()
            .iter()
            .flat_map(|(_, s)| s.errors.iter().cloned())
            .collect()
    }

    /// Every stage's recoverable errors, merged by level.
    pub(crate) fn recoverable_errors(&self) -> BTreeMap<String, Vec<String>> {
        let mut all: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (_, s) in self.stages() {
            for (level, msgs) in &s.recoverable_errors {
                let list = all.entry(level.clone()).or_default();
                for m in msgs {
                    if !list.contains(m) {
                        list.push(m.clone());
                    }
                }
            }
        }
        all
    }

    /// The latest start or end recorded, seconds since the epoch.
    pub(crate) fn last_update(&self) -> Option<f64> {
        self.stages()
            .iter()
            .flat_map(|(_, s)| [s.start, s.finished])
            .flatten()
            .reduce(f64::max)
    }

    /// The two records a vmcust stage stands for, the first one taking its errors (the
    /// early stage's are the data source's and the spec's, cloud-init's `init-local`; the
    /// late stage's are user-data's, cloud-init's `modules-final`).
    pub(crate) fn pair(
        &mut self,
        half: Half,
    ) -> (&mut StageRecord, &mut StageRecord, &'static str) {
        match half {
            Half::Local => (&mut self.init_local, &mut self.init, "init-local"),
            Half::Final => (
                &mut self.modules_final,
                &mut self.modules_config,
                "modules-config",
            ),
        }
    }
}

/// Which half of cloud-init's four stages a vmcust stage stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Half {
    /// `init-local` and `init`: vmcust's early stage.
    Local,
    /// `modules-config` and `modules-final`: vmcust's late stage.
    Final,
}

#[derive(Serialize, Deserialize)]
struct StatusDoc {
    v1: StatusV1,
}

/// `result.json`'s `v1` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ResultV1 {
    /// As in `status.json`.
    pub datasource: Option<String>,
    /// Every stage's errors.
    pub errors: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct ResultDoc {
    v1: ResultV1,
}

/// Seconds since the epoch, with a fraction, as cloud-init's `time.time()`.
pub(crate) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// cloud-init's JSON: one-space indents, sorted keys (our structs declare theirs in
/// order), a newline at the end.
pub(crate) fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    value
        .serialize(&mut ser)
        .context("encoding a status record")?;
    out.push(b'\n');
    Ok(out)
}

/// Reads `status.json`'s `v1` from the root; `None` when absent, unreadable or not
/// cloud-init's shape (a reader then goes by vmcust's own run status).
pub(crate) fn read_status_v1(root: &Root) -> Option<StatusV1> {
    let text = root
        .read_text_capped(
            Path::new(DATA_STATUS),
            MAX_RECORD,
            "cloud-init status record",
        )
        .ok()
        .flatten()?;
    serde_json::from_str::<StatusDoc>(&text).ok().map(|d| d.v1)
}

/// Removes the end-of-boot records: `result.json`, its link and `boot-finished`.
pub(crate) fn remove_end_records(root: &Root) -> Result<()> {
    for p in [RUN_RESULT, DATA_RESULT, BOOT_FINISHED] {
        root.remove_file(Path::new(p))
            .with_context(|| format!("removing {p}"))?;
    }
    Ok(())
}

/// Makes the `/run/cloud-init/` links point at the records, as cloud-init's are.
pub(crate) fn link(root: &Root, which: &str) -> Result<()> {
    for (path, target) in LINKS.iter().filter(|(p, _)| *p == which) {
        root.symlink(Path::new(path), Path::new(target))
            .with_context(|| format!("linking {path}"))?;
    }
    Ok(())
}

pub(crate) fn write_status_v1(root: &Root, v1: &StatusV1) -> Result<()> {
    let json = to_json(&StatusDoc { v1: v1.clone() })?;
    root.write_file(Path::new(DATA_STATUS), &json, 0o644)
        .with_context(|| format!("writing {DATA_STATUS}"))?;
    link(root, RUN_STATUS)
}

/// Writes `result.json` (durably, after everything before it) and its link.
pub(crate) fn write_result_v1(root: &Root, v1: &ResultV1) -> Result<()> {
    let json = to_json(&ResultDoc { v1: v1.clone() })?;
    root.write_record(Path::new(DATA_RESULT), &json, 0o644)
        .with_context(|| format!("writing {DATA_RESULT}"))?;
    link(root, RUN_RESULT)
}

/// Points [`INSTANCE_LINK`] at instance `id`'s directory (`iid-datasource-none` when no
/// customization named one) and writes `boot-finished` in it, durably and last.
pub(crate) fn write_boot_finished(root: &Root, id: Option<&str>, at: f64) -> Result<()> {
    let id = id.unwrap_or(NO_INSTANCE);
    let file = Path::new(INSTANCES).join(id).join("boot-finished");
    root.write_record(&file, boot_finished_line(at).as_bytes(), 0o644)
        .with_context(|| format!("writing {}", file.display()))?;
    // Relative, so that it leads to the same place from the root's own `/` and from an
    // image mounted elsewhere.
    let target = Path::new("instances").join(id);
    root.symlink(Path::new(INSTANCE_LINK), &target)
        .with_context(|| format!("linking {INSTANCE_LINK} to {}", target.display()))?;
    root.sync()
        .with_context(|| format!("making {BOOT_FINISHED} durable"))
}

/// `boot-finished`'s line: `<uptime> - <RFC 2822 time> - v. <version>`, as cloud-init's
/// final-message module writes it.
pub(crate) fn boot_finished_line(at: f64) -> String {
    let uptime = std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "0.00".to_string());
    format!(
        "{uptime} - {} - v. {CLAIMED_CLOUD_INIT_VERSION}\n",
        rfc2822(at as u64)
    )
}

/// The short name `cloud-init status` gives a data source: the first word without
/// `DataSource`, lower-cased (`vmware`).
pub(crate) fn short_datasource(full: &str) -> String {
    full.split_whitespace()
        .next()
        .unwrap_or("")
        .trim_start_matches("DataSource")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_cloud_inits() {
        for (full, short) in [
            ("DataSourceVMware [seed=guestinfo]", "vmware"),
            ("DataSourceNoCloud", "nocloud"),
            ("", ""),
        ] {
            assert_eq!(short_datasource(full), short);
        }
    }

    /// The JSON is cloud-init's: `v1`, the four stages with their four keys in sorted
    /// order, one-space indents.
    #[test]
    fn status_json_is_cloud_inits_layout() {
        let json = String::from_utf8(
            to_json(&StatusDoc {
                v1: StatusV1::default(),
            })
            .unwrap(),
        )
        .unwrap();
        let want = "{\n \"v1\": {\n  \"datasource\": null,\n  \"init\": {\n   \"errors\": [],\n   \
            \"finished\": null,\n   \"recoverable_errors\": {},\n   \"start\": null\n  },\n  \
            \"init-local\": {";
        assert!(json.starts_with(want), "{json}");
        let keys: Vec<&str> = json
            .lines()
            .filter(|l| l.starts_with("  \""))
            .map(|l| l.trim().split('"').nth(1).unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "datasource",
                "init",
                "init-local",
                "modules-config",
                "modules-final",
                "stage"
            ]
        );
    }
}
