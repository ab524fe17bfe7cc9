//! `/var/log/vmcust.log`, bounded: appended to, and rotated to `vmcust.log.1` once it
//! reaches [`MAX_LOG_BYTES`], so the log and its one predecessor never take more than twice
//! that, whatever a script or a hostile spec makes vmcust write.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Size at which the log is rotated: 8 MiB holds thousands of runs.
pub(crate) const MAX_LOG_BYTES: u64 = 8 * 1024 * 1024;

/// Mode of the log: it may name the spec's keys and script output, so root only.
const LOG_MODE: u32 = 0o600;

/// An append-only log file that rotates itself at a size cap.
#[derive(Debug)]
pub(crate) struct BoundedLog {
    path: PathBuf,
    file: File,
    size: u64,
    max: u64,
}

impl BoundedLog {
    /// Opens `path` for appending with the default cap, creating its directory and the
    /// file (mode 0600) if needed; a file already over the cap is rotated first.
    pub(crate) fn open(path: &Path) -> io::Result<BoundedLog> {
        BoundedLog::open_with_cap(path, MAX_LOG_BYTES)
    }

    /// [`BoundedLog::open`] with another cap (for tests).
    pub(crate) fn open_with_cap(path: &Path, max: u64) -> io::Result<BoundedLog> {
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(crate::root::DIR_MODE)
                .create(dir)?;
        }
        let (file, size) = open_append(path)?;
        let mut log = BoundedLog {
            path: path.to_path_buf(),
            file,
            size,
            max,
        };
        if size >= max {
            log.rotate()?;
        }
        Ok(log)
    }

    /// Renames the file to `<name>.1` (replacing an older one) and starts an empty one.
    fn rotate(&mut self) -> io::Result<()> {
        let mut old = self.path.clone().into_os_string();
        old.push(".1");
        std::fs::rename(&self.path, &old)?;
        let (file, size) = open_append(&self.path)?;
        self.file = file;
        self.size = size;
        Ok(())
    }
}

fn open_append(path: &Path) -> io::Result<(File, u64)> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(LOG_MODE)
        .open(path)?;
    let size = file.metadata()?.len();
    Ok((file, size))
}

impl Write for BoundedLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Rotate between writes, never inside one: each tracing event is one write.
        if self.size > 0 && self.size + buf.len() as u64 > self.max {
            self.rotate()?;
        }
        // One event longer than the whole cap is cut: its start says what it was.
        let take = buf
            .len()
            .min(usize::try_from(self.max).unwrap_or(usize::MAX));
        let written = self.file.write(&buf[..take])?;
        self.size += written as u64;
        // Report the whole event as written, so that the caller does not retry the rest.
        Ok(if written == take { buf.len() } else { written })
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_at_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("var/log/vmcust.log");
        let mut log = BoundedLog::open_with_cap(&path, 1000).unwrap();
        for i in 0..10_000 {
            writeln!(log, "line {i:>10}").unwrap();
        }
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        let old = dir.path().join("var/log/vmcust.log.1");
        assert!(size(&path) <= 1000 && size(&old) <= 1000);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("line       9999\n"), "{text}");
        // One huge event is cut to the cap.
        log.write_all(&vec![b'x'; 1 << 20]).unwrap();
        assert!(size(&path) <= 1000);
        // Reopening a full log rotates it first.
        drop(log);
        std::fs::write(&path, vec![b'y'; 2000]).unwrap();
        let log = BoundedLog::open_with_cap(&path, 1000).unwrap();
        assert_eq!(log.size, 0);
        assert_eq!(size(&old), 2000);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
