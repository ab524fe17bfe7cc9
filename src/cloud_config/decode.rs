//! The two encodings user-data uses, each bounded: gzip (the whole user-data, a MIME part
//! or a `write_files` entry) and base64 (`write_files` `b64`, `gz+b64`).

use std::io::Read as _;

use base64::Engine as _;

/// The gzip magic bytes, as cloud-init's `decomp_gzip` recognises a compressed payload.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `data` starts like a gzip stream.
pub fn is_gzip(data: &[u8]) -> bool {
    data.starts_with(&GZIP_MAGIC)
}

/// Why a gzip stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GzipError {
    /// Corrupt or truncated.
    #[error("not a valid gzip stream (corrupt or truncated); compress it again with `gzip -c`")]
    Corrupt,
    /// It inflates past the bound: refused, not truncated.
    #[error("it decompresses to more than {limit} bytes")]
    TooLarge {
        /// The bound, in bytes.
        limit: usize,
    },
}

/// Decompresses `data`, refusing output over `limit` bytes (never inflating more than
/// `limit + 1`, so a gzip bomb costs nothing).
pub fn gunzip(data: &[u8], limit: usize) -> Result<Vec<u8>, GzipError> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(data)
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|_| GzipError::Corrupt)?;
    if out.len() > limit {
        return Err(GzipError::TooLarge { limit });
    }
    Ok(out)
}

/// Base64 as Python's `b64decode` reads a YAML block of it: whitespace and line breaks
/// ignored, padding required.
pub fn base64(text: &str) -> Result<Vec<u8>, String> {
    let compact: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(&compact)
        .map_err(|e| match e {
            base64::DecodeError::InvalidByte(at, _) => {
                format!("not valid base64 (a character outside the alphabet at offset {at})")
            }
            base64::DecodeError::InvalidLength(_) | base64::DecodeError::InvalidPadding => {
                "not valid base64 (truncated or wrongly padded); encode it again with `base64 -w0`"
                    .into()
            }
            base64::DecodeError::InvalidLastSymbol { offset: at, .. } => {
                format!("not valid base64 (a bad last character at offset {at})")
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    pub(crate) fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_round_trips_and_refuses_bombs_and_garbage() {
        assert_eq!(gunzip(&gz(b"hello"), 5).unwrap(), b"hello");
        assert_eq!(
            gunzip(&gz(b"hello!"), 5),
            Err(GzipError::TooLarge { limit: 5 })
        );
        let bomb = gz(&vec![0u8; 10 * 1024 * 1024]);
        assert!(bomb.len() < 20_000);
        assert_eq!(
            gunzip(&bomb, 1024),
            Err(GzipError::TooLarge { limit: 1024 })
        );
        let mut cut = gz(b"hello world, hello world");
        cut.truncate(cut.len() - 6);
        assert_eq!(gunzip(&cut, 100), Err(GzipError::Corrupt));
        assert!(is_gzip(&gz(b"")));
        assert!(!is_gzip(b"#cloud-config"));
    }

    #[test]
    fn base64_ignores_line_breaks_and_refuses_the_rest() {
        assert_eq!(base64("aGVs\n bG8=\n").unwrap(), b"hello");
        for bad in ["aGVsbG8", "aGV*bG8=", "a"] {
            assert!(base64(bad).is_err(), "{bad}");
        }
    }
}
