//! Seed media (the OpenStack config drive, the NoCloud seed): found by volume label on the
//! root's CD-ROMs and block devices, or given on the command line as an image or a
//! directory, and read straight from the device or image (no mount): ISO9660 through the
//! repo's own reader, vfat through the `fatfs` crate, a directory through the file
//! system. Every read is bounded (docs/limits.md).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use vmcust_ovf::iso9660::{IsoImage, IsoLimits};

use super::fat_chain::Geometry;
use super::ovf_locate::CD_DEVICES;
use super::Door;
use crate::failure::Failure;
use crate::root::Root;

/// Largest seed image (or device) read as ISO9660; seed drives hold a few small files.
pub(crate) const MAX_IMAGE_BYTES: u64 = 128 * 1024 * 1024;

/// Largest file read from a seed medium (user-data is the big one; as guestinfo's cap).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Most bytes read from one vfat medium in all (boot sector, FATs, directories, files):
/// a directory whose cluster chain loops would otherwise be read for ever.
pub(crate) const MAX_FAT_READ_BYTES: u64 = 64 * 1024 * 1024;

/// Whole disks tried for a vfat or ISO9660 seed when udev made no `/dev/disk/by-label`
/// link: `/dev/vda`…`/dev/vdz`, `/dev/sda`…, `/dev/xvda`… (a seed is an unpartitioned disk).
pub(crate) const DISK_PREFIXES: &[&str] = &["/dev/vd", "/dev/sd", "/dev/xvd"];

/// Byte offset of the first ISO9660 volume descriptor (sector 16).
const ISO_DESCRIPTOR_OFFSET: u64 = 16 * 2048;

/// Which kind of medium a file system is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// ISO9660 (with Rock Ridge or Joliet names).
    Iso9660,
    /// FAT12/16/32.
    Vfat,
    /// A directory (command line only).
    Directory,
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::Iso9660 => "iso9660",
            Format::Vfat => "vfat",
            Format::Directory => "directory",
        })
    }
}

/// A reader that never writes (fatfs wants `Write` as well; a seed is only read), stops
/// after serving [`MAX_FAT_READ_BYTES`], and reads the medium in aligned blocks: fatfs
/// reads a directory entry (32 bytes) or a FAT entry at a time, and a system call for
/// each made a boot's discovery take a second under emulation.
struct ReadOnly {
    file: File,
    /// Bytes served so far.
    read: u64,
    /// The position fatfs is at.
    pos: u64,
    /// The medium's size.
    size: u64,
    /// The block held, and where it starts.
    block: Vec<u8>,
    block_at: u64,
    /// Where a file's read first touched the data area, while one is watched.
    trace: Rc<Cell<Trace>>,
}

/// What [`ReadOnly`] notes while a file is read: the offset of its first data read gives
/// the file's first cluster, which fatfs does not tell (its chain is checked from there).
#[derive(Debug, Clone, Copy, Default)]
struct Trace {
    /// Watching: the offset where the data area starts.
    data_at: Option<u64>,
    /// The first offset read at or past it.
    first: Option<u64>,
}

/// The size of the blocks [`ReadOnly`] reads.
const BLOCK: u64 = 64 * 1024;

impl ReadOnly {
    fn new(mut file: File) -> io::Result<ReadOnly> {
        let size = file.seek(SeekFrom::End(0))?;
        Ok(ReadOnly {
            file,
            read: 0,
            pos: 0,
            size,
            block: Vec::new(),
            block_at: 0,
            trace: Rc::default(),
        })
    }

    /// Makes the block hold `self.pos` (unless it is at or past the end).
    fn fill(&mut self) -> io::Result<()> {
        let held = self.block_at..self.block_at + self.block.len() as u64;
        if held.contains(&self.pos) || self.pos >= self.size {
            return Ok(());
        }
        self.block_at = self.pos - self.pos % BLOCK;
        self.block.clear();
        self.file.seek(SeekFrom::Start(self.block_at))?;
        (&mut self.file).take(BLOCK).read_to_end(&mut self.block)?;
        Ok(())
    }
}

