//! Read `ovf-env.xml` straight out of an ISO9660 image or CD device, without mounting it.
//!
//! Only what an OVF transport medium or a seed drive needs: the primary volume descriptor
//! (label, root directory), the Joliet supplementary descriptor and Rock Ridge `NM` names,
//! the root directory (OVF transports put the file there) and, for seed drives, a file by
//! its path in subdirectories ([`IsoImage::read_file`]). Every read is bounded by
//! [`IsoLimits`] and by the image size, so arbitrary bytes can neither panic nor make this
//! allocate unboundedly.

mod directory;
mod names;
mod rock_ridge;
mod volume;

use std::io::{Read, Seek};

use directory::FileRecord;
use volume::Volume;

/// Default [`IsoLimits::max_image_bytes`]: 10 MiB, the bound ds-identify uses for OVF media.
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;

/// Default [`IsoLimits::max_file_bytes`]: 1 MiB, far above any real OVF environment.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Size bounds applied while reading an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsoLimits {
    /// Refuse images (or devices) larger than this many bytes.
    pub max_image_bytes: u64,
    /// Refuse an `ovf-env.xml` larger than this many bytes.
    pub max_file_bytes: u64,
}

impl Default for IsoLimits {
    fn default() -> Self {
        Self {
            max_image_bytes: DEFAULT_MAX_IMAGE_BYTES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        }
    }
}

/// The OVF environment found on an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IsoOvfEnv {
    /// The volume label (primary volume descriptor, trailing blanks removed).
    pub label: String,
    /// The file name as recorded on the medium, e.g. `ovf-env.xml` or `OVF_ENV.XML;1`.
    pub file_name: String,
    /// The file content, unmodified.
    pub bytes: Vec<u8>,
}

/// Why an image could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IsoError {
    /// The reader failed (or ended early) at this byte offset.
    #[error("cannot read the image at byte {offset}: {source}")]
    Io {
        /// Byte offset of the failed read.
        offset: u64,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The image is larger than [`IsoLimits::max_image_bytes`].
    #[error(
        "image is {size} bytes, over the limit of {limit} bytes: an ovf transport image is small, \
         raise the limit if this medium is expected"
    )]
    ImageTooLarge {
        /// Size of the image.
        size: u64,
        /// The limit applied.
        limit: u64,
    },
    /// No ISO9660 primary volume descriptor.
    #[error("not an iso9660 image: {0}")]
    NotIso(String),
    /// The descriptors or the root directory are inconsistent.
    #[error("malformed iso9660 image: {0}")]
    Malformed(String),
    /// The environment file is larger than [`IsoLimits::max_file_bytes`].
    #[error("{} is {size} bytes, over the limit of {limit} bytes for an ovf environment file", vmcust_imc::shown::name(.name))]
    FileTooLarge {
        /// File name as recorded.
        name: String,
        /// Size recorded in the directory.
        size: u64,
        /// The limit applied.
        limit: u64,
    },
}

impl IsoError {
    /// Whether the medium could not be read at all (an I/O error: exit 74, `EX_IOERR`), as
    /// opposed to read but found invalid (malformed, not ISO9660, too large: exit 65,
    /// `EX_DATAERR`).
    pub fn is_unreadable(&self) -> bool {
        matches!(self, IsoError::Io { .. })
    }
}

/// Most components in a path given to [`IsoImage::read_file`]: seed drives nest three
/// deep (`openstack/latest/meta_data.json`); this bounds the directories read per file.
pub const MAX_PATH_COMPONENTS: usize = 8;

/// An opened image: its descriptors checked, ready to read files by path.
#[derive(Debug)]
pub struct IsoImage {
    volume: Volume,
    limits: IsoLimits,
}

impl IsoImage {
    /// Opens the image `r` reads (checking its size against `limits` and its descriptors).
    pub fn open<R: Read + Seek>(r: &mut R, limits: &IsoLimits) -> Result<Self, IsoError> {
        Ok(Self {
            volume: Volume::open(r, limits)?,
            limits: *limits,
        })
    }

    /// The volume label (primary volume descriptor, trailing blanks removed).
    pub fn label(&self) -> &str {
        &self.volume.label
    }

    /// Reads the regular file at `path` (`/`-separated, relative to the root directory).
    /// Each component matches a Rock Ridge or Joliet name exactly, else any name
    /// case-insensitively once a `;1` version and a trailing `.` are removed; the primary
    /// tree (Rock Ridge) is searched first, then the Joliet tree. `Ok(None)` when there is
    /// no such file. Bounded by [`MAX_PATH_COMPONENTS`], the directory size limit and
    /// [`IsoLimits::max_file_bytes`].
    pub fn read_file<R: Read + Seek>(
        &self,
        r: &mut R,
        path: &str,
    ) -> Result<Option<Vec<u8>>, IsoError> {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        if parts.is_empty() || parts.len() > MAX_PATH_COMPONENTS {
            return Err(IsoError::Malformed(format!(
                "path {path:?} must have 1 to {MAX_PATH_COMPONENTS} components"
            )));
        }
        for root in self.volume.roots() {
            if let Some(file) = self.find(r, root, &parts)? {
                return self.read_record(r, file).map(Some);
            }
        }
        Ok(None)
    }

