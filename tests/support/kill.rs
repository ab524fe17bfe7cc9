//! Kill loops: a process tree killed at once, as systemd's cgroup kill does, and the seed
//! and round count a loop takes from the environment (so a failing run can be replayed).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::process::Child;

/// The processes that descend from `pid`, by their parent ids in `/proc`.
pub fn descendants(pid: i32) -> BTreeSet<i32> {
    let mut parent = BTreeMap::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        if let Some(pp) = stat
            .rsplit_once(") ")
            .and_then(|(_, r)| r.split_whitespace().nth(1)?.parse::<i32>().ok())
        {
            parent.insert(p, pp);
        }
    }
    let mut out = BTreeSet::new();
    loop {
        let before = out.len();
        for (&p, &pp) in &parent {
            if pp == pid || out.contains(&pp) {
                out.insert(p);
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// SIGKILL to the child and everything it started. Everything is stopped first, so that
/// nothing forks or exits meanwhile, then killed.
pub fn kill_tree(child: &mut Child) {
    let pid = child.id() as i32;
    // SAFETY: signalling a process id has no memory-safety preconditions.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let mut all = BTreeSet::new();
    loop {
        let found: BTreeSet<i32> = descendants(pid).difference(&all).copied().collect();
        if found.is_empty() {
            break;
        }
        for p in &found {
            unsafe { libc::kill(*p, libc::SIGSTOP) };
        }
        all.extend(found);
    }
    unsafe { libc::kill(pid, libc::SIGKILL) };
    for p in &all {
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
    let _ = child.wait();
}

/// `VMCUST_KILL_SEED` (odd), else one from the clock; and `VMCUST_KILL_ROUNDS`, else
/// `default_rounds`.
pub fn seed_and_rounds(default_rounds: usize) -> (u64, usize) {
    let seed = std::env::var("VMCUST_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
        | 1;
    let rounds = std::env::var("VMCUST_KILL_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_rounds);
    (seed, rounds)
}
