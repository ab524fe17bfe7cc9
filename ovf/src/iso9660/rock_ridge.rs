//! Rock Ridge alternate names: SUSP (`SP`, `CE`, `ST`) and RRIP `NM` entries (IEEE P1282).

use std::io::{Read, Seek};

use super::volume::{u32_le, Volume};
use super::IsoError;

/// Continuation areas to follow per record; real writers need one at most.
const MAX_CONTINUATIONS: usize = 8;
const NM_CURRENT: u8 = 0x02;
const NM_PARENT: u8 = 0x04;

/// The `LEN_SKP` of an `SP` entry opening the system use area of the root's "." record, or
/// `None` if Rock Ridge (SUSP) is not in use on this volume.
pub(super) fn sp_skip(system_use: &[u8]) -> Option<usize> {
    match system_use {
        [b'S', b'P', len, _, 0xBE, 0xEF, skip, ..] if *len >= 7 => Some(usize::from(*skip)),
        _ => None,
    }
}

/// The name carried by the `NM` entries of a record's system use area (following `CE`
/// continuation areas), or `None` if it has none.
pub(super) fn nm_name<R: Read + Seek>(
    r: &mut R,
    volume: &Volume,
    system_use: &[u8],
    skip: usize,
) -> Result<Option<String>, IsoError> {
    let mut name: Option<Vec<u8>> = None;
    let mut area = system_use.get(skip..).unwrap_or(&[]).to_vec();
    for _ in 0..=MAX_CONTINUATIONS {
        let mut continuation = None;
        let mut pos = 0;
        while pos + 4 <= area.len() {
            let len = usize::from(area[pos + 2]);
            if len < 4 || pos + len > area.len() {
                break;
            }
            let entry = &area[pos..pos + len];
            match &entry[..2] {
                // Flags 0 or CONTINUE (0x01): name bytes; CURRENT/PARENT stand for "." and "..".
                b"NM" if len >= 5 && entry[4] & (NM_CURRENT | NM_PARENT) == 0 => {
                    name.get_or_insert_with(Vec::new)
                        .extend_from_slice(&entry[5..]);
                }
                b"CE" if len >= 28 => {
                    continuation = Some((u32_le(entry, 4), u32_le(entry, 12), u32_le(entry, 20)));
                }
                b"ST" => break,
                _ => {}
            }
            pos += len;
        }
        let Some((block, offset, len)) = continuation else {
            break;
        };
        // A continuation area lies within one logical block.
        if u64::from(offset) + u64::from(len) > volume.block_size {
            return Err(IsoError::Malformed(format!(
                "rock ridge continuation area at block {block} (offset {offset}, {len} bytes) \
                 overruns its block"
            )));
        }
        area = volume.read_at_block(r, block, u64::from(offset), u64::from(len))?;
    }
    Ok(name.map(|n| String::from_utf8_lossy(&n).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::sp_skip;

    #[test]
    fn sp_entry_is_recognised() {
        assert_eq!(sp_skip(b"SP\x07\x01\xbe\xef\x00PX"), Some(0));
        assert_eq!(sp_skip(b"SP\x07\x01\xbe\xef\x05"), Some(5));
        assert_eq!(sp_skip(b"SP\x07\x01\xbe\xee\x00"), None);
        assert_eq!(sp_skip(b"PX"), None);
    }
}
