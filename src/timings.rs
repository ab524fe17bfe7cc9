//! Where boot time goes: each stage's and each timed step's duration for the last
//! [`MAX_BOOTS`] boots, kept in `/var/lib/vmcust/boot-times.json` for `vmcust analyze`
//! (as `cloud-init analyze` reads cloud-init's log).
//!
//! The boot engine's `timed` reports every step here as it ends; `vmcust run` calls
//! [`begin`] when it starts and [`record_stage`] when the stage ends, which adds the stage
//! to the record of this boot (the kernel's boot id tells boots apart; on a root that is
//! not the running system, an early stage starts a new boot).

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::root::Root;
use crate::state::BOOT_TIMES;

/// Boots kept; older ones are dropped.
pub const MAX_BOOTS: usize = 10;
/// Steps kept per stage (a stage has about ten; the rest are counted, not kept).
pub(crate) const MAX_STEPS: usize = 64;
/// Stages kept per boot (early, late, and late hand-overs through vmcust-imc).
pub(crate) const MAX_STAGES: usize = 8;
/// Longest step name kept.
const MAX_NAME: usize = 80;
/// Largest record read back; a bigger file is not ours and is started afresh.
const MAX_FILE: u64 = 1024 * 1024;
/// Where the kernel says which boot this is.
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// The last boots, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BootTimes {
    /// Oldest first, at most [`MAX_BOOTS`].
    pub boots: Vec<Boot>,
}

/// One boot's stages.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Boot {
    /// The kernel's boot id, when the root is the running system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
    /// The stages that ran, in order.
    pub stages: Vec<StageTime>,
}

/// One stage run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTime {
    /// `early` or `late`.
    pub stage: String,
    /// Seconds since the epoch when it started (RFC 3339 in the file).
    #[serde(with = "crate::state::time::as_rfc3339")]
    pub started: u64,
    /// How long the whole stage took.
    pub ms: f64,
    /// How it ended: `nothing`, `done`, `failed`, `interrupted`, `error`.
    pub ending: String,
    /// Its timed steps, in the order they ended.
    pub steps: Vec<StepTime>,
    /// Steps past [`MAX_STEPS`], counted only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub steps_dropped: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One timed step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepTime {
    /// What it did (`gather (cust.cfg)`, `apply`, …).
    pub step: String,
    /// When it started, in milliseconds after the stage started.
    pub at_ms: f64,
    /// How long it took.
    pub ms: f64,
}

struct Current {
    start: Option<(Instant, u64)>,
    steps: Vec<StepTime>,
    dropped: usize,
}

static CURRENT: Mutex<Current> = Mutex::new(Current {
    start: None,
    steps: Vec::new(),
    dropped: 0,
});

/// Marks the start of a stage in this process; steps are timed from here.
pub(crate) fn begin() {
    if let Ok(mut c) = CURRENT.lock() {
        c.start = Some((Instant::now(), crate::state::now()));
        c.steps.clear();
        c.dropped = 0;
    }
}

/// The hook at the end of every timed step, started at `start`.
pub(crate) fn step(what: &str, start: Instant) {
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let Ok(mut c) = CURRENT.lock() else {
        return;
    };
    // Steps outside a stage (`vmcust apply`, tests) are not a boot's.
    let Some((begun, _)) = c.start else {
        return;
    };
    if c.steps.len() >= MAX_STEPS {
        c.dropped += 1;
        return;
    }
    let at_ms = start.saturating_duration_since(begun).as_secs_f64() * 1000.0;
    c.steps.push(StepTime {
        step: what.chars().take(MAX_NAME).collect(),
        at_ms,
        ms,
    });
}

/// Ends the stage begun by [`begin`]: adds it, with its steps, to this boot's record.
/// A record that cannot be written is a warning: the boot's work is done.
pub(crate) fn record_stage(root: &Root, stage: &str, ending: &str) {
    let Some(stage_time) = take(stage, ending) else {
        return;
    };
    let boot_id = root
        .read_text(Path::new(BOOT_ID))
        .ok()
        .flatten()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty() && root.path() == Path::new("/"));
    let mut times = read(root).unwrap_or_else(|e| {
        tracing::warn!("{e:#}; starting it afresh");
        BootTimes::default()
    });
    add(&mut times, boot_id, stage_time);
    if let Err(e) = write(root, &times) {
        tracing::warn!("could not record the stage's times: {e:#}");
    }
}

