//! The system being customized, seen through a root directory (`/` at boot, any
//! directory for tests and image builders).
//!
//! Every path is resolved inside the root: `..` stops at the root and absolute symlink
//! targets are read relative to it, so a hostile or simply foreign image can never make
//! vmcust read or write outside it. Writes are atomic: temp file in the same directory,
//! mode set, (for a file that replaces another) fsync, rename. They are made durable in
//! batches: [`Root::sync`] syncs each file system written to once, and every record that
//! says something is done is written with [`Root::write_record`], which syncs first, so
//! what a record vouches for is on disk before the record is. What is written keeps or gets its
//! SELinux label (src/selinux): a replaced file's label is copied onto the temp file before
//! the rename, and anything created gets the label the root's policy gives its path.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::selinux::{self, Kind, Labeler};

/// Symlinks followed while resolving one path before giving up (as Linux's MAXSYMLINKS).
const MAX_SYMLINKS: usize = 40;

/// The mode of a directory vmcust creates where no other is asked for (a missing parent,
/// the state and log directories): given explicitly, never left to the umask.
pub(crate) const DIR_MODE: u32 = 0o755;

/// What currently exists at a path inside the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Existing {
    /// Nothing there.
    Missing,
    /// A regular file with these contents and permission bits.
    File {
        /// File contents.
        contents: Vec<u8>,
        /// Permission bits (`0o644`).
        mode: u32,
    },
    /// A symbolic link pointing at this target (as written in the link).
    Symlink(PathBuf),
    /// A directory, device, socket or other non-file.
    Other,
}

/// What one `openat2` beneath the root settled about a path ([`Root::open_direct`]).
enum Direct {
    /// Opened: no symlink on the way.
    Open(File),
    /// Absent, before any symlink.
    Missing,
    /// Not settled: resolve it the general way.
    Resolve,
}

/// Cleared for good when the kernel (before 5.6) or a seccomp filter refuses `openat2`.
static OPENAT2_WORKS: AtomicBool = AtomicBool::new(true);

/// A root directory that confines every path vmcust touches.
#[derive(Debug, Clone)]
pub struct Root {
    dir: PathBuf,
    /// The root directory, open for `openat2` lookups beneath it.
    handle: Arc<OwnedFd>,
    /// The root's SELinux policy, read when a label is first needed.
    labels: Arc<Labeler>,
    /// Directories with renames or creations not yet on disk (see [`Root::sync`]).
    unsynced: Arc<Unsynced>,
}

/// Directories written in and not yet synced; synced when the last clone of the root
/// goes, so that a command that wrote through a root has it on disk when it ends.
#[derive(Debug, Default)]
struct Unsynced(Mutex<Vec<PathBuf>>);

