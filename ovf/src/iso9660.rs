//! Read `ovf-env.xml` straight out of an ISO9660 image or CD device, without mounting it.
//!
//! Only what an OVF transport medium needs: the primary volume descriptor (label, root
//! directory), the Joliet supplementary descriptor and Rock Ridge `NM` names, and the root
//! directory alone (transports put the file there). Every read is bounded by [`IsoLimits`] and
//! by the image size, so arbitrary bytes can neither panic nor make this allocate unboundedly.

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
    let mut best: Option<(usize, FileRecord)> = None;
    for root in volume.roots() {
        for file in directory::root_files(r, &volume, root)? {
            let Some(rank) = names::rank(&file.name) else {
                continue;
            };
            // Strictly better only, so the first tree searched keeps ties.
            if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                best = Some((rank, file));
            }
        }
    }
    let Some((_, file)) = best else {
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
    let bytes = volume.read_extent(r, file.extent)?;
    Ok(Some(IsoOvfEnv {
        label: volume.label,
        file_name: file.name,
        bytes,
    }))
}
