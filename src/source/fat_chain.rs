//! A vfat seed file's cluster chain checked against the size its directory entry declares:
//! `fatfs` follows a chain as the image says, so a chain cut short reads as a shorter file,
//! one that loops or points past the medium as other bytes. Here the chain is walked from
//! the medium's own FAT (the one `fatfs` reads) and must hold exactly the clusters the size
//! needs, each once, each on the medium, and end there.

use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Which FAT: the width of its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    Fat12,
    Fat16,
    Fat32,
}

/// What a FAT entry says comes after a cluster.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    Cluster(u32),
    End,
    Free,
    Bad,
}

/// Where a vfat medium keeps its FAT and its clusters, from its boot sector, computed as
/// `fatfs` computes them.
#[derive(Debug, Clone)]
pub(crate) struct Geometry {
    width: Width,
    /// Byte offset of the FAT `fatfs` reads (the first, or the active one of a FAT32
    /// medium without mirroring).
    fat_at: u64,
    fat_bytes: u64,
    /// Byte offset of cluster 2.
    data_at: u64,
    cluster_bytes: u64,
    /// Clusters 2..clusters+2 exist.
    clusters: u32,
}

fn u16_at(s: &[u8], at: usize) -> u32 {
    u32::from(u16::from_le_bytes([s[at], s[at + 1]]))
}

fn u32_at(s: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]])
}

impl Geometry {
    /// The geometry of the boot sector `s` (at least 512 bytes), `None` when its numbers
    /// do not make a file system (fatfs refuses those too).
    pub(crate) fn from_boot_sector(s: &[u8]) -> Option<Geometry> {
        if s.len() < 512 {
            return None;
        }
        let sector = u64::from(u16_at(s, 11));
        let per_cluster = u64::from(s[13]);
        let reserved = u64::from(u16_at(s, 14));
        let fats = u64::from(s[16]);
        let root_entries = u64::from(u16_at(s, 17));
        let total = match u16_at(s, 19) {
            0 => u64::from(u32_at(s, 32)),
            n => u64::from(n),
        };
        let fat32 = u16_at(s, 22) == 0;
        let fat_sectors = if fat32 {
            u64::from(u32_at(s, 36))
        } else {
            u64::from(u16_at(s, 22))
        };
        if sector == 0 || per_cluster == 0 || fats == 0 {
            return None;
        }
        let root_sectors = (root_entries * 32).div_ceil(sector);
        let data_sector = reserved + fats * fat_sectors + root_sectors;
        let clusters = u32::try_from(total.checked_sub(data_sector)? / per_cluster).ok()?;
        let width = if clusters < 4085 {
            Width::Fat12
        } else if clusters < 65525 {
            Width::Fat16
        } else {
            Width::Fat32
        };
        // A FAT32 medium may say that only one of its FATs is in use (bit 7 of the
        // extended flags; the active one in bits 0-3).
        let flags = if fat32 { u16_at(s, 40) } else { 0 };
        let active = if flags & 0x80 != 0 {
            u64::from(flags & 0x0f)
        } else {
            0
        };
        Some(Geometry {
            width,
            fat_at: (reserved + active * fat_sectors) * sector,
            fat_bytes: fat_sectors * sector,
            data_at: data_sector * sector,
            cluster_bytes: per_cluster * sector,
            clusters,
        })
    }

    /// Byte offset of cluster 2, where file data starts.
    pub(crate) fn data_at(&self) -> u64 {
        self.data_at
    }