impl Unsynced {
    fn take(&self) -> Vec<PathBuf> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for Unsynced {
    fn drop(&mut self) {
        // Best effort: the stages call `Root::sync` themselves and report its errors.
        let _ = sync_file_systems(self.take());
    }
}

/// Whether `dir` is on a file system in memory (`/run`), which a power cut empties anyway.
fn in_memory(dir: &File) -> bool {
    rustix::fs::fstatfs(dir).is_ok_and(|s| s.f_type == libc::TMPFS_MAGIC)
}

/// One `syncfs` for each file system holding one of `dirs`; how many there were.
fn sync_file_systems(dirs: Vec<PathBuf>) -> io::Result<usize> {
    let mut synced = Vec::new();
    for dir in dirs {
        // A directory removed since (a failed apply put things back) needs nothing.
        let Ok(d) = File::open(&dir) else { continue };
        let dev = d.metadata()?.dev();
        if !synced.contains(&dev) && !in_memory(&d) {
            rustix::fs::syncfs(&d)?;
            synced.push(dev);
        }
    }
    Ok(synced.len())
}

impl Root {
    /// Opens a root; it must be an existing directory.
    pub fn new(dir: &Path) -> io::Result<Root> {
        let dir = fs::canonicalize(dir)?;
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", dir.display()),
            ));
        }
        let handle = File::open(&dir)?.into();
        Ok(Root {
            dir,
            handle: Arc::new(handle),
            labels: Arc::new(Labeler::new()),
            unsynced: Arc::default(),
        })
    }

    /// Makes everything written through this root (any clone of it) since the last call
    /// durable: one `syncfs` for each file system written to, rather than an fsync of
    /// each directory after each write (under emulation each is a journal commit, some
    /// milliseconds: docs/benchmarks.md). Called by [`Root::write_record`], at the end of
    /// each boot stage and when the last clone of the root goes; a kill loses nothing
    /// either way (the kernel has the data), only a power cut can.
    pub fn sync(&self) -> io::Result<()> {
        let started = std::time::Instant::now();
        let synced = sync_file_systems(self.unsynced.take())?;
        if synced > 0 {
            tracing::debug!(
                "synced {synced} file system(s) in {:.3} ms",
                started.elapsed().as_secs_f64() * 1000.0
            );
        }
        Ok(())
    }

    /// Writes a record that vouches for what was written before it (an instance's
    /// result, a module's `started` or `done`): everything written before is made durable
    /// first, then the record, as [`Root::write_file`], then the record itself.
    pub fn write_record(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        self.sync()?;
        self.write_file(path, contents, mode)?;
        self.sync()
    }

    /// Notes that `dir`'s entries changed and are not yet durable.
    fn changed(&self, dir: &Path) {
        let mut unsynced = self.unsynced.0.lock().unwrap_or_else(|e| e.into_inner());
        if !unsynced.iter().any(|d| d == dir) {
            unsynced.push(dir.to_path_buf());
        }
    }

    /// The root directory on the host.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Where `path` (absolute, as seen from inside the root) really is on the host.
    /// Symlinks along the way are followed within the root; the last component is
    /// followed only if `follow_last`.
    pub fn resolve(&self, path: &Path, follow_last: bool) -> io::Result<PathBuf> {
        match self.resolve_without_links(path, follow_last) {
            Some(host) => Ok(host),
            None => self.walk(path, follow_last, false),
        }
    }

    /// Where a write as root to `path` lands (a final symlink is not followed: a write
    /// replaces it). A symlink on the way is followed only if it is one no other user
    /// could have placed ([`untrusted_link`]): owned by root (or by the user vmcust runs
    /// as) in a directory owned by them that no one else may change. Any other link is
    /// an error naming the path and the link, so a user who owns a home directory cannot
    /// send a privileged write elsewhere with `~/.ssh -> /root/.ssh` (docs/security.md,
    /// "Links").
    pub fn resolve_for_write(&self, path: &Path) -> io::Result<PathBuf> {
        match self.resolve_without_links(path, false) {
            Some(host) => Ok(host),
            None => self.walk(path, false, true),
        }
    }

    /// [`Root::resolve`] one component at a time, following symlinks within the root;
    /// with `guard`, refusing a link another user could have placed.
    fn walk(&self, path: &Path, follow_last: bool, guard: bool) -> io::Result<PathBuf> {
        let mut pending: Vec<OsString> = Vec::new();
        push_components(&mut pending, path);
        let mut resolved: Vec<OsString> = Vec::new();
        let mut links = 0;
        while let Some(part) = pending.pop() {
            if part == ".." {
                resolved.pop();
                continue;
            }
            let candidate = self.join(&resolved).join(&part);
            let is_last = pending.is_empty();
            let is_link = fs::symlink_metadata(&candidate)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false);
            if is_link && (follow_last || !is_last) {
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(io::Error::other(format!(
                        "too many levels of symbolic links resolving {}",
                        path.display()
                    )));
                }
                let target = fs::read_link(&candidate)?;
                if guard {
                    if let Some(why) = untrusted_link(&candidate, &self.join(&resolved)) {
                        let inside = Path::new("/").join(resolved.iter().collect::<PathBuf>());
                        return Err(io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            format!(
                                "refusing to write {}: {} is a symbolic link (to {}) {why}; \
                                 a write as root follows no link another user could have \
                                 placed (write the real path instead)",
                                path.display(),
                                inside.join(&part).display(),
                                target.display()
                            ),
                        ));
                    }
                }
                if target.is_absolute() {
                    resolved.clear();
                }
                push_components(&mut pending, &target);
            } else {
                resolved.push(part);
            }
        }
        Ok(self.join(&resolved))
    }

    /// The common case in one system call: when the kernel finds no symlink on the way
    /// (`openat2` with `RESOLVE_NO_SYMLINKS`, beneath the root), the path is the plain
    /// join. A path that stops existing part-way (`ENOENT`, `ENOTDIR`) before any
    /// symlink also resolves to the plain join, as the walk in [`Root::resolve`] would.
    /// `None` when that walk is needed: a symlink on the way, a `..`, or no `openat2`.
    /// Each lookup walks the whole path on a boot's hot path; the walk costs one `lstat`
    /// per component (docs/benchmarks.md).
    fn resolve_without_links(&self, path: &Path, follow_last: bool) -> Option<PathBuf> {
        use nix::errno::Errno;
        use nix::fcntl::{openat2, OFlag, OpenHow, ResolveFlag};

        if !OPENAT2_WORKS.load(Ordering::Relaxed) {
            return None;
        }
        let Some(relative) = openat2_relative(path, false) else {
            // The root itself, or a `..` on the way (the walk's).
            let root_itself = path
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::CurDir));
            return root_itself.then(|| self.dir.clone());
        };
        let mut flags = OFlag::O_PATH | OFlag::O_CLOEXEC;
        if !follow_last {
            // With O_PATH, a symlink at the end is opened itself, not refused.
            flags |= OFlag::O_NOFOLLOW;
        }
        let how = OpenHow::new()
            .flags(flags)
            .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
        match openat2(self.handle.as_fd(), &relative, how) {
            Ok(_) | Err(Errno::ENOENT | Errno::ENOTDIR) => Some(self.dir.join(relative)),
            Err(Errno::ENOSYS | Errno::EPERM) => {
                OPENAT2_WORKS.store(false, Ordering::Relaxed);
                None
            }
            Err(_) => None,
        }
    }

    /// Opens `path` with `flags` in one `openat2` beneath the root that follows no
    /// symlink: the common case of a read, one system call where resolving and then
    /// opening by name took three (an absent file: one instead of two). Anything the one
    /// call cannot settle — a symlink on the way, a `..`, no `openat2`, any other error —
    /// is [`Direct::Resolve`], for the caller's general path, which gives the same answer.
    fn open_direct(&self, path: &Path, flags: nix::fcntl::OFlag) -> Direct {
        use nix::errno::Errno;
        use nix::fcntl::{openat2, OFlag, OpenHow, ResolveFlag};

        let Some(relative) = openat2_relative(path, false) else {
            return Direct::Resolve;
        };
        let how = OpenHow::new()
            .flags(flags | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
        match openat2(self.handle.as_fd(), &relative, how) {
            Ok(fd) => Direct::Open(File::from(fd)),
            // No symlink came before the missing part, so following links finds nothing
            // there either.
            Err(Errno::ENOENT) => Direct::Missing,
            Err(Errno::ENOSYS | Errno::EPERM) => {
                OPENAT2_WORKS.store(false, Ordering::Relaxed);
                Direct::Resolve
            }
            Err(_) => Direct::Resolve,
        }
    }

    /// `path` opened with `flags` by the kernel following every symlink on the way as
    /// [`Root::resolve`] follows them: within the root (`RESOLVE_IN_ROOT`: an absolute
    /// target and `..` stay beneath it), and no magic link of `/proc`. One system call
    /// where the walk costs an `lstat` and a path rebuilt per component and a `readlink`
    /// per link (the NICs' facts read every file of `/sys/class/net/*` through links).
    /// [`Direct::Resolve`] where the kernel cannot settle it (no `openat2`, a loop).
    fn open_in_root(&self, path: &Path, flags: nix::fcntl::OFlag) -> Direct {
        use nix::errno::Errno;
        use nix::fcntl::{openat2, OFlag, OpenHow, ResolveFlag};

        let Some(relative) = openat2_relative(path, true) else {
            return Direct::Resolve;
        };
        let how = OpenHow::new()
            .flags(flags | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_IN_ROOT | ResolveFlag::RESOLVE_NO_MAGICLINKS);
        match openat2(self.handle.as_fd(), &relative, how) {
            Ok(fd) => Direct::Open(File::from(fd)),
            Err(Errno::ENOENT) => Direct::Missing,
            Err(_) => Direct::Resolve,
        }
    }

    /// [`Root::open_direct`], then [`Root::open_in_root`] where a symlink or `..` is on
    /// the way: `path` opened following links inside the root.
    fn open_following(&self, path: &Path, flags: nix::fcntl::OFlag) -> Direct {
        match self.open_direct(path, flags) {
            Direct::Resolve => self.open_in_root(path, flags),
            settled => settled,
        }
    }

    /// `path` opened for reading (following symlinks inside the root); `None` if absent.
    /// `path` opened for reading (following symlinks inside the root); `None` if absent.
    fn open_read(&self, path: &Path) -> io::Result<Option<File>> {
        self.open_regular(path, true)
    }

    /// `path` opened for reading if it is a regular file; a symlink at its end followed
    /// inside the root only if `follow_last`. Opened without blocking: a FIFO planted
    /// where a file is read (a user's `~/.ssh/authorized_keys`) would otherwise hang the
    /// run, and it is refused, as is any other non-file. `None` if absent.
    fn open_regular(&self, path: &Path, follow_last: bool) -> io::Result<Option<File>> {
        use nix::fcntl::OFlag;
        use std::os::unix::fs::OpenOptionsExt as _;
        let mut flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK;
        if !follow_last {
            flags |= OFlag::O_NOFOLLOW;
        }
        let file = match self.open_following(path, flags) {
            Direct::Open(f) => f,
            Direct::Missing => return Ok(None),
            Direct::Resolve => match fs::OpenOptions::new()
                .read(true)
                .custom_flags(flags.bits() & !libc::O_ACCMODE)
                .open(self.resolve(path, follow_last)?)
            {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{} is a symbolic link", path.display()),
                    ))
                }
                Err(e) => return Err(e),
            },
        };
        let meta = file.metadata()?;
        if meta.is_dir() {
            // As reading it would say.
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", path.display()),
            ));
        }
        Ok(Some(file))
    }

    /// What is at `path` (following symlinks inside the root); `None` if absent.
    fn metadata(&self, path: &Path) -> Option<fs::Metadata> {
        match self.open_following(path, nix::fcntl::OFlag::O_PATH) {
            Direct::Open(f) => f.metadata().ok(),
            Direct::Missing => None,
            Direct::Resolve => fs::metadata(self.resolve(path, true).ok()?).ok(),
        }
    }

    /// `path` joined to the root as it is, for a path [`Root::open_direct`] found without
    /// a symlink or `..` on the way.
    fn plain(&self, path: &Path) -> PathBuf {
        let mut p = self.dir.clone();
        p.extend(
            path.components()
                .filter(|c| matches!(c, Component::Normal(_))),
        );
        p
    }

    fn join(&self, parts: &[OsString]) -> PathBuf {
        let mut p = self.dir.clone();
        p.extend(parts);
        p
    }

    /// Reads a file (following symlinks inside the root); `None` if it does not exist.
    pub fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        use std::io::Read as _;
        let Some(file) = self.open_read(path)? else {
            return Ok(None);
        };
        // Most files read here are small: one read fills the buffer, one more says the end
        // (through `take`, std asks for no size hint: two system calls fewer a file).
        let mut bytes = Vec::with_capacity(8192);
        file.take(u64::MAX).read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    /// Reads a text file; `None` if it does not exist. Invalid UTF-8 is an error.
    pub fn read_text(&self, path: &Path) -> io::Result<Option<String>> {
        match self.read(path)? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not valid UTF-8", path.display()),
                )
            }),
        }
    }

    /// Reads a file of at most `max` bytes (following symlinks inside the root); `None`
    /// if it does not exist. A larger one is an `InvalidData` error saying so (`what`
    /// names the kind of file), found without reading it whole
    /// ([`vmcust_imc::read_at_most`], the one capped reader).
    pub fn read_capped(
        &self,
        path: &Path,
        max: u64,
        what: &'static str,
    ) -> io::Result<Option<Vec<u8>>> {
        read_capped_from(self.open_read(path)?, max, what)
    }

    /// [`Root::read_capped`] of a file a user controls (one in a home directory): a
    /// symlink at its end is an error, never followed, so root opens no device or other
    /// file through it.
    pub fn read_user_file_capped(
        &self,
        path: &Path,
        max: u64,
        what: &'static str,
    ) -> io::Result<Option<Vec<u8>>> {
        read_capped_from(self.open_regular(path, false)?, max, what)
    }

    /// [`Root::read_capped`] for a UTF-8 text file; invalid UTF-8 is an error.
    pub fn read_text_capped(
        &self,
        path: &Path,
        max: u64,
        what: &'static str,
    ) -> io::Result<Option<String>> {
        match self.read_capped(path, max, what)? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not valid UTF-8", path.display()),
                )
            }),
        }
    }

    /// Whether a regular file exists at `path` (following symlinks inside the root).
    pub fn is_file(&self, path: &Path) -> bool {
        self.metadata(path).is_some_and(|m| m.is_file())
    }

    /// Whether a directory exists at `path` (following symlinks inside the root).
    pub fn is_dir(&self, path: &Path) -> bool {
        self.metadata(path).is_some_and(|m| m.is_dir())
    }

    /// Names in a directory, sorted; empty if the directory does not exist.
    pub fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let dir = self.resolve(path, true)?;
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut names = Vec::new();
        for entry in entries {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    /// What is at `path` now, without following a symlink in the last component.
    pub fn existing(&self, path: &Path) -> io::Result<Existing> {
        let flags = nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_NOFOLLOW;
        let real = match self.open_direct(path, flags) {
            Direct::Missing => return Ok(Existing::Missing),
            Direct::Open(_) => self.plain(path),
            Direct::Resolve => self.resolve(path, false)?,
        };
        existing_at(&real)
    }

    /// [`Root::existing`] for a path about to be written as root: resolved as the write
    /// will be ([`Root::resolve_for_write`], so a link another user could have placed is
    /// an error here already), and looked at once.
    pub fn existing_for_write(&self, path: &Path) -> io::Result<Existing> {
        existing_at(&self.resolve_for_write(path)?)
    }

    /// Replaces the file at `path` atomically with `contents` and `mode`, root's when new;
    /// an existing file's owner is kept ([`Root::write`] with [`FileOwner::Kept`]).
    pub fn write_file(&self, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
        self.write(path, contents, mode, FileOwner::Kept)
    }

    /// The one way a file is written: replaced atomically with `contents` and `mode`,
    /// owned as `owner` says, its directory made as `owner` says. A symlink at `path` is
    /// replaced, never written through, and the way there follows no link a user could
    /// have placed ([`Root::resolve_for_write`]), so nothing is written through a link.
    pub fn write(
        &self,
        path: &Path,
        contents: &[u8],
        mode: u32,
        owner: FileOwner,
    ) -> io::Result<()> {
        let at = match owner {
            FileOwner::InUserDir { uid, gid, dir_mode } => {
                self.prepare_user_dir(path, dir_mode, (uid, gid))?
            }
            FileOwner::Kept | FileOwner::Chown { .. } => self.prepare_parent(path)?,
        };
        let now = at.stat()?;
        let file_owner = match owner {
            FileOwner::Kept => now
                .filter(|s| FileType::from_raw_mode(s.st_mode) == FileType::RegularFile)
                .map(|s| (s.st_uid, s.st_gid)),
            FileOwner::Chown { uid, gid } | FileOwner::InUserDir { uid, gid, .. } => {
                Some((uid, gid))
            }
        };
        let label = self.label_replacing(&at.real, now.as_ref(), Kind::File)?;
        write_atomic(
            &at,
            contents,
            mode,
            file_owner,
            label.as_deref(),
            now.is_some(),
        )?;
        self.changed(&at.dir);
        Ok(())
    }

    /// The label for what is written at `real` (a host path inside the root) as a
    /// `kind`: the label of what is there (`now`, from `lstat`) if it is of that kind
    /// and has one, else the one the root's policy gives the path (none without a policy).
    fn label_replacing(
        &self,
        real: &Path,
        now: Option<&rustix::fs::Stat>,
        kind: Kind,
    ) -> io::Result<Option<Vec<u8>>> {
        let same_kind = now.is_some_and(|s| {
            let t = FileType::from_raw_mode(s.st_mode);
            match kind {
                Kind::File => t == FileType::RegularFile,
                Kind::Symlink => t == FileType::Symlink,
                Kind::Dir => t == FileType::Directory,
                _ => false,
            }
        });
        if same_kind {
            if let Some(label) = selinux::xattr::get_path(real)? {
                return Ok(Some(label));
            }
        }
        self.label_new(real, kind)
    }

    /// Labels the regular file `new` (a host path inside the root, made by another tool
    /// to be renamed over `real`) as [`Root::label_replacing`] says for `real`.
    pub fn label_for_rename(&self, new: &Path, real: &Path) -> io::Result<()> {
        let now = rustix::fs::lstat(real).ok();
        match self.label_replacing(real, now.as_ref(), Kind::File)? {
            Some(label) => selinux::xattr::set_path(new, &label),
            None => Ok(()),
        }
    }

    /// The label the root's policy gives a new `kind` at `real` (a host path inside the
    /// root); `None` without a policy. The policy is read on the first call.
    fn label_new(&self, real: &Path, kind: Kind) -> io::Result<Option<Vec<u8>>> {
        let inside = Path::new("/").join(real.strip_prefix(&self.dir).unwrap_or(real));
        self.labels.label_for(self, &inside, kind)
    }

    /// Opens the directory `real_dir` (a host path inside the root, as
    /// [`Root::resolve_for_write`] gives it) one component at a time from the root's own
    /// handle, each with `O_NOFOLLOW`: what is written next goes through this descriptor,
    /// so a link swapped in after the path was resolved is an error, never followed. With
    /// `create`, missing directories are made (mode 0755, labelled as the root's policy
    /// says), as `create_dir_all` would.
    fn open_dir(&self, real_dir: &Path, create: bool) -> io::Result<File> {
        let inside = real_dir
            .strip_prefix(&self.dir)
            .map_err(|_| io::Error::other(format!("{} is outside the root", real_dir.display())))?;
        let mut dir = File::from(rustix::fs::openat(
            &*self.handle,
            ".",
            DIR_FLAGS,
            Mode::empty(),
        )?);
        let mut so_far = self.dir.clone();
        for part in inside.components() {
            let Component::Normal(name) = part else {
                return Err(io::Error::other(format!(
                    "{} is not a plain path",
                    real_dir.display()
                )));
            };
            so_far.push(name);
            let mut made = false;
            let next = match rustix::fs::openat(&dir, name, DIR_FLAGS, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(DIR_MODE)) {
                        Ok(()) => made = true,
                        Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                    rustix::fs::openat(&dir, name, DIR_FLAGS, Mode::empty())
                }
                other => other,
            };
            let next = File::from(
                next.map_err(|e| self.not_a_plain_dir(link_or(&dir, name, e), &so_far))?,
            );
            if made {
                // The umask may have cleared bits.
                next.set_permissions(Permissions::from_mode(DIR_MODE))?;
                if let Some(label) = self.label_new(&so_far, Kind::Dir)? {
                    selinux::xattr::set_fd(&next, &label)?;
                }
                self.changed(&so_far.with_file_name(""));
            }
            dir = next;
        }
        Ok(dir)
    }

    /// The error for a directory on a write's way that cannot be opened without following
    /// a link: something changed it into one (or a file) since the path was resolved.
    fn not_a_plain_dir(&self, e: rustix::io::Errno, real: &Path) -> io::Error {
        let inside = Path::new("/").join(real.strip_prefix(&self.dir).unwrap_or(real));
        match e {
            rustix::io::Errno::LOOP => io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} became a symbolic link while it was being written to; nothing was \
                     written through it",
                    inside.display()
                ),
            ),
            rustix::io::Errno::NOTDIR => io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", inside.display()),
            ),
            other => io::Error::from(other),
        }
    }

    /// Owner, group and permission bits of what is at `path` (a final symlink is not
    /// followed); `None` if nothing is there.
    pub fn owner_and_mode(&self, path: &Path) -> io::Result<Option<(u32, u32, u32)>> {
        match fs::symlink_metadata(self.resolve(path, false)?) {
            Ok(m) => Ok(Some((m.uid(), m.gid(), m.mode() & 0o7777))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The place to write `path` of [`FileOwner::InUserDir`]: its parent directory is
    /// created if missing (its own parent must exist) and set to `dir_mode` and
    /// `uid`:`gid`. A symlink as the parent directory is refused.
    fn prepare_user_dir(
        &self,
        path: &Path,
        dir_mode: u32,
        (uid, gid): (u32, u32),
    ) -> io::Result<At> {
        let (parent, name) = match (path.parent(), path.file_name()) {
            (Some(p), Some(n)) if p.parent().is_some() => (p, n),
            _ => return Err(io::Error::other(format!("cannot write {}", path.display()))),
        };
        let real_dir = self.resolve_for_write(parent)?;
        let (Some(above), Some(dir_name)) = (real_dir.parent(), real_dir.file_name()) else {
            return Err(io::Error::other(format!("cannot write {}", path.display())));
        };
        let above = self.open_dir(above, false)?;
        match rustix::fs::statat(&above, dir_name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) if FileType::from_raw_mode(s.st_mode) == FileType::Symlink => {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{} is a symbolic link; refusing to write through it",
                        parent.display()
                    ),
                ))
            }
            Ok(s) if FileType::from_raw_mode(s.st_mode) != FileType::Directory => {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", parent.display()),
                ))
            }
            Ok(_) => {}
            Err(rustix::io::Errno::NOENT) => {
                rustix::fs::mkdirat(&above, dir_name, Mode::from_raw_mode(dir_mode))?;
                if let Some(label) = self.label_new(&real_dir, Kind::Dir)? {
                    selinux::xattr::set_path(&real_dir, &label)?;
                }
            }
            Err(e) => return Err(e.into()),
        }
        // Opened without following a link, so owner and mode land on this very directory
        // even if something swapped it since the check above.
        let dir = File::from(
            rustix::fs::openat(&above, dir_name, DIR_FLAGS, Mode::empty())
                .map_err(|e| self.not_a_plain_dir(link_or(&above, dir_name, e), &real_dir))?,
        );
        std::os::unix::fs::fchown(&dir, Some(uid), Some(gid))?;
        dir.set_permissions(Permissions::from_mode(dir_mode))?;
        let at = At {
            real: real_dir.join(name),
            dir: real_dir,
            fd: dir,
            name: name.to_os_string(),
        };
        at.remove_stale_temp()?;
        Ok(at)
    }

    /// Whether `path` is a directory itself (a final symlink is not followed).
    pub fn is_dir_here(&self, path: &Path) -> io::Result<bool> {
        match fs::symlink_metadata(self.resolve(path, false)?) {
            Ok(m) => Ok(m.is_dir()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Makes `path` a directory with `mode` owned by `uid`:`gid` (a new home): created if
    /// missing (its parent must exist), set if it is there. A symlink or file at `path` is
    /// refused, so nothing is chowned through a link.
    pub fn make_dir(&self, path: &Path, mode: u32, (uid, gid): (u32, u32)) -> io::Result<()> {
        let real = self.resolve_for_write(path)?;
        let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else {
            return Err(io::Error::other(format!("cannot make {}", path.display())));
        };
        if !parent.starts_with(&self.dir) {
            return Err(io::Error::other(format!("cannot make {}", path.display())));
        }
        let above = self.open_dir(parent, false)?;
        match rustix::fs::statat(&above, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) if FileType::from_raw_mode(s.st_mode) == FileType::Directory => {}
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists and is not a directory", path.display()),
                ))
            }
            Err(rustix::io::Errno::NOENT) => {
                rustix::fs::mkdirat(&above, name, Mode::from_raw_mode(0o700))?;
                if let Some(label) = self.label_new(&real, Kind::Dir)? {
                    selinux::xattr::set_path(&real, &label)?;
                }
            }
            Err(e) => return Err(e.into()),
        }
        let dir = File::from(
            rustix::fs::openat(&above, name, DIR_FLAGS, Mode::empty())
                .map_err(|e| self.not_a_plain_dir(link_or(&above, name, e), &real))?,
        );
        std::os::unix::fs::fchown(&dir, Some(uid), Some(gid))?;
        dir.set_permissions(Permissions::from_mode(mode))?;
        self.changed(parent);
        Ok(())
    }

    /// Makes `path` a symlink to `target` atomically (replacing whatever is there).
    pub fn symlink(&self, path: &Path, target: &Path) -> io::Result<()> {
        let at = self.prepare_parent(path)?;
        let label = self.label_replacing(&at.real, at.stat()?.as_ref(), Kind::Symlink)?;
        let tmp = at.temp();
        let result = rustix::fs::symlinkat(target, &at.fd, &tmp)
            .map_err(io::Error::from)
            .and_then(|()| {
                if let Some(label) = &label {
                    selinux::xattr::set_path(&at.dir.join(&tmp), label)?;
                }
                Ok(rustix::fs::renameat(&at.fd, &tmp, &at.fd, &at.name)?)
            });
        if let Err(e) = result {
            let _ = rustix::fs::unlinkat(&at.fd, &tmp, AtFlags::empty());
            return Err(e);
        }
        self.changed(&at.dir);
        Ok(())
    }

    /// Removes the file (or link) at `path`; already gone is fine. Durable with the next
    /// [`Root::sync`].
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        let real = self.resolve_for_write(path)?;
        let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else {
            return Err(io::Error::other(format!(
                "cannot remove {}",
                path.display()
            )));
        };
        let dir = match self.open_dir(parent, false) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            other => other?,
        };
        match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
            Err(rustix::io::Errno::NOENT) => return Ok(()),
            other => other?,
        }
        self.changed(parent);
        Ok(())
    }

    /// Renames `from` to `to` inside the root (used to move conflicting files aside).
    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let real_from = self.resolve_for_write(from)?;
        let (Some(from_parent), Some(from_name)) = (real_from.parent(), real_from.file_name())
        else {
            return Err(io::Error::other(format!("cannot move {}", from.display())));
        };
        let from_dir = self.open_dir(from_parent, false)?;
        let at = self.prepare_parent(to)?;
        rustix::fs::renameat(&from_dir, from_name, &at.fd, &at.name)?;
        self.changed(from_parent);
        self.changed(&at.dir);
        Ok(())
    }

    /// Resolves the parent directory of `path` for a write ([`Root::resolve_for_write`]),
    /// creating it if needed, opens it by descriptor ([`Root::open_dir`]), and clears a
    /// stale temp file a killed earlier run may have left.
    fn prepare_parent(&self, path: &Path) -> io::Result<At> {
        let real = self.resolve_for_write(path)?;
        let (dir, name) = match (real.parent(), real.file_name()) {
            (Some(d), Some(n)) if d.starts_with(&self.dir) && real != self.dir => {
                (d.to_path_buf(), n.to_os_string())
            }
            _ => return Err(io::Error::other(format!("cannot write {}", path.display()))),
        };
        let fd = self.open_dir(&dir, true)?;
        let at = At {
            real,
            dir,
            fd,
            name,
        };
        at.remove_stale_temp()?;
        Ok(at)
    }
}

