//! The hand-over: taking `/var/run/vmware-imc` into the pending copy, retiring it when its
//! customization is over, and refusing one that cannot be used. The paths are
//! [`crate::state`]'s.

use std::fs;
use std::io;
use std::path::Path;

use anyhow::{Context, Result};

use crate::root::Root;
use crate::state::{
    now, CUST_CFG, IMC_DIR, PENDING_DIR, PENDING_NEW, PENDING_RETIRED, REFUSED_DIR,
};

/// Largest file accepted from the hand-over directory (cust.cfg, scripts, user-data).
pub(crate) const MAX_HANDOVER_FILE: u64 = 16 * 1024 * 1024;

/// How many refused hand-overs are kept (the oldest go first).
pub const MAX_REFUSED: usize = 5;

/// How the hand-over was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ingested {
    /// A new pending copy was made.
    New,
    /// The hand-over is the one already pending (an earlier run was stopped after copying
    /// it and before removing it): the pending copy and its journal are kept.
    AlreadyPending,
}

/// Takes the hand-over: every regular file of it is copied into [`PENDING_NEW`] (0700,
/// files 0600: the spec may hold a password), which is then renamed to [`PENDING_DIR`]
/// in one step, and the hand-over directory is removed. A kill at any point leaves either
/// no pending copy or a whole one. Symlinks and oversized files are skipped.
pub(crate) fn ingest(root: &Root) -> Result<Ingested> {
    finish_retirement(root)?;
    let handed = root.resolve(&Path::new(IMC_DIR).join(CUST_CFG), false)?;
    let pending_cfg = Path::new(PENDING_DIR).join(CUST_CFG);
    if root.is_file(&pending_cfg) {
        let same = match (
            read_regular(&handed, MAX_HANDOVER_FILE),
            root.read(&pending_cfg),
        ) {
            (Ok(Some(a)), Ok(Some(b))) => a == b,
            _ => false,
        };
        if same {
            tracing::info!(
                "the hand-over is the customization already pending (an earlier run stopped \
                 before removing it): resuming it from its journal"
            );
            remove_handover_after_ingest(root);
            return Ok(Ingested::AlreadyPending);
        }
    }
    if root.is_dir(Path::new(PENDING_DIR)) {
        tracing::warn!("a new customization replaces the unfinished one in {PENDING_DIR}");
        retire_pending(root)?;
    }
    let from = root.resolve(Path::new(IMC_DIR), true)?;
    let new = root.resolve(Path::new(PENDING_NEW), false)?;
    {
        use std::os::unix::fs::DirBuilderExt as _;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(crate::root::DIR_MODE)
            .create(&new)
            .with_context(|| format!("creating {PENDING_NEW}"))?;
    }
    fs::set_permissions(&new, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    for name in root.list_dir(Path::new(IMC_DIR))? {
        if name.ends_with(".tmp") {
            continue;
        }
        let Some(bytes) = read_regular(&from.join(&name), MAX_HANDOVER_FILE)
            .with_context(|| format!("reading {IMC_DIR}/{name}"))?
        else {
            tracing::warn!("skipping {IMC_DIR}/{name}: not a regular file or too large");
            continue;
        };
        root.write_file(&Path::new(PENDING_NEW).join(&name), &bytes, 0o600)
            .with_context(|| format!("copying {name} into {PENDING_NEW}"))?;
    }
    // The copies on disk before the rename makes them the pending customization.
    root.sync()
        .with_context(|| format!("syncing {PENDING_NEW}"))?;
    super::journal::crash_point_at("ingest-copied");
    let pending = root.resolve(Path::new(PENDING_DIR), false)?;
    fs::rename(&new, &pending)
        .with_context(|| format!("renaming {PENDING_NEW} to {PENDING_DIR}"))?;
    sync_dir(&pending);
    super::journal::crash_point_at("ingest-renamed");
    remove_handover_after_ingest(root);
    Ok(Ingested::New)
}

/// The hand-over is in the pending copy now; failing to remove it only means the next run
/// recognises it as the one already pending.
fn remove_handover_after_ingest(root: &Root) {
    if let Err(e) = remove_handover(root) {
        tracing::warn!("{e:#}");
    }
}

/// Reads a regular file without following a symlink or blocking on a FIFO; `None` when
/// it is something else or larger than `cap`.
fn read_regular(path: &Path, cap: u64) -> io::Result<Option<Vec<u8>>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() > cap {
        return Ok(None);
    }
    let read = vmcust_imc::read_at_most(file, cap, meta.len())?;
    Ok((!read.cut).then_some(read.bytes))
}

