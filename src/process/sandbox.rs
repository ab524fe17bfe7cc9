//! The sealed box a program of another root runs in (`run --root DIR`, planning's checks):
//! its own mount, PID, IPC, UTS and network namespaces, the root as its `/` by
//! `pivot_root` (the machine's tree detached), a `/proc` of its PID namespace with the
//! kernel-wide files read-only, a `/dev` of six character devices, an empty read-only
//! `/sys`, only loopback, the root's own host name, a bounded capability set, no inherited
//! descriptor, and a stub init as PID 1 whose end (with the program's) ends every process
//! of the run. The model is `systemd-nspawn --as-pid2 --private-network` and `unshare
//! --fork --pid --mount-proc --kill-child`; the namespaces and mounts are the kernel's,
//! called through `nix`, the rest through `libc` (see docs/security.md, "The sealed box").

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sched::{unshare, CloneFlags};

/// A root other than `/` to run programs in, sealed off from the machine (module docs).
#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    root: CString,
    /// The host name inside: the root's `/etc/hostname` when it holds a valid one.
    hostname: CString,
}

/// Why a program cannot be run inside a root.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    /// Not running as root: no namespaces and no mounts.
    #[error(
        "running a program inside the root {0} needs root privileges (namespaces and mounts); \
         run vmcust as root, or customize the running system"
    )]
    NotRoot(PathBuf),
    /// A mount point the program's `/proc`, `/sys` or `/dev` needs is missing.
    #[error("the root {root} has no {dir} directory to mount {dir} on; a bootable root has one")]
    NoMountPoint {
        /// The root.
        root: PathBuf,
        /// `/proc`, `/sys` or `/dev`.
        dir: &'static str,
    },
    /// The root's path cannot be passed to the kernel.
    #[error("the root path {0} contains a NUL byte")]
    BadPath(PathBuf),
}

/// The directories mounted inside a root.
const MOUNT_POINTS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// The devices of `/dev`: name, major, minor (the numbers are the kernel's fixed ones).
const DEVICES: [(&CStr, u32, u32); 6] = [
    (c"/dev/null", 1, 3),
    (c"/dev/zero", 1, 5),
    (c"/dev/full", 1, 7),
    (c"/dev/random", 1, 8),
    (c"/dev/urandom", 1, 9),
    (c"/dev/tty", 5, 0),
];

/// The links every `/dev` has.
const DEV_LINKS: [(&CStr, &CStr); 4] = [
    (c"/proc/self/fd", c"/dev/fd"),
    (c"/proc/self/fd/0", c"/dev/stdin"),
    (c"/proc/self/fd/1", c"/dev/stdout"),
    (c"/proc/self/fd/2", c"/dev/stderr"),
];

/// Kernel-wide parts of `/proc` made read-only (Docker's and nspawn's list): writing
/// them would change the machine (`/proc/sys`, `/proc/sysrq-trigger`).
const PROC_READ_ONLY: [&CStr; 5] = [
    c"/proc/sys",
    c"/proc/sysrq-trigger",
    c"/proc/bus",
    c"/proc/fs",
    c"/proc/irq",
];

/// Files of `/proc` that show the machine's kernel state, hidden under `/dev/null`.
const PROC_MASKED: [&CStr; 5] = [
    c"/proc/kcore",
    c"/proc/keys",
    c"/proc/timer_list",
    c"/proc/sched_debug",
    c"/proc/latency_stats",
];