/// Whose a file [`Root::write`] writes is, and how the directory it is written in is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOwner {
    /// A new file is root's, an existing one keeps its owner; missing parent directories
    /// are made (0755, root's).
    Kept,
    /// Owned by `uid`:`gid` whatever owned the file it replaces (cloud-config
    /// `write_files` with an `owner`); missing parent directories are made as for
    /// [`FileOwner::Kept`], only the file gets the owner.
    Chown {
        /// Owner.
        uid: u32,
        /// Group.
        gid: u32,
    },
    /// A user's file in the user's own directory (`~/.ssh/authorized_keys`, a file of
    /// `/etc/skel`): the parent directory is made if missing (its own parent must exist)
    /// and set to `dir_mode` and `uid`:`gid`, as the file is; a symlink as the parent
    /// directory is refused.
    InUserDir {
        /// Owner of the file and its directory.
        uid: u32,
        /// Group of the file and its directory.
        gid: u32,
        /// Permission bits of the directory.
        dir_mode: u32,
    },
}

/// `ELOOP` if `name` in `dir` is a symbolic link, else `e`: opening a link with
/// `O_DIRECTORY | O_NOFOLLOW` fails with `ENOTDIR` or `ELOOP`, depending on the kernel.
fn link_or(dir: &File, name: &OsStr, e: rustix::io::Errno) -> rustix::io::Errno {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) if FileType::from_raw_mode(s.st_mode) == FileType::Symlink => rustix::io::Errno::LOOP,
        _ => e,
    }
}