/// Removes `/var/run/vmware-imc` (whatever the outcome, the hand-over is consumed).
pub(crate) fn remove_handover(root: &Root) -> Result<()> {
    remove_tree(root, IMC_DIR)
}

/// Retires the pending directory: renamed to [`PENDING_RETIRED`] in one step (from then
/// on no run resumes it), then removed with the copies of the spec (and any password).
pub(crate) fn retire_pending(root: &Root) -> Result<()> {
    let pending = root.resolve(Path::new(PENDING_DIR), false)?;
    if fs::symlink_metadata(&pending).is_err() {
        return finish_retirement(root);
    }
    remove_tree(root, PENDING_RETIRED)?;
    let retired = root.resolve(Path::new(PENDING_RETIRED), false)?;
    fs::rename(&pending, &retired)
        .with_context(|| format!("renaming {PENDING_DIR} to {PENDING_RETIRED}"))?;
    sync_dir(&retired);
    super::journal::crash_point_at("retire-renamed");
    remove_tree(root, PENDING_RETIRED)
}

/// Removes what a run stopped half-way through a retirement or an ingestion left: a
/// retired copy not yet removed, a pending copy not yet renamed into place.
pub(crate) fn finish_retirement(root: &Root) -> Result<()> {
    remove_tree(root, PENDING_RETIRED)?;
    remove_tree(root, PENDING_NEW)
}

/// Makes a rename or removal in `path`'s directory durable (best effort: a failure only
/// weakens the guarantee against a power cut, not against a kill).
fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent() {
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

/// Why the hand-over cannot be used, if it cannot: `cust.cfg` must be a regular file
/// owned by root, no larger than the spec cap, in a directory owned by root that neither
/// group nor others may write. Anything else may have been planted by a local user.
pub(crate) fn check_handover(root: &Root) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let what = |m: &fs::Metadata| {
        let t = m.file_type();
        if t.is_symlink() {
            "a symbolic link"
        } else if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            "a FIFO"
        } else if t.is_socket() {
            "a socket"
        } else {
            "a device"
        }
    };
    let dir = match root.resolve(Path::new(IMC_DIR), false) {
        Ok(d) => d,
        Err(e) => return Some(format!("{IMC_DIR} cannot be resolved: {e}")),
    };
    let dm = match fs::symlink_metadata(&dir) {
        Ok(m) => m,
        Err(e) => return Some(format!("{IMC_DIR}: {e}")),
    };
    if !dm.is_dir() {
        return Some(format!("{IMC_DIR} is {}, not a directory", what(&dm)));
    }
    if dm.uid() != 0 {
        return Some(format!("{IMC_DIR} is owned by uid {}, not root", dm.uid()));
    }
    if dm.mode() & 0o022 != 0 {
        return Some(format!(
            "{IMC_DIR} has mode {:o}: group or others may write it",
            dm.mode() & 0o7777
        ));
    }
    let cfg = match fs::symlink_metadata(dir.join(CUST_CFG)) {
        Ok(m) => m,
        Err(e) => return Some(format!("{IMC_DIR}/{CUST_CFG}: {e}")),
    };
    if !cfg.is_file() {
        return Some(format!(
            "{IMC_DIR}/{CUST_CFG} is {}, not a regular file",
            what(&cfg)
        ));
    }
    if cfg.uid() != 0 {
        return Some(format!(
            "{IMC_DIR}/{CUST_CFG} is owned by uid {}, not root",
            cfg.uid()
        ));
    }
    let cap = vmcust_imc::MAX_CUST_CFG_BYTES;
    if cfg.len() > cap {
        return Some(format!(
            "{IMC_DIR}/{CUST_CFG} is {} bytes, over the cap of {cap} bytes",
            cfg.len()
        ));
    }
    None
}

/// Moves a hand-over that cannot be used aside, into [`REFUSED_DIR`]`/<time>-<pid>/`
/// with a `reason` file (its regular files copied, 0600; nothing followed or opened that
/// is not a regular file), and removes it from `/var/run/vmware-imc`, so that
/// `vmcust-imc.path` does not start the unit for it again. Only the newest
/// [`MAX_REFUSED`] are kept. Moving aside is best effort (the state directory may be
/// full or read-only); the removal is not.
pub(crate) fn refuse_handover(root: &Root, reason: &str) -> Result<()> {
    if let Err(e) = move_aside(root, reason).and_then(|()| Ok(root.sync()?)) {
        tracing::warn!("could not keep the refused hand-over in {REFUSED_DIR}: {e:#}");
    }
    remove_handover(root)
}