impl Read for ReadOnly {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.read >= MAX_FAT_READ_BYTES {
            return Err(io::Error::other(format!(
                "read more than {MAX_FAT_READ_BYTES} bytes of the medium (a loop in its \
                 cluster chains?)"
            )));
        }
        let mut trace = self.trace.get();
        if trace.first.is_none() && trace.data_at.is_some_and(|at| self.pos >= at) {
            trace.first = Some(self.pos);
            self.trace.set(trace);
        }
        self.fill()?;
        let end = self.block_at + self.block.len() as u64;
        if self.pos < self.block_at || self.pos >= end {
            return Ok(0);
        }
        let from = (self.pos - self.block_at) as usize;
        let n = buf.len().min(self.block.len() - from);
        buf[..n].copy_from_slice(&self.block[from..from + n]);
        self.pos += n as u64;
        self.read += n as u64;
        Ok(n)
    }
}

impl Write for ReadOnly {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "a seed medium is read only",
        ))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for ReadOnly {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let to = match pos {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
        };
        self.pos = to.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start of the medium",
            )
        })?;
        Ok(self.pos)
    }
}

enum Inner {
    Iso { file: File, image: IsoImage },
    Fat(Box<Fat>),
    Dir(PathBuf),
}

/// An opened vfat medium: fatfs over the device, and what checking its chains needs.
struct Fat {
    fs: fatfs::FileSystem<ReadOnly>,
    /// The device or image again, for reading the FAT.
    raw: File,
    /// Its size.
    bytes: u64,
    geometry: Geometry,
    trace: Rc<Cell<Trace>>,
}

/// An opened seed medium.
pub struct Medium {
    /// Where it is, for people: `/dev/sr0`, an image path.
    pub place: String,
    /// Its volume label (`None` for a directory).
    pub label: Option<String>,
    /// Its format.
    pub format: Format,
    inner: Inner,
}

impl std::fmt::Debug for Medium {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Medium")
            .field("place", &self.place)
            .field("label", &self.label)
            .field("format", &self.format)
            .finish()
    }
}

/// The volume label of a FAT boot sector, or `None` when the sector is not FAT's (its
/// signature, a sane sector size, the `FAT` file system type at the FAT12/16 or FAT32
/// place). The label is the 11 bytes before it, blanks removed.
pub(crate) fn fat_label(sector: &[u8]) -> Option<String> {
    if sector.len() < 512 || sector[510..512] != [0x55, 0xAA] {
        return None;
    }
    let bytes_per_sector = u16::from_le_bytes([sector[11], sector[12]]);
    if !matches!(bytes_per_sector, 512 | 1024 | 2048 | 4096) {
        return None;
    }
    let label_at = if &sector[82..87] == b"FAT32" {
        71
    } else if &sector[54..57] == b"FAT" {
        43
    } else {
        return None;
    };
    let label = &sector[label_at..label_at + 11];
    Some(
        String::from_utf8_lossy(label)
            .trim_end_matches([' ', '\0'])
            .to_string(),
    )
}

/// Opens a device or image for reading as blkid does, with `O_NONBLOCK`: the CD-ROM
/// driver then skips its medium check at open (slow on an empty drive, which a VM
/// usually has). A CD-ROM drive that says it has no disc is an error here: reading it
/// would fail only after the SCSI layer's retries.
pub(crate) fn open_medium(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    if kernel_found_no_disc(path) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "no disc in the drive (as the kernel last found it)",
        ));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if drive_without_disc(&file) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "no disc in the drive",
        ));
    }
    Ok(file)
}

/// The block major of SCSI CD-ROM drives (`/dev/sr*`).
const SCSI_CDROM_MAJOR: u32 = 11;

/// The size Linux's CD-ROM driver gives a drive in which it found no disc when it last
/// looked (at boot, or at the last open or media-change event): `0x1fffff` sectors of 512
/// bytes, which is not a whole number of a disc's 2048-byte blocks, so never a disc's size.
const NO_DISC_SECTORS: &str = "2097151";

