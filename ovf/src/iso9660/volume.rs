//! Volume descriptors (ECMA-119 section 8): find the primary and Joliet descriptors, and read
//! extents with every access checked against the image end.

use std::io::{Read, Seek, SeekFrom};

use super::{IsoError, IsoLimits};

/// Volume descriptors always live in 2048-byte sectors starting at sector 16.
const SECTOR: u64 = 2048;
const FIRST_DESCRIPTOR: u64 = 16;
/// Real images carry 2 to 4 descriptors; this only stops a walk over garbage.
const MAX_DESCRIPTORS: u64 = 64;
/// Escape sequences that mark a supplementary descriptor as Joliet (UCS-2 levels 1 to 3).
const JOLIET_ESCAPES: [&[u8; 3]; 3] = [b"%/@", b"%/C", b"%/E"];

/// Where a directory (or file) is stored: first logical block and length in bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Extent {
    pub block: u32,
    pub len: u32,
}

/// A root directory to search, and how its names are encoded.
#[derive(Debug, Clone, Copy)]
pub(super) struct Root {
    pub extent: Extent,
    /// Joliet names are UCS-2 big-endian; primary names are ASCII (or Rock Ridge `NM`).
    pub joliet: bool,
}

/// The parts of an image's descriptors this crate uses.
#[derive(Debug)]
pub(super) struct Volume {
    /// Volume identifier from the primary descriptor, trailing blanks removed.
    pub label: String,
    pub block_size: u64,
    /// First byte past the readable volume: the smaller of the image size and the volume
    /// space size, so a lying descriptor cannot send reads past the image.
    end: u64,
    primary: Root,
    joliet: Option<Root>,
}

impl Volume {
    pub fn open<R: Read + Seek>(r: &mut R, limits: &IsoLimits) -> Result<Self, IsoError> {
        let size = r
            .seek(SeekFrom::End(0))
            .map_err(|source| IsoError::Io { offset: 0, source })?;
        if size > limits.max_image_bytes {
            return Err(IsoError::ImageTooLarge {
                size,
                limit: limits.max_image_bytes,
            });
        }
        if size < (FIRST_DESCRIPTOR + 1) * SECTOR {
            return Err(IsoError::NotIso(format!(
                "no CD001 descriptor at sector 16, the image is only {size} bytes"
            )));
        }
        let mut primary = None;
        let mut joliet = None;
        for sector in FIRST_DESCRIPTOR..FIRST_DESCRIPTOR + MAX_DESCRIPTORS {
            if (sector + 1) * SECTOR > size {
                break;
            }
            let d = read_exact_at(r, sector * SECTOR, SECTOR as usize)?;
            if &d[1..6] != b"CD001" {
                if sector == FIRST_DESCRIPTOR {
                    return Err(IsoError::NotIso("no CD001 descriptor at sector 16".into()));
                }
                // A missing terminator; what we found so far is all there is.
                break;
            }
            match d[0] {
                1 if primary.is_none() => primary = Some(d),
                2 if JOLIET_ESCAPES.iter().any(|e| &d[88..91] == *e) => joliet = Some(d),
                255 => break,
                _ => {}
            }
        }
        let Some(pvd) = primary else {
            return Err(IsoError::NotIso("no primary volume descriptor".into()));
        };
        let block_size = u64::from(u16::from_le_bytes([pvd[128], pvd[129]]));
        if !matches!(block_size, 512 | 1024 | 2048) {
            return Err(IsoError::Malformed(format!(
                "logical block size is {block_size}, expected 512, 1024 or 2048"
            )));
        }
        let volume_blocks = u64::from(u32_le(&pvd, 80));
        if volume_blocks * block_size < (FIRST_DESCRIPTOR + 1) * SECTOR {
            return Err(IsoError::Malformed(format!(
                "volume space size of {volume_blocks} blocks does not even cover the volume descriptors"
            )));
        }
        Ok(Self {
            label: String::from_utf8_lossy(&pvd[40..72])
                .trim_end_matches([' ', '\0'])
                .to_owned(),
            block_size,
            end: size.min(volume_blocks * block_size),
            primary: Root {
                extent: root_extent(&pvd),
                joliet: false,
            },
            joliet: joliet.map(|svd| Root {
                extent: root_extent(&svd),
                joliet: true,
            }),
        })
    }

    /// Root directories to search: primary (with Rock Ridge names) first, then Joliet.
    pub fn roots(&self) -> impl Iterator<Item = Root> {
        std::iter::once(self.primary).chain(self.joliet)
    }

    /// Reads `len` bytes starting `offset` bytes into logical block `block`.
    ///
    /// Callers bound `len` (directory, file and continuation limits) before calling.
    pub fn read_at_block<R: Read + Seek>(
        &self,
        r: &mut R,
        block: u32,
        offset: u64,
        len: u64,
    ) -> Result<Vec<u8>, IsoError> {
        let start = u64::from(block) * self.block_size + offset;
        if start.saturating_add(len) > self.end {
            return Err(IsoError::Malformed(format!(
                "extent at block {block} ({len} bytes) lies beyond the end of the volume at byte {}",
                self.end
            )));
        }
        // `len` is at most the image size here, which was bounded by the caller's limits.
        let len = usize::try_from(len).map_err(|_| {
            IsoError::Malformed(format!(
                "extent of {len} bytes is too large for this platform"
            ))
        })?;
        read_exact_at(r, start, len)
    }

    pub fn read_extent<R: Read + Seek>(
        &self,
        r: &mut R,
        extent: Extent,
    ) -> Result<Vec<u8>, IsoError> {
        self.read_at_block(r, extent.block, 0, u64::from(extent.len))
    }
}

/// The root directory record sits at byte 156 of both primary and supplementary descriptors.
fn root_extent(descriptor: &[u8]) -> Extent {
    Extent {
        block: u32_le(descriptor, 158),
        len: u32_le(descriptor, 166),
    }
}

/// Reads a little-endian u32 (ISO9660 stores both-endian numbers; the LE half comes first).
/// Callers pass in-bounds offsets.
pub(super) fn u32_le(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn read_exact_at<R: Read + Seek>(r: &mut R, offset: u64, len: usize) -> Result<Vec<u8>, IsoError> {
    let io = |source| IsoError::Io { offset, source };
    r.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut buf = vec![0; len];
    r.read_exact(&mut buf).map_err(io)?;
    Ok(buf)
}