    fn find<R: Read + Seek>(
        &self,
        r: &mut R,
        root: volume::Root,
        parts: &[&str],
    ) -> Result<Option<FileRecord>, IsoError> {
        let mut dir = root.extent;
        let mut susp = None;
        for (i, part) in parts.iter().enumerate() {
            let (records, skip) = directory::entries(r, &self.volume, root, dir, susp)?;
            susp = Some(skip);
            let last = i + 1 == parts.len();
            // The last component is a regular file, the others directories.
            let mut candidates: Vec<FileRecord> =
                records.into_iter().filter(|f| f.is_dir != last).collect();
            let pos = match candidates.iter().position(|f| f.name == *part) {
                Some(p) => p,
                None => match candidates
                    .iter()
                    .position(|f| names::same_loosely(&f.name, part))
                {
                    Some(p) => p,
                    None => return Ok(None),
                },
            };
            let file = candidates.swap_remove(pos);
            if last {
                return Ok(Some(file));
            }
            dir = file.extent;
        }
        Ok(None)
    }

    fn read_record<R: Read + Seek>(
        &self,
        r: &mut R,
        file: FileRecord,
    ) -> Result<Vec<u8>, IsoError> {
        let size = u64::from(file.extent.len);
        if file.multi_extent {
            return Err(IsoError::Malformed(format!(
                "{} is stored in several extents, which no seed file needs",
                vmcust_imc::shown::name(&file.name)
            )));
        }
        if size > self.limits.max_file_bytes {
            return Err(IsoError::FileTooLarge {
                name: file.name,
                size,
                limit: self.limits.max_file_bytes,
            });
        }
        read_named(&self.volume, r, &file)
    }
}

/// Reads a file's extent whole; an extent that does not lie inside the image (a truncated
/// image, a size or place the directory record lies about) is an error naming the file.
fn read_named<R: Read + Seek>(
    volume: &Volume,
    r: &mut R,
    file: &FileRecord,
) -> Result<Vec<u8>, IsoError> {
    volume.read_extent(r, file.extent).map_err(|e| match e {
        IsoError::Malformed(why) => IsoError::Malformed(format!(
            "{}: {why} (a truncated image, or a directory record that lies)",
            vmcust_imc::shown::name(&file.name)
        )),
        other => other,
    })
}

/// Reads the volume label of an ISO9660 image (what blkid reports as `LABEL`).
pub fn volume_label<R: Read + Seek>(r: &mut R, limits: &IsoLimits) -> Result<String, IsoError> {
    Ok(Volume::open(r, limits)?.label)
}

/// Finds and reads the OVF environment file in the root directory of an ISO9660 image.
///
/// Names are matched case-insensitively after removing a `;1` version and a trailing `.`,
/// looking at Rock Ridge, Joliet and plain ISO9660 names: `ovf-env.xml` and `ovf_env.xml`
/// (so `OVF_ENV.XML;1` from a level-1 image matches). If several differently named
/// candidates exist, the first of `ovf-env.xml`, `ovf_env.xml`, `OVF_ENV.XML`, `OVF-ENV.XML`
/// wins, then other spellings. `Ok(None)` means a valid image without such a file.
pub fn read_ovf_env<R: Read + Seek>(
    r: &mut R,
    limits: &IsoLimits,
) -> Result<Option<IsoOvfEnv>, IsoError> {
    let volume = Volume::open(r, limits)?;
    let Some(file) = find_ovf_env(r, &volume)? else {
        return Ok(None);
    };
    let size = u64::from(file.extent.len);
    if file.multi_extent {
        // Writers split only files of 4 GiB and more into several extents.
        return Err(IsoError::Malformed(format!(
            "{} is stored in several extents, which no ovf environment file needs",
            vmcust_imc::shown::name(&file.name)
        )));
    }
    if size > limits.max_file_bytes {
        return Err(IsoError::FileTooLarge {
            name: file.name,
            size,
            limit: limits.max_file_bytes,
        });
    }
    let bytes = read_named(&volume, r, &file)?;
    Ok(Some(IsoOvfEnv {
        label: volume.label,
        file_name: file.name,
        bytes,
    }))
}

/// The name of the OVF environment file in the root directory of an ISO9660 image, as
/// [`read_ovf_env`] would choose it, without reading it: whether an image over
/// [`IsoLimits::max_image_bytes`] is an OVF transport medium nonetheless (then its size is
/// an error, not a sign that the medium is someone else's). Only the image size limit of
/// `limits` applies.
pub fn ovf_env_name<R: Read + Seek>(
    r: &mut R,
    limits: &IsoLimits,
) -> Result<Option<String>, IsoError> {
    let volume = Volume::open(r, limits)?;
    Ok(find_ovf_env(r, &volume)?.map(|f| f.name))
}

/// The best-named OVF environment file in the image's root directories.
fn find_ovf_env<R: Read + Seek>(
    r: &mut R,
    volume: &Volume,
) -> Result<Option<FileRecord>, IsoError> {
    let mut best: Option<(usize, FileRecord)> = None;
    for root in volume.roots() {
        for file in directory::root_files(r, volume, root)? {
            let Some(rank) = names::rank(&file.name) else {
                continue;
            };
            // Strictly better only, so the first tree searched keeps ties.
            if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                best = Some((rank, file));
            }
        }
    }
    Ok(best.map(|(_, f)| f))
}