/// Whether `path` is a SCSI CD-ROM drive the kernel found empty, read from sysfs without
/// opening the drive: opening an empty drive makes the kernel ask it for a disc, 72 ms
/// under emulation (docs/benchmarks.md), and udev early in boot has not said yet. A disc
/// put in later is seen once the drive is opened or polled (systemd polls every 2 s), so
/// at worst a disc inserted in the last seconds is found by the next look, not this one.
fn kernel_found_no_disc(path: &Path) -> bool {
    let Some((major @ SCSI_CDROM_MAJOR, minor)) = super::udev_db::block_device_numbers(path) else {
        return false;
    };
    std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/size"))
        .is_ok_and(|size| size.trim() == NO_DISC_SECTORS)
}

/// Whether `file` is a CD-ROM drive whose status (`CDROM_DRIVE_STATUS`, one TEST UNIT
/// READY) is "no disc" or "tray open". Anything else (a disk, an image, a drive that
/// cannot tell) is not.
fn drive_without_disc(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // linux/cdrom.h.
    const CDROM_DRIVE_STATUS: libc::c_ulong = 0x5326;
    const CDSL_CURRENT: libc::c_int = libc::c_int::MAX;
    const CDS_NO_DISC: libc::c_int = 1;
    const CDS_TRAY_OPEN: libc::c_int = 2;
    // SAFETY: the descriptor is open for the whole call; this request takes its slot
    // number by value and writes no memory. On anything but a CD-ROM it fails (ENOTTY).
    let status = unsafe { libc::ioctl(file.as_raw_fd(), CDROM_DRIVE_STATUS, CDSL_CURRENT) };
    status == CDS_NO_DISC || status == CDS_TRAY_OPEN
}

fn read_at(file: &mut File, offset: u64, buf: &mut [u8]) -> bool {
    file.seek(SeekFrom::Start(offset)).is_ok() && file.read_exact(buf).is_ok()
}

/// What `file` holds: ISO9660 (the `CD001` signature at sector 16), FAT (its boot
/// sector), or neither.
fn sniff(file: &mut File) -> Option<Format> {
    let mut sig = [0u8; 6];
    if read_at(file, ISO_DESCRIPTOR_OFFSET, &mut sig) && &sig[1..6] == b"CD001" {
        return Some(Format::Iso9660);
    }
    let mut sector = [0u8; 512];
    if read_at(file, 0, &mut sector) && fat_label(&sector).is_some() {
        return Some(Format::Vfat);
    }
    None
}

/// What one discovery found on each device it opened, so that a device is opened once
/// however many sources look at it: an empty CD-ROM drive takes about 70 ms to open on an
/// emulated guest, even with `O_NONBLOCK` (docs/benchmarks.md), and the NoCloud, config
/// drive and OVF sources all look at the same drives.
#[derive(Debug, Default)]
pub(crate) struct Probes(RefCell<HashMap<PathBuf, Option<Probed>>>);

/// A device holding a medium of a format vmcust reads, as one discovery found it.
#[derive(Debug)]
pub(crate) struct Probed {
    /// ISO9660 or vfat.
    pub format: Format,
    /// Its volume label, when it has one that could be read.
    pub label: Option<String>,
    /// The open device.
    pub file: File,
}

impl Probes {
    /// The medium at `path` (a host path), opened and looked at on the first call only;
    /// `None` for an empty drive, a device that cannot be opened, or one that holds
    /// neither ISO9660 nor FAT. Each call gets its own descriptor of the one open device.
    pub(crate) fn probe(&self, path: &Path) -> Option<Probed> {
        let mut seen = self.0.borrow_mut();
        let probed = seen
            .entry(path.to_path_buf())
            .or_insert_with(|| probe_device(path))
            .as_ref()?;
        Some(Probed {
            format: probed.format,
            label: probed.label.clone(),
            file: probed.file.try_clone().ok()?,
        })
    }
}

/// Opens the device at `path` and reads its format and label.
fn probe_device(path: &Path) -> Option<Probed> {
    let started = std::time::Instant::now();
    let opened = open_medium(path);
    tracing::debug!(
        "{}: {} in {:.3} ms",
        path.display(),
        match &opened {
            Ok(_) => "opened".to_string(),
            Err(e) => format!("not opened ({e})"),
        },
        started.elapsed().as_secs_f64() * 1000.0
    );
    let mut file = opened.ok()?;
    let format = sniff(&mut file)?;
    let label = match format {
        Format::Iso9660 => vmcust_ovf::volume_label(
            &mut file,
            &IsoLimits {
                max_image_bytes: u64::MAX,
                max_file_bytes: 0,
            },
        )
        .ok(),
        Format::Vfat => {
            let mut sector = [0u8; 512];
            read_at(&mut file, 0, &mut sector)
                .then(|| fat_label(&sector))
                .flatten()
        }
        Format::Directory => None,
    };
    Some(Probed {
        format,
        label,
        file,
    })
}

