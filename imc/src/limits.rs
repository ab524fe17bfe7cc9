//! Hard caps on `cust.cfg`, and the one capped reader of vmcust's crates: it stops at a size
//! cap instead of reading an input whole (every crate's "read at most N bytes" goes through
//! [`read_at_most`]). Every cap is listed in `docs/limits.md`.

use std::io::{self, Read};

use thiserror::Error;

/// Largest `cust.cfg` read, in bytes. vCenter writes a few kilobytes even for ten NICs.
pub const MAX_CUST_CFG_BYTES: u64 = 1024 * 1024;
/// Most `[SECTION]` headers in one `cust.cfg` (64 NICs and the dozen other sections fit easily).
pub const MAX_SECTIONS: usize = 1024;
/// Most `key = value` entries in one `cust.cfg`.
pub const MAX_ENTRIES: usize = 16 * 1024;
/// Most NICs listed in `NIC-CONFIG|NICS`. vSphere gives a VM at most 10 network adapters.
pub const MAX_NICS: usize = 64;

/// The caps [`crate::RawSpec::parse_with`] enforces. [`Limits::default`] is the documented set;
/// benchmarks use [`Limits::NONE`] to measure the reader itself on inputs past the caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest input in bytes.
    pub max_bytes: u64,
    /// Most section headers.
    pub max_sections: usize,
    /// Most entries.
    pub max_entries: usize,
}

impl Limits {
    /// No caps at all, for measuring how the reader scales.
    pub const NONE: Limits = Limits {
        max_bytes: u64::MAX,
        max_sections: usize::MAX,
        max_entries: usize::MAX,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: MAX_CUST_CFG_BYTES,
            max_sections: MAX_SECTIONS,
            max_entries: MAX_ENTRIES,
        }
    }
}

/// Why [`read_capped`] gave up.
#[derive(Debug, Error)]
pub enum CappedReadError {
    /// Reading failed. The `io::Error` is the source, so a caller's error chain finds it
    /// (exit 74, unreadable).
    #[error("cannot be read")]
    Io(#[from] io::Error),
    /// The input is larger than the cap; only the cap plus one byte was read.
    #[error("larger than {max} bytes; a {what} is never that big, check that the right file was handed over")]
    TooLarge {
        /// The cap in bytes.
        max: u64,
        /// What was read, e.g. `cust.cfg`.
        what: &'static str,
    },
}

/// What [`read_at_most`] read: the input's first bytes, up to the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// At most the cap's worth of bytes.
    pub bytes: Vec<u8>,
    /// The input went on past the cap (and `bytes` holds only its start).
    pub cut: bool,
}

/// Reads at most `max` bytes of `reader`, and finds out whether more followed by asking for
/// one byte more, never by reading the rest (a device or a file still growing may say it
/// is smaller than it is, and `/dev/zero` never ends). `capacity` sizes the buffer (a
/// file's length within the cap, so a small file is read in one call rather than a
/// doubling series of them; 0 when unknown).
pub fn read_at_most<R: Read>(reader: R, max: u64, capacity: u64) -> io::Result<Capped> {
    // One byte more than the length: the read that finds the end needs no new buffer.
    let hint = capacity.min(max).saturating_add(1);
    let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(usize::MAX));
    reader.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    let cut = bytes.len() as u64 > max;
    if cut {
        bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    }
    Ok(Capped { bytes, cut })
}

/// Reads all of `reader` when it holds at most `max` bytes; more is
/// [`CappedReadError::TooLarge`], found after reading `max + 1` bytes ([`read_at_most`]).
/// `what` names the input in the message.
pub fn read_capped_from<R: Read>(
    reader: R,
    max: u64,
    what: &'static str,
) -> Result<Vec<u8>, CappedReadError> {
    let read = read_at_most(reader, max, 0)?;
    if read.cut {
        return Err(CappedReadError::TooLarge { max, what });
    }
    Ok(read.bytes)
}

/// [`read_capped_from`] for a file, its buffer sized from the file's length.
pub fn read_capped(
    file: std::fs::File,
    max: u64,
    what: &'static str,
) -> Result<Vec<u8>, CappedReadError> {
    let len = file.metadata().map_or(0, |m| m.len());
    let read = read_at_most(file, max, len)?;
    if read.cut {
        return Err(CappedReadError::TooLarge { max, what });
    }
    Ok(read.bytes)
}

/// Reads a `cust.cfg` file, refusing one over [`MAX_CUST_CFG_BYTES`] before reading it whole.
pub fn read_cust_cfg(path: &std::path::Path) -> Result<Vec<u8>, CappedReadError> {
    read_capped(std::fs::File::open(path)?, MAX_CUST_CFG_BYTES, "cust.cfg")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_cap_and_no_further() {
        let mut f = tempfile::tempfile().unwrap();
        io::Write::write_all(&mut f, b"abc").unwrap();
        let reopen = |f: &std::fs::File| {
            let mut g = f.try_clone().unwrap();
            io::Seek::rewind(&mut g).unwrap();
            g
        };
        assert_eq!(read_capped(reopen(&f), 3, "x").unwrap(), b"abc");
        let err = read_capped(reopen(&f), 2, "cust.cfg").unwrap_err();
        assert!(matches!(err, CappedReadError::TooLarge { max: 2, .. }));
        assert!(err
            .to_string()
            .starts_with("larger than 2 bytes; a cust.cfg"));
        // An endless input that says it is empty ends after the cap.
        let zero = std::fs::File::open("/dev/zero").unwrap();
        let err = read_capped(zero, 1000, "x").unwrap_err();
        assert!(matches!(err, CappedReadError::TooLarge { max: 1000, .. }));
    }

    #[test]
    fn read_at_most_says_whether_the_input_went_on() {
        let cases: [(&[u8], u64, &[u8], bool); 5] = [
            (b"", 0, b"", false),
            (b"a", 0, b"", true),
            (b"abc", 3, b"abc", false),
            (b"abcd", 3, b"abc", true),
            (b"abc", 10, b"abc", false),
        ];
        for (input, max, bytes, cut) in cases {
            let got = read_at_most(input, max, 0).unwrap();
            assert_eq!(
                (got.bytes.as_slice(), got.cut),
                (bytes, cut),
                "{input:?} max {max}"
            );
            // A wrong capacity hint changes nothing but the allocation.
            assert_eq!(read_at_most(input, max, u64::MAX).unwrap(), got);
        }
        let err = read_capped_from(&b"abcd"[..], 3, "x").unwrap_err();
        assert!(matches!(err, CappedReadError::TooLarge { max: 3, .. }));
    }

    #[test]
    fn an_unreadable_file_has_the_io_error_as_its_source() {
        let err = read_cust_cfg(std::path::Path::new("/nonexistent/cust.cfg")).unwrap_err();
        let source = std::error::Error::source(&err).expect("a source");
        assert!(source.is::<io::Error>());
    }
}
