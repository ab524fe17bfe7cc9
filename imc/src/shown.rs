//! How values and names appear in messages: quoted, and cut to a short prefix with their length.
//!
//! A host-supplied value can be megabytes long; a message that quoted it whole would flood the
//! boot log and the status sent to vCenter. Every message of this crate and of `vmcust-ovf`
//! that quotes a value or a name goes through here, so the bound holds everywhere.

use std::borrow::Cow;

/// Characters of a value or name shown before it is cut.
pub const SHOWN_CHARS: usize = 64;

/// `value` quoted as Rust would (`"a\tb"`), cut after [`SHOWN_CHARS`] characters with its
/// length: `"aaaa…" (70000 bytes)`.
pub fn quoted(value: &str) -> String {
    match cut(value) {
        None => format!("{value:?}"),
        Some(prefix) => format!("{:?} ({} bytes)", format!("{prefix}…"), value.len()),
    }
}

/// A name (section, key, element) as written, cut after [`SHOWN_CHARS`] characters with its
/// length; control characters are escaped so that a name cannot break a log line.
pub fn name(name: &str) -> Cow<'_, str> {
    let escaped = |s: &str| -> String { s.chars().flat_map(char::escape_default).collect() };
    match cut(name) {
        None if !name.chars().any(char::is_control) => Cow::Borrowed(name),
        None => Cow::Owned(escaped(name)),
        Some(prefix) => Cow::Owned(format!("{}… ({} bytes)", escaped(prefix), name.len())),
    }
}

/// The prefix to show when `value` is too long, or `None` when it can be shown whole.
fn cut(value: &str) -> Option<&str> {
    let (end, _) = value.char_indices().nth(SHOWN_CHARS)?;
    Some(&value[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_quoted_whole() {
        assert_eq!(quoted("a\"b"), r#""a\"b""#);
        assert_eq!(
            quoted(&"x".repeat(SHOWN_CHARS)),
            format!("{:?}", "x".repeat(64))
        );
        assert_eq!(name("NIC1"), "NIC1");
    }

    #[test]
    fn long_values_are_cut_with_their_length() {
        let long = "ä".repeat(100_000);
        let shown = quoted(&long);
        assert!(shown.len() < 200, "{shown}");
        assert!(shown.ends_with(" (200000 bytes)"), "{shown}");
        assert!(shown.starts_with(&format!("\"{}…\"", "ä".repeat(SHOWN_CHARS))));
        let long = "K".repeat(1 << 20);
        let shown = name(&long);
        assert!(
            shown.len() < 100 && shown.ends_with("(1048576 bytes)"),
            "{shown}"
        );
    }

    #[test]
    fn names_cannot_break_a_line() {
        assert_eq!(name("a\nb"), "a\\nb");
    }
}