fn invalid(place: &str, what: impl std::fmt::Display) -> Failure {
    Failure::invalid(format!("seed medium {place}: {what}"))
}

impl Medium {
    /// Opens the image, device or directory at `path` (a host path), shown as `place`.
    /// `Ok(None)` when it is neither ISO9660 nor FAT (an empty drive, another disk).
    pub fn open(path: &Path, place: &str) -> Result<Option<Medium>, Failure> {
        if path.is_dir() {
            return Ok(Some(Medium {
                place: place.to_string(),
                label: None,
                format: Format::Directory,
                inner: Inner::Dir(path.to_path_buf()),
            }));
        }
        match open_medium(path) {
            Ok(file) => Medium::from_file(file, place),
            Err(_) => Ok(None),
        }
    }

    /// Reads the medium on the open device or image `file`, shown as `place`; `Ok(None)`
    /// when it is neither ISO9660 nor FAT.
    pub fn from_file(mut file: File, place: &str) -> Result<Option<Medium>, Failure> {
        match sniff(&mut file) {
            Some(Format::Iso9660) => {
                let limits = IsoLimits {
                    max_image_bytes: MAX_IMAGE_BYTES,
                    max_file_bytes: MAX_FILE_BYTES,
                };
                let image = IsoImage::open(&mut file, &limits).map_err(|e| {
                    if e.is_unreadable() {
                        Failure::io(format!("seed medium {place}: {e}"))
                    } else {
                        invalid(place, e)
                    }
                })?;
                Ok(Some(Medium {
                    place: place.to_string(),
                    label: Some(image.label().to_string()),
                    format: Format::Iso9660,
                    inner: Inner::Iso { file, image },
                }))
            }
            Some(Format::Vfat) => {
                let io = |e: io::Error| Failure::io(format!("seed medium {place}: {e}"));
                let raw = file.try_clone().map_err(io)?;
                let mut sector = [0u8; 512];
                if !read_at(&mut file, 0, &mut sector) {
                    return Err(invalid(place, "its boot sector cannot be read"));
                }
                let geometry = Geometry::from_boot_sector(&sector).ok_or_else(|| {
                    invalid(
                        place,
                        "not a readable vfat file system: its boot sector's numbers do not add up",
                    )
                })?;
                let disk = ReadOnly::new(file).map_err(io)?;
                let (bytes, trace) = (disk.size, disk.trace.clone());
                let options = fatfs::FsOptions::new().update_accessed_date(false);
                let fs = guarded(|| fatfs::FileSystem::new(disk, options))
                    .map_err(|e| invalid(place, format!("not a readable vfat file system: {e}")))?;
                let label = fs.volume_label().trim_end_matches([' ', '\0']).to_string();
                Ok(Some(Medium {
                    place: place.to_string(),
                    label: Some(label),
                    format: Format::Vfat,
                    inner: Inner::Fat(Box::new(Fat {
                        fs,
                        raw,
                        bytes,
                        geometry,
                        trace,
                    })),
                }))
            }
            _ => Ok(None),
        }
    }

    /// Whether the medium's label is one of `labels` (as blkid compares them: exactly;
    /// the sources list both spellings). A directory has no label and matches none.
    pub fn has_label(&self, labels: &[&str]) -> bool {
        self.label.as_deref().is_some_and(|l| labels.contains(&l))
    }