fn take(stage: &str, ending: &str) -> Option<StageTime> {
    let mut c = CURRENT.lock().ok()?;
    let (begun, started) = c.start.take()?;
    Some(StageTime {
        stage: stage.to_string(),
        started,
        ms: begun.elapsed().as_secs_f64() * 1000.0,
        ending: ending.to_string(),
        steps: std::mem::take(&mut c.steps),
        steps_dropped: std::mem::take(&mut c.dropped),
    })
}

/// Adds `stage` to the boot it belongs to: the last boot when the boot ids match, or,
/// with no boot id, when it is not an early stage and the last boot has room; else a new
/// boot. Keeps the last [`MAX_BOOTS`].
pub(crate) fn add(times: &mut BootTimes, boot_id: Option<String>, stage: StageTime) {
    let same = times
        .boots
        .last()
        .is_some_and(|last| match (&boot_id, &last.boot_id) {
            (Some(a), Some(b)) => a == b,
            (None, None) => stage.stage != "early",
            _ => false,
        });
    match times.boots.last_mut() {
        Some(last) if same && last.stages.len() < MAX_STAGES => last.stages.push(stage),
        _ => times.boots.push(Boot {
            boot_id,
            stages: vec![stage],
        }),
    }
    let excess = times.boots.len().saturating_sub(MAX_BOOTS);
    times.boots.drain(..excess);
}

/// Reads the record; none yet is an empty one.
pub fn read(root: &Root) -> Result<BootTimes> {
    let Some(bytes) = root
        .read_capped(Path::new(BOOT_TIMES), MAX_FILE, "boot-times record")
        .with_context(|| format!("reading {BOOT_TIMES}"))?
    else {
        return Ok(BootTimes::default());
    };
    serde_json::from_slice(&bytes).with_context(|| format!("{BOOT_TIMES} is not vmcust's record"))
}

fn write(root: &Root, times: &BootTimes) -> Result<()> {
    let text = serde_json::to_string_pretty(times)? + "\n";
    root.write_file(Path::new(BOOT_TIMES), text.as_bytes(), 0o644)
        .with_context(|| format!("writing {BOOT_TIMES}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(name: &str) -> StageTime {
        StageTime {
            stage: name.into(),
            started: 1,
            ms: 2.0,
            ending: "done".into(),
            steps: vec![],
            steps_dropped: 0,
        }
    }

    #[test]
    fn stages_join_their_boot_and_old_boots_go() {
        let mut t = BootTimes::default();
        // Without a boot id: early starts a boot, late joins it.
        add(&mut t, None, stage("early"));
        add(&mut t, None, stage("late"));
        add(&mut t, None, stage("early"));
        assert_eq!(t.boots.len(), 2);
        assert_eq!(t.boots[0].stages.len(), 2);
        // With one: the id decides, whatever the stage.
        add(&mut t, Some("b1".into()), stage("early"));
        add(&mut t, Some("b1".into()), stage("early"));
        add(&mut t, Some("b2".into()), stage("late"));
        assert_eq!(t.boots.len(), 4);
        assert_eq!(t.boots[2].stages.len(), 2);
        for _ in 0..MAX_BOOTS * 2 {
            add(&mut t, None, stage("early"));
        }
        assert_eq!(t.boots.len(), MAX_BOOTS);
        for _ in 0..MAX_STAGES + 3 {
            add(&mut t, Some("b9".into()), stage("late"));
        }
        assert_eq!(t.boots.last().unwrap().stages.len(), 3);
    }

    #[test]
    fn steps_are_timed_from_the_stage_and_bounded() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        // Outside a stage nothing is kept.
        step("before", Instant::now());
        begin();
        for i in 0..MAX_STEPS + 2 {
            step(&format!("step {i} {}", "x".repeat(100)), Instant::now());
        }
        record_stage(&root, "early", "done");
        let t = read(&root).unwrap();
        let s = &t.boots[0].stages[0];
        assert_eq!((s.stage.as_str(), s.ending.as_str()), ("early", "done"));
        // (Other tests of this process may time steps meanwhile: count at least ours.)
        assert_eq!(s.steps.len(), MAX_STEPS);
        assert!(s.steps_dropped >= 2, "{}", s.steps_dropped);
        assert!(s.steps.iter().any(|x| x.step.starts_with("step 0 ")));
        assert!(s.steps.iter().all(|x| x.step.chars().count() <= MAX_NAME));
        assert!(s.steps.iter().any(|x| x.step.chars().count() == MAX_NAME));
        assert!(s.steps.iter().all(|x| x.at_ms <= s.ms));
        // A second record_stage without begin adds nothing.
        record_stage(&root, "late", "done");
        assert_eq!(read(&root).unwrap(), t);
    }
}
