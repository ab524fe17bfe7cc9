//! Guestinfo value normalization and the `<key>.encoding` decoders (plain, base64,
//! gzip+base64), as cloud-init's VMware datasource reads them, but strict: an unknown
//! encoding, bad base64, bad gzip or non-UTF-8 text is an error naming the key.

use std::io::Read;

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

/// Largest decoded value accepted (a gzip bomb stops here, after reading this much).
pub(crate) const MAX_DECODED_LEN: usize = 16 * 1024 * 1024;
/// Largest raw (still encoded) value accepted, checked before anything else is done with it.
pub(crate) const MAX_RAW_LEN: usize = 16 * 1024 * 1024;

/// Standard alphabet; padding optional and stray trailing bits ignored (as Python's decoder).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// How a guestinfo value is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Plain text (no or empty `.encoding`).
    Plain,
    /// `base64` or `b64`.
    Base64,
    /// `gzip+base64` or `gz+b64`.
    GzipBase64,
}

/// Why a value could not be read. Messages name the key, never the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The `.encoding` names no known encoding.
    #[error("{key}: unknown encoding {encoding:?}; use base64, b64, gzip+base64 or gz+b64, or leave it empty for plain text")]
    UnknownEncoding {
        /// The key whose value it is.
        key: String,
        /// The encoding given (shortened).
        encoding: String,
    },
    /// The value is not valid base64.
    #[error("{key}: not valid base64 ({detail}); use the standard alphabet (A-Z a-z 0-9 + /)")]
    Base64 {
        /// The key.
        key: String,
        /// Where it went wrong (an offset, not the data).
        detail: String,
    },
    /// The base64-decoded bytes are not valid gzip.
    #[error("{key}: the base64-decoded value is not valid gzip data")]
    Gzip {
        /// The key.
        key: String,
    },
    /// The decoded value is larger than [`MAX_DECODED_LEN`].
    #[error("{key}: the decoded value is larger than {MAX_DECODED_LEN} bytes")]
    TooLarge {
        /// The key.
        key: String,
    },
    /// The raw value is larger than [`MAX_RAW_LEN`].
    #[error("{key}: the value is {size} bytes, more than {MAX_RAW_LEN}; guestinfo values are small, check what was set")]
    RawTooLarge {
        /// The key.
        key: String,
        /// Its size.
        size: usize,
    },
    /// The value is not UTF-8 text.
    #[error("{key}: the value is not utf-8 text")]
    NotUtf8 {
        /// The key.
        key: String,
    },
}

impl Encoding {
    /// Parses the value of a `.encoding` key (already normalized: `None` = absent or empty).
    /// Names are case-sensitive, as in cloud-init.
    pub fn parse(key: &str, encoding: Option<&str>) -> Result<Self, DecodeError> {
        match encoding.map(str::trim) {
            None | Some("") => Ok(Encoding::Plain),
            Some("base64" | "b64") => Ok(Encoding::Base64),
            Some("gzip+base64" | "gz+b64") => Ok(Encoding::GzipBase64),
            Some(other) => Err(DecodeError::UnknownEncoding {
                key: key.to_string(),
                encoding: if crate::model::looks_like_private_key(other) {
                    "(not shown: it looks like private key material)".into()
                } else {
                    other.chars().take(40).collect()
                },
            }),
        }
    }
}

/// Normalizes a raw guestinfo value: UTF-8 text with trailing whitespace removed; empty or
/// exactly `---` (cloud-init's redaction marker) means absent.
pub fn normalize(key: &str, raw: &[u8]) -> Result<Option<String>, DecodeError> {
    if raw.len() > MAX_RAW_LEN {
        return Err(DecodeError::RawTooLarge {
            key: key.to_string(),
            size: raw.len(),
        });
    }
    let text = std::str::from_utf8(raw).map_err(|_| DecodeError::NotUtf8 {
        key: key.to_string(),
    })?;
    let text = text.trim_end();
    Ok((!text.is_empty() && text != "---").then(|| text.to_string()))
}

/// Decodes a normalized value by its encoding into UTF-8 text bytes.
pub fn decode(key: &str, encoding: Encoding, value: &str) -> Result<Vec<u8>, DecodeError> {
    if value.len() > MAX_RAW_LEN {
        return Err(DecodeError::RawTooLarge {
            key: key.to_string(),
            size: value.len(),
        });
    }
    let bytes = match encoding {
        Encoding::Plain => return Ok(value.as_bytes().to_vec()),
        Encoding::Base64 => base64(key, value)?,
        Encoding::GzipBase64 => gunzip(key, &base64(key, value)?)?,
    };
    if std::str::from_utf8(&bytes).is_err() {
        return Err(DecodeError::NotUtf8 {
            key: key.to_string(),
        });
    }
    Ok(bytes)
}