    /// Reads the file at `path` (`/`-separated, from the medium's root), at most `cap`
    /// bytes (itself at most [`MAX_FILE_BYTES`]); `Ok(None)` when there is none.
    pub fn read(&mut self, path: &str, cap: u64) -> Result<Option<Vec<u8>>, Failure> {
        let cap = cap.min(MAX_FILE_BYTES);
        let place = format!("{} on {}", path, self.place);
        let too_big = || {
            invalid(
                &self.place,
                format!("{path} is over the limit of {cap} bytes"),
            )
        };
        let bytes = match &mut self.inner {
            Inner::Iso { file, image } => {
                match image.read_file(file, path).map_err(|e| {
                    if e.is_unreadable() {
                        Failure::io(format!("reading {place}: {e}"))
                    } else {
                        Failure::invalid(format!("reading {place}: {e}"))
                    }
                })? {
                    Some(b) => b,
                    None => return Ok(None),
                }
            }
            Inner::Fat(fat) => match guarded(|| read_fat(fat, path, cap)) {
                Ok(Some(b)) => b,
                Ok(None) => return Ok(None),
                Err(e) => return Err(Failure::invalid(format!("reading {place}: {e}"))),
            },
            Inner::Dir(dir) => {
                let full = dir.join(path);
                let file = match File::open(&full) {
                    Ok(f) => f,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(Failure::io(format!("reading {}: {e}", full.display()))),
                };
                if !file.metadata().is_ok_and(|m| m.is_file()) {
                    return Ok(None);
                }
                let mut out = Vec::new();
                file.take(cap + 1)
                    .read_to_end(&mut out)
                    .map_err(|e| Failure::io(format!("reading {}: {e}", full.display())))?;
                out
            }
        };
        if bytes.len() as u64 > cap {
            return Err(too_big());
        }
        Ok(Some(bytes))
    }
}

/// Runs a call into fatfs, turning a panic on a malformed image into an error: the crate
/// was not written for hostile images, and one bad medium must not stop a boot.
fn guarded<T>(f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(io::Error::other("the vfat file system is malformed")),
    }
}

fn read_fat(fat: &Fat, path: &str, cap: u64) -> io::Result<Option<Vec<u8>>> {
    let fs = &fat.fs;
    let (dir_path, name) = match path.rsplit_once('/') {
        Some((d, n)) => (Some(d), n),
        None => (None, path),
    };
    let mut dir = fs.root_dir();
    if let Some(d) = dir_path {
        dir = match dir.open_dir(d) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
    }
    // The directory's own entry gives the size before anything is read; at most
    // MAX_ENTRIES entries are looked at (with the read budget, a loop ends).
    const MAX_ENTRIES: usize = 4096;
    let mut found = None;
    for (n, entry) in dir.iter().enumerate() {
        if n >= MAX_ENTRIES {
            return Err(io::Error::other(format!(
                "its directory has more than {MAX_ENTRIES} entries (or its cluster chain \
                 loops); a seed drive holds a few files"
            )));
        }
        let entry = entry?;
        if entry.is_file() && entry.file_name().eq_ignore_ascii_case(name) {
            found = Some(entry);
            break;
        }
    }
    let Some(entry) = found else {
        return Ok(None);
    };
    if entry.len() > cap {
        return Err(io::Error::other(format!(
            "{path} is {} bytes, over the limit of {cap} bytes",
            entry.len()
        )));
    }
    // Read exactly as much as the entry declares, noting where the data starts; then the
    // chain must hold exactly that (fatfs stops early at a cut chain, and reads a loop or
    // another file's clusters as if they were this file's).
    let size = entry.len();
    fat.trace.set(Trace {
        data_at: Some(fat.geometry.data_at()),
        first: None,
    });
    let mut out = Vec::new();
    let read = entry.to_file().take(size).read_to_end(&mut out);
    let first = fat.trace.take().first;
    read?;
    let broken = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
    if let Some(first) = first {
        let cluster = fat.geometry.cluster_at(first);
        fat.geometry
            .check_chain(&fat.raw, fat.bytes, cluster, size)
            .map_err(broken)?;
    }
    if out.len() as u64 != size {
        return Err(broken(format!(
            "its directory entry declares {size} bytes, its cluster chain holds {} (a \
             truncated or inconsistent medium)",
            out.len()
        )));
    }
    Ok(Some(out))
}

