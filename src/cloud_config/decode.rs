//! The two encodings user-data uses, each bounded: gzip (the whole user-data, a MIME part
//! or a `write_files` entry) and base64 (`write_files` `b64`, `gz+b64`).

use std::io::Read as _;

/// The gzip magic bytes, as cloud-init's `decomp_gzip` recognises a compressed payload.
pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `data` starts like a gzip stream.
pub(crate) fn is_gzip(data: &[u8]) -> bool {
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
pub(crate) fn gunzip(data: &[u8], limit: usize) -> Result<Vec<u8>, GzipError> {
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

/// Base64 as cloud-init decodes it: Python's `base64.b64decode` without `validate`
/// (`write_files` `b64`) and PyYAML's `!!binary` (`base64.decodebytes`) both use
/// `binascii.a2b_base64` in its lenient mode, which discards every character outside the
/// alphabet (line breaks, spaces, a stray `*`), stops at the padding that ends a quantum
/// (what follows is ignored), and fails only on a non-ASCII character, a lone last
/// character, or a missing pad. The same input gives the same bytes here.
pub(crate) fn base64(text: &str) -> Result<Vec<u8>, String> {
    if let Some(at) = text.find(|c: char| !c.is_ascii()) {
        return Err(format!(
            "not valid base64 (a non-ASCII character at offset {at}); encode it again with `base64 -w0`"
        ));
    }
    base64_bytes(text.as_bytes())
}

/// [`base64`] of bytes (`!!binary` content with `encoding: b64`, which Python's
/// `b64decode` takes as they are: any byte outside the alphabet is discarded).
pub(crate) fn base64_bytes(text: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    // Position in the current quantum of four characters, the bits carried over, and the
    // pads seen since its last character.
    let (mut quad, mut carry, mut pads) = (0u8, 0u8, 0u8);
    for &b in text {
        if b == b'=' {
            if quad >= 2 {
                pads += 1;
                if quad + pads >= 4 {
                    return Ok(out);
                }
            }
            continue;
        }
        let Some(v) = sextet(b) else { continue };
        pads = 0;
        match quad {
            0 => carry = v,
            1 => {
                out.push((carry << 2) | (v >> 4));
                carry = v & 0x0f;
            }
            2 => {
                out.push((carry << 4) | (v >> 2));
                carry = v & 0x03;
            }
            _ => out.push((carry << 6) | v),
        }
        quad = (quad + 1) % 4;
    }
    match quad {
        0 => Ok(out),
        1 => Err("not valid base64 (one character too many: the data is cut or has a stray letter); encode it again with `base64 -w0`".into()),
        _ => Err("not valid base64 (incorrect padding: truncated, or the final = is missing); encode it again with `base64 -w0`".into()),
    }
}

/// The value of one character of the standard base64 alphabet.
fn sextet(b: u8) -> Option<u8> {
    match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
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
        for bad in ["aGVsbG8", "aGV*bG8=", "a", "aGVsbG8h\u{e9}", "aGVsbG8hY"] {
            assert!(base64(bad).is_err(), "{bad}");
        }
    }

    /// What Python's `base64.b64decode(s)` (no `validate`) gives for each, checked with
    /// CPython 3.11: characters outside the alphabet are dropped, the pad ends the data.
    #[test]
    fn base64_discards_stray_characters_as_python_does() {
        let table: &[(&str, &[u8])] = &[
            ("aGVs*bG8=", b"hello"),
            ("aGVs-bG8_=", b"hello"),
            ("!aGVsbG8=", b"hello"),
            ("aGVsbG8=garbage", b"hello"),
            ("aGVsbG8=\n=", b"hello"),
            ("aG=VsbG8=", b"hello"),
            ("aGVsbA==", b"hell"),
            ("aGVsbA=x=", b"hell\x0c"),
            ("", b""),
            ("***", b""),
            ("SGVsbG8sIHdvcmxkIQ==\n", b"Hello, world!"),
        ];
        for (text, want) in table {
            assert_eq!(base64(text).as_deref(), Ok(*want), "{text:?}");
        }
    }
}
