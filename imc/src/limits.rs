//! Hard caps on `cust.cfg`, and a reader that stops at the size cap instead of reading a file
//! whole. Every cap is listed in `docs/limits.md`.

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

/// Reads at most `max` bytes of `file`; more is an error, found after reading `max + 1`
/// bytes, never the whole input (a device or a file still growing may say it is smaller
/// than it is). `what` names the input in the message. The buffer is sized from the
/// file's length (within the cap), so a small file is read in one call rather than a
/// doubling series of them.
pub fn read_capped(
    file: std::fs::File,
    max: u64,
    what: &'static str,
) -> Result<Vec<u8>, CappedReadError> {
    // One byte more than the length: the read that finds the end needs no new buffer.
    let hint = file
        .metadata()
        .map_or(0, |m| m.len().min(max))
        .saturating_add(1);
    let mut bytes = Vec::with_capacity(hint as usize);
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(CappedReadError::TooLarge { max, what });
    }
    Ok(bytes)
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
    fn an_unreadable_file_has_the_io_error_as_its_source() {
        let err = read_cust_cfg(std::path::Path::new("/nonexistent/cust.cfg")).unwrap_err();
        let source = std::error::Error::source(&err).expect("a source");
        assert!(source.is::<io::Error>());
    }
}