/// The seed medium for a source whose media carry one of `labels`: on the command line,
/// the first `--seed` that has such a label or that is a directory `is_mine` accepts;
/// at boot, `/dev/disk/by-label/<label>`, then the CD-ROMs, then the whole disks of the
/// root. `Ok(None)` when there is none.
pub(crate) fn find(
    door: &Door,
    labels: &[&str],
    is_mine: impl Fn(&Path) -> bool,
) -> Result<Option<Medium>, Failure> {
    match &door.given {
        Some(given) => {
            for path in &given.seeds {
                let shown = path.display().to_string();
                if path.is_dir() {
                    if is_mine(path) {
                        return Medium::open(path, &shown);
                    }
                    if !KNOWN_DIR_FILES.iter().any(|f| path.join(f).is_file()) {
                        return Err(Failure::invalid(format!(
                            "--seed {shown}: a directory with neither meta-data (NoCloud) nor \
                             openstack/latest/meta_data.json (config drive)"
                        )));
                    }
                    continue;
                }
                if !path.exists() {
                    return Err(Failure::io(format!("--seed {shown}: no such file")));
                }
                match Medium::open(path, &shown)? {
                    Some(m) if m.has_label(labels) => return Ok(Some(m)),
                    Some(m) if m.has_label(KNOWN_LABELS) => {}
                    Some(m) => {
                        return Err(Failure::invalid(format!(
                            "--seed {shown}: a {} volume labelled {:?}, not a seed drive; \
                             label it config-2 (OpenStack config drive) or cidata (NoCloud)",
                            m.format,
                            m.label.unwrap_or_default()
                        )))
                    }
                    None => {
                        return Err(Failure::invalid(format!(
                            "--seed {shown}: neither an ISO9660 nor a vfat image, nor a directory"
                        )))
                    }
                }
            }
            Ok(None)
        }
        None => locate(door.root, &door.media, labels),
    }
}

/// The file that makes a directory a seed of some kind (so a `--seed DIR` of the other
/// kind is not an error).
const KNOWN_DIR_FILES: &[&str] = &["meta-data", "openstack/latest/meta_data.json"];

/// Every label a seed source reads (so a `--seed` of the other kind is not an error).
const KNOWN_LABELS: &[&str] = &["config-2", "CONFIG-2", "cidata", "CIDATA"];

/// Where media are looked for in `root`, in order.
pub(crate) fn candidates(labels: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = labels
        .iter()
        .map(|l| format!("/dev/disk/by-label/{l}"))
        .collect();
    out.extend(CD_DEVICES.iter().map(|d| d.to_string()));
    for prefix in DISK_PREFIXES {
        out.extend((b'a'..=b'z').map(|c| format!("{prefix}{}", c as char)));
    }
    out
}