/// How directories on a write's way are opened: never through a link.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Why a symlink at `link` (in the directory `dir`, both host paths) is not one to follow
/// for a write as root, or `None` if it is trusted: the link and its directory are owned by
/// root or by the user vmcust runs as (who could write the target anyway), and no one else
/// may change that directory (not writable by group or others, or sticky, as `/tmp`, where
/// only a link's owner may replace it). Root-owned system links (`/var/run -> /run`,
/// `/lib -> usr/lib`) pass; a link in a user's home does not.
fn untrusted_link(link: &Path, dir: &Path) -> Option<String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let trusted = |uid: u32| uid == 0 || uid == me;
    let link = match fs::symlink_metadata(link) {
        Ok(m) => m,
        Err(e) => return Some(format!("that cannot be examined ({e})")),
    };
    if !trusted(link.uid()) {
        return Some(format!("owned by uid {}", link.uid()));
    }
    let dir = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) => return Some(format!("in a directory that cannot be examined ({e})")),
    };
    if !trusted(dir.uid()) {
        return Some(format!("in a directory owned by uid {}", dir.uid()));
    }
    if dir.mode() & 0o022 != 0 && dir.mode() & 0o1000 == 0 {
        return Some(format!(
            "in a directory others may write to (mode {:04o})",
            dir.mode() & 0o7777
        ));
    }
    None
}