/// Base64 with whitespace (line breaks from `base64 -w76`) ignored.
fn base64(key: &str, value: &str) -> Result<Vec<u8>, DecodeError> {
    let compact: Vec<u8> = value.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    BASE64.decode(&compact).map_err(|e| DecodeError::Base64 {
        key: key.to_string(),
        detail: match e {
            base64::DecodeError::InvalidByte(offset, _) => {
                format!("invalid character at offset {offset}")
            }
            base64::DecodeError::InvalidLength(_) => "truncated input".to_string(),
            base64::DecodeError::InvalidLastSymbol { offset, .. } => {
                format!("invalid last character at offset {offset}")
            }
            base64::DecodeError::InvalidPadding => "invalid padding".to_string(),
        },
    })
}

fn gunzip(key: &str, data: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .take(MAX_DECODED_LEN as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|_| DecodeError::Gzip {
            key: key.to_string(),
        })?;
    if out.len() > MAX_DECODED_LEN {
        return Err(DecodeError::TooLarge {
            key: key.to_string(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz_b64(text: &str) -> String {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text.as_bytes()).unwrap();
        base64::engine::general_purpose::STANDARD.encode(e.finish().unwrap())
    }

    #[test]
    fn encodings_table() {
        let b64 = "aGVsbG8gd29ybGQ="; // "hello world"
        let gz = gz_b64("hello world");
        let cases: Vec<(Option<&str>, String, Result<&str, &str>)> = vec![
            (None, "hello world".into(), Ok("hello world")),
            (Some(""), "hello world".into(), Ok("hello world")),
            (Some(" "), "hello world".into(), Ok("hello world")),
            (Some("base64"), b64.into(), Ok("hello world")),
            (Some("b64"), b64.into(), Ok("hello world")),
            (Some("b64"), "aGVsbG8gd29ybGQ".into(), Ok("hello world")),
            (
                Some("b64"),
                "aGVsbG8g\nd29ybGQ=\n".into(),
                Ok("hello world"),
            ),
            (Some("gzip+base64"), gz.clone(), Ok("hello world")),
            (Some("gz+b64"), gz.clone(), Ok("hello world")),
            (Some("BASE64"), b64.into(), Err("unknown encoding")),
            (Some("gzip"), gz.clone(), Err("unknown encoding")),
            (
                Some("base64"),
                "not base64!".into(),
                Err("not valid base64"),
            ),
            (Some("base64"), "aGVsbG8=x".into(), Err("not valid base64")),
            (Some("gz+b64"), b64.into(), Err("not valid gzip")),
            (Some("base64"), "//79".into(), Err("not utf-8")),
        ];
        for (enc, value, want) in cases {
            let got = Encoding::parse("guestinfo.metadata", enc)
                .and_then(|e| decode("guestinfo.metadata", e, &value));
            match (got, want) {
                (Ok(bytes), Ok(text)) => assert_eq!(bytes, text.as_bytes(), "{enc:?}"),
                (Err(e), Err(part)) => {
                    let msg = e.to_string();
                    assert!(msg.contains(part), "{enc:?}: {msg}");
                    assert!(msg.starts_with("guestinfo.metadata: "), "{msg}");
                }
                (got, want) => panic!("{enc:?} {value:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn empty_and_redacted_values_are_absent() {
        assert_eq!(normalize("k", b"").unwrap(), None);
        assert_eq!(normalize("k", b" \n").unwrap(), None);
        assert_eq!(normalize("k", b"---").unwrap(), None);
        assert_eq!(normalize("k", b"---\n").unwrap(), None);
        assert_eq!(normalize("k", b"a: b\n").unwrap().as_deref(), Some("a: b"));
        assert!(normalize("k", b"\xff").is_err());
    }

    #[test]
    fn raw_values_over_the_cap_are_refused_before_decoding() {
        let big = vec![b'A'; MAX_RAW_LEN + 1];
        let err = normalize("guestinfo.metadata", &big).unwrap_err();
        assert!(matches!(err, DecodeError::RawTooLarge { size, .. } if size == MAX_RAW_LEN + 1));
        let text = String::from_utf8(big).unwrap();
        let err = decode("k", Encoding::Base64, &text).unwrap_err();
        assert!(matches!(err, DecodeError::RawTooLarge { .. }));
        assert!(normalize("k", &vec![b'A'; MAX_RAW_LEN]).is_ok());
    }

    #[test]
    fn gzip_bombs_stop_at_the_limit() {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![b'a'; 1024 * 1024];
        for _ in 0..17 {
            e.write_all(&zeros).unwrap();
        }
        let v = base64::engine::general_purpose::STANDARD.encode(e.finish().unwrap());
        let err = decode("k", Encoding::GzipBase64, &v).unwrap_err();
        assert!(matches!(err, DecodeError::TooLarge { .. }));
    }
}
