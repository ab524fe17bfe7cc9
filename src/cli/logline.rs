//! The one log line format: `vmcust: warning: message key=value`, with an sd-daemon
//! `<N>` syslog priority in front when stderr is the journal (systemd sets
//! `JOURNAL_STREAM` to the device and inode of the stream it gave the service), and the
//! time in front in vmcust's own log file.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The log line format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line {
    /// Start with `<N>` (journald reads it as the priority and strips it).
    pub priority: bool,
    /// Start with the UTC time (RFC 3339), for the log file.
    pub time: bool,
}

/// The syslog priority of a level: error 3, warning 4, info 6, debug and trace 7.
pub(crate) fn priority(level: Level) -> u8 {
    match level {
        Level::ERROR => 3,
        Level::WARN => 4,
        Level::INFO => 6,
        _ => 7,
    }
}

/// The label after `vmcust: `; info has none.
pub(crate) fn label(level: Level) -> &'static str {
    match level {
        Level::ERROR => "error: ",
        Level::WARN => "warning: ",
        Level::INFO => "",
        Level::DEBUG => "debug: ",
        Level::TRACE => "trace: ",
    }
}

/// Whether stderr is the stream systemd connected to the journal: `JOURNAL_STREAM` is
/// `DEVICE:INODE` and matches stderr's (a child's redirected stderr does not).
pub(crate) fn stderr_is_journal() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let Some(var) = std::env::var_os("JOURNAL_STREAM") else {
        return false;
    };
    let Some((dev, ino)) = var.to_str().and_then(|v| v.split_once(':')) else {
        return false;
    };
    let Ok(meta) = std::fs::metadata("/proc/self/fd/2") else {
        return false;
    };
    dev.parse() == Ok(meta.dev()) && ino.parse() == Ok(meta.ino())
}

/// Prints the error that ends a command, `vmcust: error: …`, with priority 3 when
/// stderr is the journal, like every other line.
pub(crate) fn print_error(e: &anyhow::Error) {
    let prefix = if stderr_is_journal() { "<3>" } else { "" };
    eprintln!("{prefix}vmcust: error: {e:#}");
}

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let level = *event.metadata().level();
        if self.priority {
            write!(w, "<{}>", priority(level))?;
        }
        if self.time {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            write!(w, "{} ", crate::state::rfc3339(now))?;
        }
        write!(w, "vmcust: {}", label(level))?;
        ctx.field_format().format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_follow_syslog() {
        assert_eq!(
            [Level::ERROR, Level::WARN, Level::INFO, Level::DEBUG].map(priority),
            [3, 4, 6, 7]
        );
        assert_eq!(label(Level::WARN), "warning: ");
    }

    #[test]
    fn a_journal_stream_elsewhere_is_not_stderr() {
        // The test's stderr is not 0:0.
        std::env::set_var("JOURNAL_STREAM", "0:0");
        assert!(!stderr_is_journal());
        std::env::remove_var("JOURNAL_STREAM");
        assert!(!stderr_is_journal());
    }
}