/// A path to write, with its directory held open ([`Root::open_dir`]): every change is
/// made relative to `fd`, so it lands in the directory that was checked.
struct At {
    /// The host path written.
    real: PathBuf,
    /// Its directory on the host (for labels and for [`Root::sync`]).
    dir: PathBuf,
    /// That directory, open.
    fd: File,
    /// The last component.
    name: OsString,
}

impl At {
    /// What is at the path now (not following a link); `None` if nothing.
    fn stat(&self) -> io::Result<Option<rustix::fs::Stat>> {
        match rustix::fs::statat(&self.fd, &self.name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) => Ok(Some(s)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The temp file's name next to it.
    fn temp(&self) -> OsString {
        let mut t = OsString::from(".");
        t.push(&self.name);
        t.push(".vmcust-tmp");
        t
    }

    /// Removes a temp file a killed earlier run may have left.
    fn remove_stale_temp(&self) -> io::Result<()> {
        match rustix::fs::unlinkat(&self.fd, self.temp(), AtFlags::empty()) {
            Err(rustix::io::Errno::NOENT) | Ok(()) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Writes `contents` to a temp file next to `at` with `mode` (and `owner` and SELinux
/// `label`) and renames it over `at`, all relative to its open directory. When it
/// `replacing` something, the temp file is
/// synced before the rename: after a power cut the path then holds the old file or the
/// whole new one, never a torn or empty one (XFS, unlike ext4, does not order a rename
/// after the data it names). A new file needs no such care: until the record that vouches
/// for it is written ([`Root::write_record`]), a path with no file or a torn one is
/// written again by the run that resumes.
/// What is at the host path `real` (inside the root, already resolved), without
/// following a symlink there. A file's contents are read from what was looked at: opened
/// with `O_NOFOLLOW`, so a link swapped in meanwhile is an error, not followed.
fn existing_at(real: &Path) -> io::Result<Existing> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let meta = match fs::symlink_metadata(real) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Existing::Missing),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        return Ok(Existing::Symlink(fs::read_link(real)?));
    }
    if !meta.is_file() {
        return Ok(Existing::Other);
    }
    // Not blocking on a FIFO swapped in since the look above, and refusing it.
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(real)?;
    if !file.metadata()?.is_file() {
        return Ok(Existing::Other);
    }
    let mut contents = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0) + 1);
    file.take(u64::MAX).read_to_end(&mut contents)?;
    Ok(Existing::File {
        contents,
        mode: meta.mode() & 0o7777,
    })
}

fn write_atomic(
    at: &At,
    contents: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
    label: Option<&[u8]>,
    replacing: bool,
) -> io::Result<()> {
    let tmp = at.temp();
    let result = (|| {
        let mut file = File::from(rustix::fs::openat(
            &at.fd,
            &tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )?);
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::fchown(&file, Some(uid), Some(gid))?;
        }
        // The umask may have cleared bits and chown set-id ones: the caller's mode is
        // the contract.
        file.set_permissions(Permissions::from_mode(mode))?;
        // Before the rename, so the file is never seen at its path with another label.
        if let Some(label) = label {
            selinux::xattr::set_fd(&file, label)?;
        }
        file.write_all(contents)?;
        if replacing {
            file.sync_all()?;
        }
        Ok(rustix::fs::renameat(&at.fd, &tmp, &at.fd, &at.name)?)
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(&at.fd, &tmp, AtFlags::empty());
    }
    result
}

/// The first `max` bytes of `file`, or an error naming `what` when it holds more.
fn read_capped_from(
    file: Option<File>,
    max: u64,
    what: &'static str,
) -> io::Result<Option<Vec<u8>>> {
    let Some(file) = file else {
        return Ok(None);
    };
    match vmcust_imc::read_capped(file, max, what) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(vmcust_imc::CappedReadError::Io(e)) => Err(e),
        Err(too_large) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            too_large.to_string(),
        )),
    }
}