    /// The cluster whose data holds the byte at `offset` (at or past [`Self::data_at`]).
    pub(crate) fn cluster_at(&self, offset: u64) -> u32 {
        let n = (offset - self.data_at) / self.cluster_bytes + 2;
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Checks that the chain starting at `first` on `medium` (of `medium_bytes`) holds a
    /// file of `size` bytes exactly; the error says how it does not.
    pub(crate) fn check_chain(
        &self,
        medium: &File,
        medium_bytes: u64,
        first: u32,
        size: u64,
    ) -> Result<(), String> {
        let needed = size.div_ceil(self.cluster_bytes);
        let mut fat = FatReader {
            medium,
            geometry: self,
            block: Vec::new(),
            block_at: 0,
        };
        let mut seen = HashSet::new();
        let mut cluster = first;
        for n in 1..=needed {
            if !(2..self.clusters.saturating_add(2)).contains(&cluster) {
                return Err(format!(
                    "cluster {n} of its chain is number {cluster}, which the medium does not \
                     have (it has clusters 2 to {})",
                    self.clusters.saturating_add(1)
                ));
            }
            let end = self.data_at + (u64::from(cluster) - 1) * self.cluster_bytes;
            if end > medium_bytes {
                return Err(format!(
                    "its cluster {cluster} lies past the end of the medium at byte \
                     {medium_bytes} (a truncated image?)"
                ));
            }
            if !seen.insert(cluster) {
                return Err(format!(
                    "its cluster chain loops: cluster {n} is cluster {cluster} again"
                ));
            }
            let next = fat.next(cluster)?;
            let read = n * self.cluster_bytes;
            match (n == needed, next) {
                (false, Next::Cluster(c)) => cluster = c,
                (true, Next::End) => {}
                (false, Next::End | Next::Free | Next::Bad) => {
                    return Err(format!(
                        "its cluster chain ends after {n} clusters ({read} bytes), short of \
                         the {size} bytes its directory entry declares"
                    ))
                }
                (true, _) => {
                    return Err(format!(
                        "its cluster chain goes on past the {size} bytes its directory \
                         entry declares"
                    ))
                }
            }
        }
        Ok(())
    }
}

/// Reads FAT entries through a one-block cache: a chain is mostly consecutive entries.
struct FatReader<'a> {
    medium: &'a File,
    geometry: &'a Geometry,
    block: Vec<u8>,
    block_at: u64,
}

/// The size of the blocks of the FAT read at once.
const FAT_BLOCK: u64 = 4096;

impl FatReader<'_> {
    /// The byte at `offset` into the FAT.
    fn byte(&mut self, offset: u64) -> Result<u8, String> {
        if offset >= self.geometry.fat_bytes {
            return Err(format!(
                "its cluster chain leads past the end of the FAT ({} bytes)",
                self.geometry.fat_bytes
            ));
        }
        let held = self.block_at..self.block_at + self.block.len() as u64;
        if !held.contains(&offset) {
            self.block_at = offset - offset % FAT_BLOCK;
            let len = FAT_BLOCK.min(self.geometry.fat_bytes - self.block_at);
            self.block = vec![0; len as usize];
            self.medium
                .read_exact_at(&mut self.block, self.geometry.fat_at + self.block_at)
                .map_err(|e| format!("cannot read the FAT: {e} (a truncated image?)"))?;
        }
        Ok(self.block[(offset - self.block_at) as usize])
    }

    /// What the FAT says follows `cluster`.
    fn next(&mut self, cluster: u32) -> Result<Next, String> {
        let c = u64::from(cluster);
        let (value, end, bad) = match self.geometry.width {
            Width::Fat12 => {
                let at = c + c / 2;
                let pair = u32::from(self.byte(at)?) | u32::from(self.byte(at + 1)?) << 8;
                let v = if cluster.is_multiple_of(2) {
                    pair & 0xfff
                } else {
                    pair >> 4
                };
                (v, 0xff8, 0xff7)
            }
            Width::Fat16 => {
                let at = c * 2;
                let v = u32::from(self.byte(at)?) | u32::from(self.byte(at + 1)?) << 8;
                (v, 0xfff8, 0xfff7)
            }
            Width::Fat32 => {
                let at = c * 4;
                let mut v = 0;
                for i in 0..4 {
                    v |= u32::from(self.byte(at + i)?) << (8 * i);
                }
                (v & 0x0fff_ffff, 0x0fff_fff8, 0x0fff_fff7)
            }
        };
        Ok(match value {
            0 => Next::Free,
            v if v >= end => Next::End,
            v if v == bad => Next::Bad,
            v => Next::Cluster(v),
        })
    }
}