fn move_aside(root: &Root, reason: &str) -> Result<()> {
    let name = format!("{}-{}", now(), std::process::id());
    let to = Path::new(REFUSED_DIR).join(&name);
    root.write_file(&to.join("reason"), format!("{reason}\n").as_bytes(), 0o600)?;
    let from = root.resolve(Path::new(IMC_DIR), false)?;
    if fs::symlink_metadata(&from).is_ok_and(|m| m.is_dir()) {
        for entry in fs::read_dir(&from)?.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if file == "reason" {
                continue;
            }
            if let Ok(Some(bytes)) = read_regular(&entry.path(), MAX_HANDOVER_FILE) {
                root.write_file(&to.join(&file), &bytes, 0o600)?;
            }
        }
    }
    let real = root.resolve(Path::new(REFUSED_DIR), false)?;
    fs::set_permissions(&real, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    let mut kept = root.list_dir(Path::new(REFUSED_DIR))?;
    kept.sort_by_key(|n| {
        n.split('-')
            .next()
            .and_then(|t| t.parse::<u64>().ok())
            .unwrap_or(0)
    });
    while kept.len() > MAX_REFUSED {
        let old = kept.remove(0);
        remove_tree(root, &format!("{REFUSED_DIR}/{old}"))?;
    }
    Ok(())
}

/// Removes a directory tree inside the root; already gone is fine.
fn remove_tree(root: &Root, path: &str) -> Result<()> {
    let dir = root.resolve(Path::new(path), false)?;
    match fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {path}"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::STATE_DIR;

    #[test]
    fn ingest_copies_private_and_removes_the_handover() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        let imc = d.path().join("var/run/vmware-imc");
        fs::create_dir_all(&imc).unwrap();
        fs::write(imc.join("cust.cfg"), "[MISC]\n").unwrap();
        fs::write(imc.join("nics.txt"), "0\n").unwrap();
        fs::write(imc.join("metadata.tmp"), "partial").unwrap();
        std::os::unix::fs::symlink("/etc/shadow", imc.join("evil")).unwrap();
        ingest(&root).unwrap();
        assert!(!imc.exists());
        let pending = d.path().join("var/lib/vmcust/pending");
        let mut names = root.list_dir(Path::new(PENDING_DIR)).unwrap();
        names.sort();
        assert_eq!(names, ["cust.cfg", "nics.txt"]);
        use std::os::unix::fs::MetadataExt;
        assert_eq!(fs::metadata(&pending).unwrap().mode() & 0o777, 0o700);
        assert_eq!(
            fs::metadata(pending.join("cust.cfg")).unwrap().mode() & 0o777,
            0o600
        );
    }

    fn hand_over(d: &Path, cfg: &str) {
        let imc = d.join("var/run/vmware-imc");
        fs::create_dir_all(&imc).unwrap();
        fs::write(imc.join("cust.cfg"), cfg).unwrap();
    }

    /// The hand-over found again after a kill between the rename and its removal is the
    /// pending one: its journal is kept. A different one replaces it.
    #[test]
    fn a_hand_over_already_pending_keeps_its_journal() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        let journal = d.path().join("var/lib/vmcust/pending/journal");
        hand_over(d.path(), "[MISC]\nMARKER-ID = a\n");
        assert_eq!(ingest(&root).unwrap(), Ingested::New);
        fs::write(&journal, "pre-script-started\n").unwrap();
        hand_over(d.path(), "[MISC]\nMARKER-ID = a\n");
        assert_eq!(ingest(&root).unwrap(), Ingested::AlreadyPending);
        assert_eq!(
            fs::read_to_string(&journal).unwrap(),
            "pre-script-started\n"
        );
        assert!(!d.path().join("var/run/vmware-imc").exists());
        hand_over(d.path(), "[MISC]\nMARKER-ID = b\n");
        assert_eq!(ingest(&root).unwrap(), Ingested::New);
        assert!(
            !journal.exists(),
            "a new customization starts a new journal"
        );
    }

    #[test]
    fn retiring_leaves_nothing_and_leftovers_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let root = Root::new(d.path()).unwrap();
        let state = d.path().join("var/lib/vmcust");
        for dir in ["pending", "pending.new", "pending.retired"] {
            fs::create_dir_all(state.join(dir)).unwrap();
            fs::write(state.join(dir).join("cust.cfg"), "x").unwrap();
        }
        retire_pending(&root).unwrap();
        assert!(!state.join("pending").exists() && !state.join("pending.retired").exists());
        finish_retirement(&root).unwrap();
        assert_eq!(
            root.list_dir(Path::new(STATE_DIR)).unwrap(),
            Vec::<String>::new()
        );
        // Nothing to retire is fine.
        retire_pending(&root).unwrap();
    }
}