/// `path` relative to the root's handle for `openat2`, when `openat2` works here and the
/// path names something below the root; `..` kept only where `parents` (the kernel then
/// resolves it within the root).
fn openat2_relative(path: &Path, parents: bool) -> Option<PathBuf> {
    if !OPENAT2_WORKS.load(Ordering::Relaxed) {
        return None;
    }
    let mut relative = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => relative.push(p),
            Component::ParentDir if parents => relative.push(".."),
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir | Component::Prefix(_) => return None,
        }
    }
    (!relative.as_os_str().is_empty()).then_some(relative)
}

fn push_components(stack: &mut Vec<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    stack.extend(parts.into_iter().rev());
}

/// The SELinux labeler reads the root's policy through the root, confined and capped.
impl selinux::PolicyFiles for Root {
    fn read_policy_file(&self, path: &Path, max: u64) -> io::Result<Option<String>> {
        self.read_text_capped(path, max, "file_contexts file")
    }

    fn root_dir(&self) -> &Path {
        self.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read, `is_file` and `is_dir` in one `openat2` give what resolving the path first
    /// gives, on every shape of path (missing part-way, through a file, through links,
    /// dangling, `..`, a link at the end).
    #[test]
    fn the_one_call_reads_agree_with_resolving_first() {
        let (dir, root) = root();
        let d = dir.path();
        fs::create_dir_all(d.join("etc/ssh")).unwrap();
        fs::create_dir_all(d.join("usr/lib/real")).unwrap();
        fs::write(d.join("etc/hosts"), "hosts").unwrap();
        fs::write(d.join("usr/lib/real/f"), "real").unwrap();
        std::os::unix::fs::symlink("../usr/lib/real", d.join("etc/rel")).unwrap();
        std::os::unix::fs::symlink("/usr/lib/real", d.join("etc/abs")).unwrap();
        std::os::unix::fs::symlink("nowhere", d.join("etc/dangling")).unwrap();
        std::os::unix::fs::symlink("hosts", d.join("etc/last")).unwrap();
        // Out of the root by `..` and by an absolute climb: both stay beneath it.
        std::os::unix::fs::symlink("../../../../../usr/lib/real", d.join("etc/up")).unwrap();
        std::os::unix::fs::symlink("/../../etc", d.join("etc/climb")).unwrap();
        std::os::unix::fs::symlink("loop-b", d.join("etc/loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", d.join("etc/loop-b")).unwrap();
        std::os::unix::fs::symlink("/proc/self/root", d.join("etc/magic")).unwrap();
        // What the general way says: resolve, then look at the host path.
        let resolved = |p: &str| {
            let real = root.resolve(Path::new(p), true).unwrap();
            let read = match fs::read(&real) {
                Ok(b) => Ok(Some(b)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e.kind()),
            };
            (read, real.is_file(), real.is_dir())
        };
        for p in [
            "/etc",
            "/etc/hosts",
            "/etc/missing",
            "/etc/missing/deeper",
            "/etc/hosts/below-a-file",
            "/etc/rel/f",
            "/etc/abs/f",
            "/etc/abs/missing",
            "/etc/dangling",
            "/etc/last",
            "/etc/ssh/../hosts",
            "/etc/ssh",
            "/etc/up/f",
            "/etc/climb/hosts",
            "/etc/rel/../real/f",
            "/etc/abs/../../../../etc/hosts",
            "/etc/magic/etc/hosts",
        ] {
            let read = root.read(Path::new(p)).map_err(|e| e.kind());
            let direct = (read, root.is_file(Path::new(p)), root.is_dir(Path::new(p)));
            assert_eq!(direct, resolved(p), "{p}");
            // And what is there, the last component not followed.
            let existing = root.existing(Path::new(p)).map_err(|e| e.kind());
            let at = root
                .resolve(Path::new(p), false)
                .and_then(|real| existing_at(&real))
                .map_err(|e| e.kind());
            assert_eq!(existing, at, "{p}");
        }
        let direct = root.open_direct(Path::new("/etc/hosts"), nix::fcntl::OFlag::O_RDONLY);
        if OPENAT2_WORKS.load(Ordering::Relaxed) {
            assert!(matches!(direct, Direct::Open(_)));
            let missing = root.open_direct(Path::new("/etc/nope"), nix::fcntl::OFlag::O_RDONLY);
            assert!(matches!(missing, Direct::Missing));
            let linked = root.open_direct(Path::new("/etc/rel/f"), nix::fcntl::OFlag::O_RDONLY);
            assert!(matches!(linked, Direct::Resolve));
            // Through links, the kernel settles it in the root in one call too.
            for p in ["/etc/rel/f", "/etc/abs/f", "/etc/up/f", "/etc/ssh/../hosts"] {
                let followed = root.open_following(Path::new(p), nix::fcntl::OFlag::O_RDONLY);
                assert!(matches!(followed, Direct::Open(_)), "{p}");
            }
            let looped = root.open_following(Path::new("/etc/loop-a"), nix::fcntl::OFlag::O_RDONLY);
            assert!(matches!(looped, Direct::Resolve));
        }
        // A loop is an error both ways.
        assert!(root.read(Path::new("/etc/loop-a")).is_err());
        assert!(root.resolve(Path::new("/etc/loop-a"), true).is_err());
    }

    /// A FIFO planted where a file is read is refused without blocking (a reader once
    /// hung on one), whichever way the path is opened; a user's file behind a link at its
    /// end is refused, never followed.
    #[test]
    fn a_fifo_or_a_users_final_link_is_refused_not_read() {
        let (dir, root) = root();
        let d = dir.path();
        fs::create_dir_all(d.join("home/al/.ssh")).unwrap();
        fs::create_dir_all(d.join("etc")).unwrap();
        nix::unistd::mkfifo(
            &d.join("home/al/.ssh/authorized_keys"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        std::os::unix::fs::symlink("al/.ssh", d.join("home/link")).unwrap();
        fs::write(d.join("etc/shadow"), "root:x\n").unwrap();
        std::os::unix::fs::symlink("/etc/shadow", d.join("home/al/keys")).unwrap();
        for p in [
            "/home/al/.ssh/authorized_keys",
            "/home/link/authorized_keys",
        ] {
            let err = root.read(Path::new(p)).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{p}: {err}");
            assert!(root
                .read_user_file_capped(Path::new(p), 1024, "keys")
                .is_err());
            assert_eq!(root.existing(Path::new(p)).unwrap(), Existing::Other, "{p}");
        }
        let err = root
            .read_user_file_capped(Path::new("/home/al/keys"), 1024, "keys")
            .unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        // A system file read the usual way still follows its link.
        assert_eq!(
            root.read(Path::new("/home/al/keys")).unwrap().unwrap(),
            b"root:x\n"
        );
    }

    /// The one-call lookup and the component walk agree on every shape of path: plain,
    /// missing part-way, through a file, through relative and absolute symlinks (inside
    /// and pointing out of the root), dangling links, `..` and a symlink at the end.
    #[test]
    fn the_fast_lookup_agrees_with_the_walk() {
        let (dir, root) = root();
        let d = dir.path();
        fs::create_dir_all(d.join("etc/ssh")).unwrap();
        fs::create_dir_all(d.join("usr/lib/real")).unwrap();
        fs::write(d.join("etc/hosts"), "x").unwrap();
        fs::write(d.join("usr/lib/real/f"), "x").unwrap();
        std::os::unix::fs::symlink("../usr/lib/real", d.join("etc/rel")).unwrap();
        std::os::unix::fs::symlink("/usr/lib/real", d.join("etc/abs")).unwrap();
        std::os::unix::fs::symlink("/../../../../tmp", d.join("etc/out")).unwrap();
        std::os::unix::fs::symlink("nowhere", d.join("etc/dangling")).unwrap();
        std::os::unix::fs::symlink("hosts", d.join("etc/last")).unwrap();
        let paths = [
            "/",
            "/etc",
            "/etc/hosts",
            "/etc/missing",
            "/etc/missing/deeper/still",
            "/etc/hosts/below-a-file",
            "/etc/rel/f",
            "/etc/abs/f",
            "/etc/abs/missing",
            "/etc/out/x",
            "/etc/dangling",
            "/etc/dangling/x",
            "/etc/last",
            "/etc/ssh/../hosts",
            "/../../etc/hosts",
            "etc/./hosts",
        ];
        let mut fast = 0;
        for p in paths {
            for follow_last in [false, true] {
                let walked = root.walk(Path::new(p), follow_last, false).unwrap();
                if let Some(quick) = root.resolve_without_links(Path::new(p), follow_last) {
                    fast += 1;
                    assert_eq!(quick, walked, "{p} (follow_last {follow_last})");
                }
                assert_eq!(root.resolve(Path::new(p), follow_last).unwrap(), walked);
                assert!(walked.starts_with(d.canonicalize().unwrap()), "{p}");
            }
        }
        // Where the kernel has openat2 (5.6+), the plain paths took the quick way.
        if OPENAT2_WORKS.load(Ordering::Relaxed) {
            assert!(fast >= 12, "{fast} quick lookups");
        }
    }

    fn root() -> (tempfile::TempDir, Root) {
        let tmp = tempfile::tempdir().unwrap();
        let root = Root::new(tmp.path()).unwrap();
        (tmp, root)
    }

    #[test]
    fn absolute_symlinks_stay_inside_the_root() {
        let (_t, root) = root();
        fs::create_dir_all(root.path().join("etc")).unwrap();
        std::os::unix::fs::symlink("/etc/real", root.path().join("etc/link")).unwrap();
        let got = root.resolve(Path::new("/etc/link"), true).unwrap();
        assert_eq!(got, root.path().join("etc/real"));
    }

    #[test]
    fn dotdot_cannot_climb_above_the_root() {
        let (_t, root) = root();
        fs::create_dir_all(root.path().join("etc")).unwrap();
        std::os::unix::fs::symlink("../../../../tmp/x", root.path().join("etc/esc")).unwrap();
        let got = root.resolve(Path::new("/etc/esc"), true).unwrap();
        assert_eq!(got, root.path().join("tmp/x"));
        let got = root.resolve(Path::new("/../../etc/hosts"), true).unwrap();
        assert_eq!(got, root.path().join("etc/hosts"));
    }

    #[test]
    fn writing_replaces_a_symlink_instead_of_following_it() {
        let (_t, root) = root();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        fs::create_dir_all(root.path().join("etc")).unwrap();
        std::os::unix::fs::symlink(&victim, root.path().join("etc/hostname")).unwrap();
        root.write_file(Path::new("/etc/hostname"), b"new\n", 0o644)
            .unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(
            root.existing(Path::new("/etc/hostname")).unwrap(),
            Existing::File {
                contents: b"new\n".to_vec(),
                mode: 0o644
            }
        );
    }

    #[test]
    fn a_symlinked_directory_pointing_outside_is_kept_inside() {
        let (_t, root) = root();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("etc")).unwrap();
        root.write_file(Path::new("/etc/hostname"), b"x\n", 0o644)
            .unwrap();
        assert!(!outside.path().join("hostname").exists());
        let inner = root.path().join(outside.path().strip_prefix("/").unwrap());
        assert_eq!(fs::read(inner.join("hostname")).unwrap(), b"x\n");
    }

    #[test]
    fn capped_reads_refuse_an_oversized_file_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let p = Path::new("/etc/x.conf");
        assert_eq!(root.read_capped(p, 3, "x file").unwrap(), None);
        root.write_file(p, b"abc", 0o644).unwrap();
        assert_eq!(root.read_capped(p, 3, "x file").unwrap().unwrap(), b"abc");
        assert_eq!(
            root.read_text_capped(p, 3, "x file").unwrap().unwrap(),
            "abc"
        );
        let err = root.read_capped(p, 2, "x file").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(
            err.to_string().starts_with("larger than 2 bytes; a x file"),
            "{err}"
        );
        root.write_file(p, b"\xff", 0o644).unwrap();
        let err = root.read_text_capped(p, 3, "x file").unwrap_err();
        assert!(err.to_string().contains("not valid UTF-8"), "{err}");
    }

    #[test]
    fn mode_is_exact_despite_umask_and_no_temp_file_is_left() {
        let (_t, root) = root();
        root.write_file(Path::new("/etc/netplan/a.yaml"), b"x", 0o600)
            .unwrap();
        let meta = fs::metadata(root.path().join("etc/netplan/a.yaml")).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o600);
        assert_eq!(
            root.list_dir(Path::new("/etc/netplan")).unwrap(),
            ["a.yaml"]
        );
    }

    /// Every kind of write leaves its directory to sync, once however often it is
    /// written in; a sync leaves nothing, a record leaves nothing, and a directory removed
    /// before the sync (a failed apply put it back) does not fail it.
    #[test]
    fn writes_are_left_to_sync_once_per_directory_until_a_sync_or_a_record() {
        let (_t, root) = root();
        let pending = |root: &Root| {
            let mut dirs = root.unsynced.0.lock().unwrap().clone();
            dirs.sort();
            dirs
        };
        let at = |p: &str| root.path().join(p);
        root.write_file(Path::new("/etc/a"), b"1", 0o644).unwrap();
        root.write_file(Path::new("/etc/a"), b"2", 0o644).unwrap();
        root.write(
            Path::new("/etc/b"),
            b"b",
            0o644,
            FileOwner::Chown { uid: 0, gid: 0 },
        )
        .unwrap();
        root.symlink(Path::new("/etc/c"), Path::new("a")).unwrap();
        root.make_dir(Path::new("/srv"), 0o755, (0, 0)).unwrap();
        root.write(
            Path::new("/srv/u/f"),
            b"u",
            0o600,
            FileOwner::InUserDir {
                uid: 0,
                gid: 0,
                dir_mode: 0o700,
            },
        )
        .unwrap();
        root.rename(Path::new("/etc/b"), Path::new("/var/b"))
            .unwrap();
        root.remove_file(Path::new("/var/b")).unwrap();
        root.remove_file(Path::new("/var/never-there")).unwrap();
        assert_eq!(
            pending(&root),
            [root.path().to_path_buf(), at("etc"), at("srv/u"), at("var")]
        );
        root.clone().sync().unwrap();
        assert!(
            pending(&root).is_empty(),
            "a sync through a clone is a sync"
        );

        root.write_file(Path::new("/gone/x"), b"x", 0o644).unwrap();
        fs::remove_dir_all(at("gone")).unwrap();
        root.sync().unwrap();

        root.write_file(Path::new("/etc/a"), b"3", 0o644).unwrap();
        root.write_record(Path::new("/var/done"), b"done", 0o600)
            .unwrap();
        assert!(pending(&root).is_empty());
        assert_eq!(fs::read(at("etc/a")).unwrap(), b"3");
        assert_eq!(fs::read(at("var/done")).unwrap(), b"done");
    }

    #[test]
    fn symlink_loops_are_an_error() {
        let (_t, root) = root();
        std::os::unix::fs::symlink("/a", root.path().join("a")).unwrap();
        assert!(root.resolve(Path::new("/a"), true).is_err());
    }
}