/// Finds a medium labelled one of `labels` among the root's devices (every path
/// resolved inside the root). Unreadable or foreign devices are skipped; a medium that
/// has the label but cannot be read is an error (it was meant for this VM).
fn locate(root: &Root, media: &Probes, labels: &[&str]) -> Result<Option<Medium>, Failure> {
    // /dev listed once: most candidates (`/dev/xvdq`…) are not there.
    let in_dev: std::collections::HashSet<String> = root
        .list_dir(Path::new("/dev"))
        .unwrap_or_default()
        .into_iter()
        .collect();
    for dev in candidates(labels) {
        let direct = dev.strip_prefix("/dev/").filter(|n| !n.contains('/'));
        if direct.is_some_and(|n| !in_dev.contains(n)) {
            continue;
        }
        let Ok(path) = root.resolve(Path::new(&dev), true) else {
            continue;
        };
        if super::udev_db::rules_out(root, &path, Some(labels)) {
            continue;
        }
        let Some(probed) = media.probe(&path) else {
            continue;
        };
        if !probed.label.as_deref().is_some_and(|l| labels.contains(&l)) {
            continue;
        }
        if let Some(m) = Medium::from_file(probed.file, &dev)? {
            if m.has_label(labels) {
                return Ok(Some(m));
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot_sector(fat32: bool, label: &[u8; 11]) -> Vec<u8> {
        let mut s = vec![0u8; 512];
        s[11..13].copy_from_slice(&512u16.to_le_bytes());
        s[510] = 0x55;
        s[511] = 0xAA;
        if fat32 {
            s[71..82].copy_from_slice(label);
            s[82..90].copy_from_slice(b"FAT32   ");
        } else {
            s[43..54].copy_from_slice(label);
            s[54..62].copy_from_slice(b"FAT16   ");
        }
        s
    }

    #[test]
    fn fat_labels_from_boot_sectors() {
        assert_eq!(
            fat_label(&boot_sector(false, b"CONFIG-2   ")).as_deref(),
            Some("CONFIG-2")
        );
        assert_eq!(
            fat_label(&boot_sector(true, b"cidata     ")).as_deref(),
            Some("cidata")
        );
        let mut bad = boot_sector(false, b"CONFIG-2   ");
        bad[511] = 0;
        assert_eq!(fat_label(&bad), None);
        let mut bad = boot_sector(false, b"CONFIG-2   ");
        bad[11] = 7;
        assert_eq!(fat_label(&bad), None);
        let mut bad = boot_sector(false, b"CONFIG-2   ");
        bad[54..57].copy_from_slice(b"EXT");
        assert_eq!(fat_label(&bad), None);
        assert_eq!(fat_label(&[0u8; 100]), None);
    }

    /// A discovery opens each device once: what the first look found (a medium, or
    /// nothing) is what every later source is told, and the next discovery looks again.
    #[test]
    fn each_device_is_opened_once_per_discovery() {
        let d = tempfile::tempdir().unwrap();
        let disk = d.path().join("vdb");
        std::fs::write(&disk, boot_sector(false, b"cidata     ")).unwrap();
        let empty = d.path().join("sr0");
        let probes = Probes::default();
        let first = probes.probe(&disk).expect("a FAT medium");
        assert_eq!(
            (first.format, first.label.as_deref()),
            (Format::Vfat, Some("cidata"))
        );
        assert!(probes.probe(&empty).is_none(), "nothing there");
        // Gone and arrived since the first look: this discovery keeps what it saw, on the
        // descriptor it opened.
        std::fs::remove_file(&disk).unwrap();
        std::fs::write(&empty, boot_sector(true, b"config-2   ")).unwrap();
        let again = probes.probe(&disk).expect("still the opened device");
        assert_eq!(again.label.as_deref(), Some("cidata"));
        let mut sector = [0u8; 512];
        assert!(read_at(&mut { again.file }, 0, &mut sector));
        assert!(probes.probe(&empty).is_none());
        let next = Probes::default();
        assert!(next.probe(&disk).is_none());
        assert_eq!(
            next.probe(&empty).and_then(|p| p.label).as_deref(),
            Some("config-2")
        );
    }

    /// Reads through the block cache give the file's bytes wherever they start and end,
    /// and writes are refused.
    #[test]
    fn the_block_reader_reads_exactly_and_never_writes() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("img");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mut r = ReadOnly::new(File::open(&path).unwrap()).unwrap();
        for (at, len) in [
            (0u64, 10usize),
            (65_530, 20),
            (131_071, 3),
            (199_990, 50),
            (5, 0),
        ] {
            r.seek(SeekFrom::Start(at)).unwrap();
            let mut buf = vec![0u8; len];
            let mut got = Vec::new();
            loop {
                let n = r.read(&mut buf).unwrap();
                if n == 0 || got.len() >= len {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
                buf.truncate(len - got.len());
                if buf.is_empty() {
                    break;
                }
            }
            let end = (at as usize + len).min(data.len());
            assert_eq!(got, &data[at as usize..end], "at {at}");
        }
        assert_eq!(r.seek(SeekFrom::End(-1)).unwrap(), 199_999);
        assert!(r.seek(SeekFrom::Current(-300_000)).is_err());
        assert!(r.write(b"x").is_err());
        assert_eq!(std::fs::read(&path).unwrap(), data);
    }

    #[test]
    fn candidates_are_bounded_and_by_label_first() {
        let c = candidates(&["config-2", "CONFIG-2"]);
        assert_eq!(c[0], "/dev/disk/by-label/config-2");
        assert_eq!(c[2], "/dev/sr0");
        assert!(c.contains(&"/dev/xvdz".to_string()));
        assert_eq!(c.len(), 2 + CD_DEVICES.len() + 3 * 26);
    }
}
