//! Errors of the OVF environment parser, each pointing at a line and column of the document.
//!
//! Names and values are shown through `vmcust_imc::shown`, cut to a short prefix; attribute
//! values are never shown except where they cannot be secret (`ve:unitNumber`).

use vmcust_imc::shown;

/// Why an OVF environment document was rejected.
///
/// Every variant carries the 1-based `line` and `column` (in characters) where the problem was
/// found, so an operator can fix the vApp property or guestinfo value that produced it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// The document is larger than [`crate::MAX_OVF_ENV_BYTES`].
    #[error("the document is {size} bytes, more than the {max} bytes an ovf environment may have")]
    TooLarge {
        /// Size of the input.
        size: u64,
        /// The cap.
        max: u64,
    },
    /// The bytes are not well-formed XML (or not UTF-8).
    #[error("line {line}, column {column}: malformed xml: {detail}")]
    Malformed {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What the XML reader objected to.
        detail: String,
    },
    /// The document has no root element at all (empty, whitespace or prolog only).
    #[error(
        "line {line}, column {column}: not an ovf environment: the document has no root element, \
         expected <Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\">"
    )]
    NoRoot {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
    },
    /// The root element is not called `Environment`.
    #[error(
        "line {line}, column {column}: not an ovf environment: root element is <{}>, \
         expected <Environment>", shown::name(.found)
    )]
    WrongRoot {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// The qualified name of the root element found.
        found: String,
    },
    /// The root element is `Environment` but not in the OVF environment namespace.
    #[error(
        "line {line}, column {column}: missing or wrong namespace on <Environment>: found {}, \
         declare xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"", shown::name(.found)
    )]
    WrongNamespace {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// The namespace found (`no namespace` when unbound).
        found: String,
    },
    /// A required attribute is absent (`key` on `Property`, `mac` on `ve:Adapter`).
    #[error("line {line}, column {column}: <{}> has no {attribute} attribute: add {attribute}=\"...\"", shown::name(.element))]
    MissingAttribute {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// Element name as written in the document.
        element: String,
        /// Attribute name as it should be written (e.g. `oe:key`).
        attribute: &'static str,
    },
    /// An attribute value cannot be interpreted (e.g. a non-numeric `ve:unitNumber`).
    #[error(
        "line {line}, column {column}: <{}> {attribute}={} is invalid: {expected}",
        shown::name(.element), shown::quoted(.value)
    )]
    InvalidAttribute {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// Element name as written in the document.
        element: String,
        /// Attribute name.
        attribute: &'static str,
        /// The offending value.
        value: String,
        /// What is expected instead.
        expected: &'static str,
    },
}

impl EnvError {
    /// The 1-based line of the problem.
    pub fn line(&self) -> usize {
        self.position().0
    }

    /// The 1-based column (in characters) of the problem.
    pub fn column(&self) -> usize {
        self.position().1
    }

    fn position(&self) -> (usize, usize) {
        match self {
            Self::Malformed { line, column, .. }
            | Self::NoRoot { line, column }
            | Self::WrongRoot { line, column, .. }
            | Self::WrongNamespace { line, column, .. }
            | Self::MissingAttribute { line, column, .. }
            | Self::InvalidAttribute { line, column, .. } => (*line, *column),
            Self::TooLarge { .. } => (1, 1),
        }
    }
}

/// Converts a byte offset into a 1-based (line, column) pair, counting columns in characters.
///
/// Offsets past the end are clamped, so a reader position can never make this panic.
pub(crate) fn line_column(input: &[u8], offset: u64) -> (usize, usize) {
    let end = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(input.len());
    let before = &input[..end];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    // Count UTF-8 lead bytes only, so a multi-byte character is one column.
    let column = 1 + before[line_start..]
        .iter()
        .filter(|&&b| b & 0xC0 != 0x80)
        .count();
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::line_column;

    #[test]
    fn offsets_map_to_lines_and_columns() {
        let text = "ab\ncä\nx".as_bytes();
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 2), (1, 3));
        assert_eq!(line_column(text, 3), (2, 1));
        // 'ä' is two bytes but one column.
        assert_eq!(line_column(text, 6), (2, 3));
        assert_eq!(line_column(text, 7), (3, 1));
        assert_eq!(line_column(text, 999), (3, 2));
    }
}