/// The capabilities the program keeps (Docker's default set without `CAP_MKNOD`): what
/// package scripts, `useradd`, `chown` and `su` need. Every other one (`CAP_SYS_ADMIN`:
/// mounts; `CAP_SYS_MODULE`, `CAP_SYS_RAWIO`, `CAP_SYS_PTRACE`, `CAP_DAC_READ_SEARCH`:
/// `open_by_handle_at` past the mount namespace; `CAP_MKNOD`; `CAP_SYS_TIME`,
/// `CAP_NET_ADMIN`, …) leaves the bounding set, so no program of the root regains it.
const KEPT_CAPS: [u32; 13] = [
    0,  // CAP_CHOWN
    1,  // CAP_DAC_OVERRIDE
    3,  // CAP_FOWNER
    4,  // CAP_FSETID
    5,  // CAP_KILL
    6,  // CAP_SETGID
    7,  // CAP_SETUID
    8,  // CAP_SETPCAP
    10, // CAP_NET_BIND_SERVICE
    13, // CAP_NET_RAW
    18, // CAP_SYS_CHROOT
    29, // CAP_AUDIT_WRITE
    31, // CAP_SETFCAP
];

/// The longest host name the kernel takes.
const MAX_HOSTNAME: usize = 64;

impl Sandbox {
    /// Checks that programs can be run inside `root` (a host path, not `/`): vmcust runs
    /// as root, and the root has `/proc`, `/sys` and `/dev` to mount on.
    pub(crate) fn new(root: &Path) -> Result<Sandbox, SandboxError> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err(SandboxError::NotRoot(root.to_path_buf()));
        }
        for dir in MOUNT_POINTS {
            let at = root.join(dir.trim_start_matches('/'));
            // A symlink there would only point inside the root (the mounts are made
            // after `pivot_root`), but a bootable root has real directories.
            if !std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
                return Err(SandboxError::NoMountPoint {
                    root: root.to_path_buf(),
                    dir,
                });
            }
        }
        let path = CString::new(root.as_os_str().as_encoded_bytes())
            .map_err(|_| SandboxError::BadPath(root.to_path_buf()))?;
        Ok(Sandbox {
            root: path,
            hostname: root_hostname(root),
        })
    }

    /// Spawns `command` (its program and working directory `cwd` paths inside the root)
    /// in the box, from the calling thread, which must be one made for this run: it
    /// enters a new PID namespace for its children, and the box's init is killed when
    /// this thread ends. Returns the child (the init) and the pipe on which the init
    /// sends the program's wait status.
    pub(super) fn spawn(&self, command: &mut Command, cwd: &Path) -> io::Result<(Child, OwnedFd)> {
        let cwd = CString::new(cwd.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::other("working directory with a NUL byte"))?;
        // Only this thread's children: the next fork is PID 1 of a new namespace.
        unshare(CloneFlags::CLONE_NEWPID)?;
        let (status_r, status_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let this = self.clone();
        let w = status_w.as_raw_fd();
        // SAFETY: the closure runs between fork and exec in a single-threaded child and
        // makes only system calls on memory prepared before the fork (see `init`).
        unsafe {
            command.pre_exec(move || this.init(&cwd, w));
        }
        let child = command.spawn();
        drop(status_w);
        Ok((child?, status_r))
    }

    /// In the forked child, PID 1 of the new PID namespace: seals the box, forks the
    /// program's process (which returns here to `exec` it) and stays as its stub init.
    /// Only system calls: no allocation, no lock.
    fn init(&self, cwd: &CStr, status_w: RawFd) -> io::Result<()> {
        // The box ends when the thread that started it does (vmcust killed included).
        nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
        // This init is a copy of vmcust (its memory, its environment): unreadable from
        // inside, through /proc/1 or ptrace.
        nix::sys::prctl::set_dumpable(false)?;
        unshare(
            CloneFlags::CLONE_NEWNS
                | CloneFlags::CLONE_NEWIPC
                | CloneFlags::CLONE_NEWUTS
                | CloneFlags::CLONE_NEWNET,
        )?;
        let none: Option<&CStr> = None;
        // Private, so that nothing mounted here propagates back to the machine.
        mount(
            none,
            c"/",
            none,
            MsFlags::MS_REC | MsFlags::MS_PRIVATE,
            none,
        )?;
        // The root becomes a mount of its own (pivot_root needs one), where no device
        // node the image carries opens a device.
        mount(
            Some(self.root.as_c_str()),
            self.root.as_c_str(),
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )?;
        set_nodev(&self.root)?;
        nix::unistd::chdir(self.root.as_c_str())?;
        nix::unistd::pivot_root(c".", c".")?;
        // The machine's tree, stacked on the root by the pivot, is detached: nothing of
        // it can be reached from here on.
        umount2(c".", MntFlags::MNT_DETACH)?;
        nix::unistd::chdir(c"/")?;
        mount_proc()?;
        mount_dev()?;
        mount(
            Some(c"tmpfs"),
            c"/sys",
            Some(c"tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some(c"size=4k,mode=555"),
        )?;
        nix::unistd::sethostname(
            <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(self.hostname.to_bytes()),
        )?;
        loopback_up()?;
        nix::unistd::chdir(cwd)?;
        // SAFETY: a raw clone (no fork handlers: this child of a threaded process may
        // hold none of the C library's locks); the child returns to exec.
        let program =
            unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0, 0, 0, 0) };
        match program {
            -1 => Err(io::Error::last_os_error()),
            0 => become_program(),
            pid => stay_init(pid as libc::pid_t, status_w),
        }
    }
}

