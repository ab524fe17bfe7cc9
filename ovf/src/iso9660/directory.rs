//! Directory records (ECMA-119 section 9.1) of a directory, with their best names.

use std::io::{Read, Seek};

use super::rock_ridge;
use super::volume::{u32_le, Extent, Root, Volume};
use super::IsoError;

/// A root directory larger than this is refused: it would hold tens of thousands of files,
/// which no OVF transport medium does, and it is read into memory whole.
pub(super) const MAX_DIRECTORY_BYTES: u32 = 1024 * 1024;

/// Minimum length of a directory record (33 fixed bytes and a 1-byte name).
const MIN_RECORD: usize = 34;
const FLAG_DIRECTORY: u8 = 0x02;
const FLAG_MULTI_EXTENT: u8 = 0x80;

/// A regular file (or, from [`entries`], a subdirectory) of a directory.
#[derive(Debug)]
pub(super) struct FileRecord {
    /// Rock Ridge `NM` name if present, else the Joliet or ISO9660 name (with `;1`).
    pub name: String,
    pub extent: Extent,
    /// The file continues in further records (only needed for files of 4 GiB and more).
    pub multi_extent: bool,
    /// A directory rather than a regular file.
    pub is_dir: bool,
}

/// Lists the regular files of `root`.
pub(super) fn root_files<R: Read + Seek>(
    r: &mut R,
    volume: &Volume,
    root: Root,
) -> Result<Vec<FileRecord>, IsoError> {
    let (mut files, _) = entries(r, volume, root, root.extent, None)?;
    files.retain(|f| !f.is_dir);
    Ok(files)
}

/// Lists the files and subdirectories (not `.` and `..`) of the directory at `dir` in the
/// tree of `root`. `susp` is `None` for the root directory itself, where Rock Ridge is
/// detected; for a subdirectory it is what the root's listing returned (the second
/// value), since only the root's first record says whether Rock Ridge is in use.
pub(super) fn entries<R: Read + Seek>(
    r: &mut R,
    volume: &Volume,
    root: Root,
    dir: Extent,
    susp: Option<Option<usize>>,
) -> Result<(Vec<FileRecord>, Option<usize>), IsoError> {
    if dir.len > MAX_DIRECTORY_BYTES {
        return Err(IsoError::Malformed(format!(
            "directory at block {} is {} bytes, over the limit of {MAX_DIRECTORY_BYTES} bytes",
            dir.block, dir.len
        )));
    }
    let data = volume.read_extent(r, dir)?;
    // The block size was validated as 512..=2048, so it fits and is never zero.
    let block = volume.block_size as usize;
    let mut files = Vec::new();
    // Rock Ridge is in use only if the first record ("." of the root) carries SUSP's `SP`.
    let is_root = susp.is_none();
    let mut susp_skip = susp.flatten();
    let mut first = true;
    let mut pos = 0;
    while pos < data.len() {
        let len = usize::from(data[pos]);
        let sector_end = ((pos / block + 1) * block).min(data.len());
        if len == 0 {
            // Records never cross a sector; the rest of this one is padding.
            pos = sector_end;
            continue;
        }
        if len < MIN_RECORD || pos + len > sector_end {
            return Err(IsoError::Malformed(format!(
                "directory record at byte {pos} of the root directory has length {len}, \
                 which does not fit its sector"
            )));
        }
        let record = &data[pos..pos + len];
        pos += len;
        let name_len = usize::from(record[32]);
        if 33 + name_len > len {
            return Err(IsoError::Malformed(format!(
                "directory record name of {name_len} bytes overruns its {len}-byte record"
            )));
        }
        let raw_name = &record[33..33 + name_len];
        // A padding byte follows names of even length, then the system use area.
        let system_use = record
            .get(33 + name_len + (1 - name_len % 2)..)
            .unwrap_or(&[]);
        if first {
            first = false;
            if !root.joliet && is_root {
                susp_skip = rock_ridge::sp_skip(system_use);
            }
            continue;
        }
        let flags = record[25];
        if raw_name == [0] || raw_name == [1] {
            continue;
        }
        let rr_name = match susp_skip {
            Some(skip) => rock_ridge::nm_name(r, volume, system_use, skip)?,
            None => None,
        };
        let name = match rr_name {
            Some(name) => name,
            None if root.joliet => ucs2_be(raw_name),
            None => String::from_utf8_lossy(raw_name).into_owned(),
        };
        files.push(FileRecord {
            name,
            extent: Extent {
                block: u32_le(record, 2),
                len: u32_le(record, 10),
            },
            multi_extent: flags & FLAG_MULTI_EXTENT != 0,
            is_dir: flags & FLAG_DIRECTORY != 0,
        });
    }
    Ok((files, susp_skip))
}

/// Decodes a Joliet name (UCS-2 big-endian; decoded as UTF-16 so surrogate pairs from newer
/// writers work, anything invalid becomes U+FFFD).
fn ucs2_be(raw: &[u8]) -> String {
    let units = raw
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]));
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::ucs2_be;

    #[test]
    fn joliet_names_decode() {
        assert_eq!(ucs2_be(b"\0o\0v\0f\0-\0e\0n\0v\0.\0x\0m\0l"), "ovf-env.xml");
        assert_eq!(ucs2_be(b"\xd8\x00"), "\u{fffd}");
        assert_eq!(ucs2_be(b"\0a\0"), "a");
    }
}