/// The program's process, before exec: the bounded capability set, and every descriptor
/// past 0–2 closed at exec.
fn become_program() -> io::Result<()> {
    drop_capabilities()?;
    close_from(3, true);
    Ok(())
}

/// The stub init: closes everything of vmcust it holds, reaps every process until the
/// program ends, sends the program's wait status and exits; the kernel then kills what
/// is left in the namespace.
fn stay_init(program: libc::pid_t, status_w: RawFd) -> ! {
    // SAFETY: plain system calls on integers and a local buffer.
    unsafe {
        for fd in 0..3 {
            libc::close(fd);
        }
        for fd in 3..status_w {
            // One call where the kernel has close_range; the loop only before 5.9.
            if close_range(fd as u32, status_w as u32 - 1, false) {
                break;
            }
            libc::close(fd);
        }
        close_from(status_w as u32 + 1, false);
        let mut status: libc::c_int = 0;
        loop {
            let mut st: libc::c_int = 0;
            let pid = libc::waitpid(-1, &mut st, 0);
            if pid == program {
                status = st;
                break;
            }
            if pid < 0 && *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
        let bytes = status.to_ne_bytes();
        libc::write(status_w, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(0)
    }
}

/// `close_range(from, to)` (or, with `cloexec`, marks them close-on-exec); false where
/// the kernel has no such call (before 5.9, 5.11 for the flag).
fn close_range(from: u32, to: u32, cloexec: bool) -> bool {
    let flags = if cloexec {
        libc::CLOSE_RANGE_CLOEXEC
    } else {
        0
    };
    // SAFETY: a system call on integers.
    unsafe { libc::syscall(libc::SYS_close_range, from, to, flags) == 0 }
}

/// Every descriptor from `from` up closed (or close-on-exec), on any kernel.
fn close_from(from: u32, cloexec: bool) {
    if close_range(from, u32::MAX, cloexec) {
        return;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: system calls on integers and a local struct.
    unsafe {
        let top = match libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) {
            0 => lim.rlim_cur.min(1 << 20) as libc::c_int,
            _ => 1024,
        };
        for fd in from as libc::c_int..top {
            if cloexec {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            } else {
                libc::close(fd);
            }
        }
    }
}

/// Adds `nodev` to the root's mount and those below it (`mount_setattr`, 5.12), or to
/// its top mount alone on an older kernel (a remount keeps its other flags).
fn set_nodev(root: &CStr) -> io::Result<()> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    const MOUNT_ATTR_NODEV: u64 = 0x4;
    const AT_RECURSIVE: libc::c_int = 0x8000;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_NODEV,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: the path is NUL-terminated, the struct is the kernel's layout and size.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            root.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc == 0 {
        return Ok(());
    }
    // SAFETY: statvfs fills the local struct; zeroed is a valid value of it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(root.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_NODEV;
    for (st_flag, ms) in [
        (libc::ST_RDONLY, MsFlags::MS_RDONLY),
        (libc::ST_NOSUID, MsFlags::MS_NOSUID),
        (libc::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (libc::ST_NOATIME, MsFlags::MS_NOATIME),
        (libc::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (libc::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if st.f_flag & st_flag != 0 {
            flags |= ms;
        }
    }
    let none: Option<&CStr> = None;
    mount(none, root, none, flags, none)?;
    Ok(())
}

/// `/proc` of the new PID namespace, its kernel-wide parts read-only or hidden.
fn mount_proc() -> io::Result<()> {
    let none: Option<&CStr> = None;
    let hidden = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount(Some(c"proc"), c"/proc", Some(c"proc"), hidden, none)?;
    for path in PROC_READ_ONLY {
        match mount(
            Some(path),
            path,
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        ) {
            // Not every kernel has every one of them.
            Err(nix::errno::Errno::ENOENT) => continue,
            other => other?,
        }
        mount(
            none,
            path,
            none,
            MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | hidden,
            none,
        )?;
    }
    Ok(())
}

/// A `/dev` of its own: a small tmpfs with the six devices and the usual links, and the
/// files of `/proc` that show the kernel's state hidden under its `/dev/null`.
fn mount_dev() -> io::Result<()> {
    let none: Option<&CStr> = None;
    mount(
        Some(c"tmpfs"),
        c"/dev",
        Some(c"tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some(c"size=64k,mode=755"),
    )?;
    for (path, major, minor) in DEVICES {
        // SAFETY: NUL-terminated paths; makedev and mknod/chmod take plain integers.
        unsafe {
            let dev = libc::makedev(major, minor);
            if libc::mknod(path.as_ptr(), libc::S_IFCHR | 0o666, dev) != 0
                || libc::chmod(path.as_ptr(), 0o666) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    for (target, link) in DEV_LINKS {
        nix::unistd::symlinkat(target, nix::fcntl::AT_FDCWD, link)?;
    }
    for path in PROC_MASKED {
        match mount(Some(c"/dev/null"), path, none, MsFlags::MS_BIND, none) {
            Err(nix::errno::Errno::ENOENT) => {}
            other => other?,
        }
    }
    Ok(())
}

/// Brings the namespace's own loopback up (it starts down).
fn loopback_up() -> io::Result<()> {
    // SAFETY: a socket used for two ioctls on a zeroed, NUL-terminated ifreq, then closed.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as libc::c_char;
        req.ifr_name[1] = b'o' as libc::c_char;
        let mut rc = libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut req);
        if rc == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            rc = libc::ioctl(sock, libc::SIOCSIFFLAGS, &req);
        }
        let err = io::Error::last_os_error();
        libc::close(sock);
        match rc {
            0 => Ok(()),
            _ => Err(err),
        }
    }
}

/// Leaves the program [`KEPT_CAPS`] only: the others leave the bounding set (so no
/// set-user-ID or file-capability program gets them back), the inheritable and ambient
/// sets are emptied.
fn drop_capabilities() -> io::Result<()> {
    let kept = KEPT_CAPS.iter().fold(0u64, |m, &c| m | 1 << c);
    for cap in 0..64u32 {
        if kept & 1 << cap != 0 {
            continue;
        }
        // SAFETY: prctl on integers. EINVAL: past the kernel's last capability.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
        if rc != 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINVAL) {
                return Err(err);
            }
        }
    }
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let empty = Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    };
    let mut data = [empty; 2];
    // SAFETY: the kernel's capget/capset layout (version 3: two data structs); then prctl.
    unsafe {
        // What vmcust has (it may run with fewer than all), less what is not kept: capset
        // cannot add a capability.
        if libc::syscall(
            libc::SYS_capget,
            &header as *const Header,
            data.as_mut_ptr(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        for (word, d) in data.iter_mut().enumerate() {
            let keep = (kept >> (32 * word)) as u32;
            d.permitted &= keep;
            d.effective &= keep;
            d.inheritable = 0;
        }
        if libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        // EINVAL before 4.3, which has no ambient set to clear.
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    Ok(())
}

/// The host name inside the box: the first line of the root's `/etc/hostname` when it is
/// a valid name (letters, digits, `-` and `.`, at most 64 bytes), else `localhost`. Read
/// without following a link (a link there could name a file of this machine).
fn root_hostname(root: &Path) -> CString {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let etc = root.join("etc");
    let name = std::fs::symlink_metadata(&etc)
        .ok()
        .filter(|m| m.is_dir())
        .and_then(|_| {
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(etc.join("hostname"))
                .ok()
        })
        .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))
        .and_then(|f| {
            let mut text = String::new();
            f.take(256).read_to_string(&mut text).ok()?;
            let first = text.lines().next()?.trim().to_string();
            let valid = !first.is_empty()
                && first.len() <= MAX_HOSTNAME
                && first
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
            valid.then_some(first)
        });
    CString::new(name.unwrap_or_else(|| "localhost".into())).expect("checked: no NUL")
}

/// The program's wait status as the init sent it, or the init's own (killed before it
/// could send it: a timeout's SIGKILL).
pub(super) fn program_status(init: ExitStatus, status_r: OwnedFd) -> ExitStatus {
    let mut buf = [0u8; 4];
    let mut file = std::fs::File::from(status_r);
    match std::io::Read::read_exact(&mut file, &mut buf) {
        Ok(()) => ExitStatus::from_raw(i32::from_ne_bytes(buf)),
        Err(_) => init,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root without a real directory to mount on is refused before anything starts;
    /// a symlink there counts as missing.
    #[test]
    fn a_sandbox_needs_real_mount_points() {
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let err = Sandbox::new(d.path()).unwrap_err().to_string();
        assert!(err.contains("has no /proc directory"), "{err}");
        std::fs::create_dir(d.path().join("proc")).unwrap();
        std::os::unix::fs::symlink("/sys", d.path().join("sys")).unwrap();
        let err = Sandbox::new(d.path()).unwrap_err().to_string();
        assert!(err.contains("has no /sys directory"), "{err}");
        std::fs::remove_file(d.path().join("sys")).unwrap();
        std::fs::create_dir(d.path().join("sys")).unwrap();
        std::fs::create_dir(d.path().join("dev")).unwrap();
        assert!(Sandbox::new(d.path()).is_ok());
    }

    #[test]
    fn the_host_name_inside_is_the_roots_own_when_valid() {
        let d = tempfile::tempdir().unwrap();
        let name = |d: &Path| root_hostname(d).into_string().unwrap();
        assert_eq!(name(d.path()), "localhost");
        std::fs::create_dir(d.path().join("etc")).unwrap();
        let cases = [
            ("box.example.com\n", "box.example.com"),
            ("  web-1  \nother\n", "web-1"),
            ("bad name\n", "localhost"),
            ("", "localhost"),
            ("évian\n", "localhost"),
        ];
        for (text, want) in cases {
            std::fs::write(d.path().join("etc/hostname"), text).unwrap();
            assert_eq!(name(d.path()), want, "{text:?}");
        }
        let long = "a".repeat(MAX_HOSTNAME + 1);
        std::fs::write(d.path().join("etc/hostname"), &long).unwrap();
        assert_eq!(name(d.path()), "localhost");
        // A link (to a file of this machine) is not followed.
        std::fs::remove_file(d.path().join("etc/hostname")).unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(outside.path(), "secret-host\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("etc/hostname")).unwrap();
        assert_eq!(name(d.path()), "localhost");
    }
}
