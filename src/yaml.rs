//! A small block-style YAML writer for the documents vmcust emits (netplan files,
//! `--format yaml` output).
//!
//! Values go through `serde_json::Value` (with key order preserved), then out as block
//! YAML. libyaml's emitter (through serde_norway) cost three quarters of the time of a
//! whole plan on the boot path; this writer does the same job for our shapes in a few
//! microseconds. Strings are written plain only when no YAML 1.1 or 1.2 reader could take
//! them for anything but a string; everything else is double-quoted (JSON escaping is valid
//! YAML).
//!
//! The netplan file, written on every boot, skips the `Value` step: it is written field by
//! field through [`BlockWriter`], with the same layout and the same quoting rule.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

/// Serializes `value` as a block-style YAML document.
pub(crate) fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let value = serde_json::to_value(value)?;
    let mut out = String::with_capacity(1024);
    if is_block(&value) {
        block(&mut out, &value, 0, false);
    } else {
        inline(&mut out, &value);
        out.push('\n');
    }
    Ok(out)
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// A value that fits on the line of its key or dash.
fn inline(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => scalar(out, s),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

fn pad(out: &mut String, indent: usize) {
    // One copy for the usual depths instead of a push per space.
    const SPACES: &str = "                ";
    match SPACES.get(..indent) {
        Some(spaces) => out.push_str(spaces),
        None => out.extend(std::iter::repeat_n(' ', indent)),
    }
}

/// Writes a non-empty mapping or sequence at `indent`. With `after_dash` the first line
/// continues a `- ` already written, so it gets no indentation of its own.
fn block(out: &mut String, v: &Value, indent: usize, after_dash: bool) {
    let mut first = after_dash;
    let mut line_start = |out: &mut String| {
        if !std::mem::take(&mut first) {
            pad(out, indent);
        }
    };
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                line_start(out);
                scalar(out, k);
                out.push(':');
                match val {
                    Value::Object(_) if is_block(val) => {
                        out.push('\n');
                        block(out, val, indent + 2, false);
                    }
                    // Sequence items sit at the key's indentation, as most YAML emitters do.
                    Value::Array(_) if is_block(val) => {
                        out.push('\n');
                        block(out, val, indent, false);
                    }
                    _ => {
                        out.push(' ');
                        inline(out, val);
                        out.push('\n');
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                line_start(out);
                out.push_str("- ");
                if is_block(item) {
                    block(out, item, indent + 2, true);
                } else {
                    inline(out, item);
                    out.push('\n');
                }
            }
        }
        _ => {
            line_start(out);
            inline(out, v);
            out.push('\n');
        }
    }
}

/// Writes a document of a known shape straight to text, with the layout and quoting of
/// [`to_string`] (the same `scalar` rule).
///
/// `to_string` first builds a `serde_json::Value` tree, an allocation per node; for the
/// netplan file on the boot path that cost more than the rest of the plan. Callers write
/// mappings key by key and leave out what `skip_serializing_if` would skip; their tests
/// check the bytes against `to_string` of the same value.
pub(crate) struct BlockWriter {
    out: String,
    /// A `- ` was just written: the next line start continues it instead of indenting.
    after_dash: bool,
}

impl BlockWriter {
    /// Starts the document with `prefix` (e.g. a header comment).
    pub(crate) fn new(prefix: &str) -> Self {
        let mut out = String::with_capacity(1024);
        out.push_str(prefix);
        BlockWriter {
            out,
            after_dash: false,
        }
    }

    /// The text written so far.
    pub(crate) fn finish(self) -> String {
        self.out
    }

    fn line_start(&mut self, indent: usize) {
        if !std::mem::take(&mut self.after_dash) {
            pad(&mut self.out, indent);
        }
    }

    fn key_colon(&mut self, indent: usize, key: &str) {
        self.line_start(indent);
        scalar(&mut self.out, key);
        self.out.push(':');
    }

    /// `key:` opening a non-empty nested mapping (at `indent + 2`) or sequence (at `indent`).
    pub(crate) fn key(&mut self, indent: usize, key: &str) {
        self.key_colon(indent, key);
        self.out.push('\n');
    }

    /// `key: value` for a string value.
    pub(crate) fn str_field(&mut self, indent: usize, key: &str, value: &str) {
        self.key_colon(indent, key);
        self.out.push(' ');
        scalar(&mut self.out, value);
        self.out.push('\n');
    }

    /// `key: value` for a value written as is: a number, or `{}`/`[]`.
    pub(crate) fn plain_field(&mut self, indent: usize, key: &str, value: impl std::fmt::Display) {
        self.key_colon(indent, key);
        let _ = writeln!(self.out, " {value}");
    }

    /// `key: true` or `key: false` (without going through `fmt`).
    pub(crate) fn bool_field(&mut self, indent: usize, key: &str, value: bool) {
        self.key_colon(indent, key);
        self.out
            .push_str(if value { " true\n" } else { " false\n" });
    }

    /// A sequence of strings under `key`; `key: []` when empty.
    pub(crate) fn str_list<S: AsRef<str>>(&mut self, indent: usize, key: &str, items: &[S]) {
        if items.is_empty() {
            return self.plain_field(indent, key, "[]");
        }
        self.key(indent, key);
        for item in items {
            self.line_start(indent);
            self.out.push_str("- ");
            scalar(&mut self.out, item.as_ref());
            self.out.push('\n');
        }
    }

    /// `- ` starting a sequence item; a mapping item then writes its fields at `indent + 2`.
    pub(crate) fn dash(&mut self, indent: usize) {
        self.line_start(indent);
        self.out.push_str("- ");
        self.after_dash = true;
    }
}

/// A string scalar: plain when unambiguous, otherwise double-quoted with JSON escapes
/// (which YAML's double-quoted style accepts).
fn scalar(out: &mut String, s: &str) {
    if is_plain_safe(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    // Copies the runs between characters that need escaping in one go.
    let mut rest = s;
    while let Some((at, c)) = rest
        .char_indices()
        .find(|&(_, c)| c == '"' || c == '\\' || c.is_control())
    {
        out.push_str(&rest[..at]);
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
        }
        rest = &rest[at + c.len_utf8()..];
    }
    out.push_str(rest);
    out.push('"');
}

/// Plain only for `[A-Za-z0-9_][A-Za-z0-9_./:@+-]*` strings that cannot read as a number,
/// a boolean, null or a YAML 1.1 sexagesimal/date value, and have no `:` at the end.
fn is_plain_safe(s: &str) -> bool {
    // Byte-wise: any byte of a non-ASCII character fails these tests, as the character would.
    let Some(&first) = s.as_bytes().first() else {
        return false;
    };
    if !(first.is_ascii_alphanumeric() || first == b'_') || s.ends_with(':') {
        return false;
    }
    if !s.bytes().all(|b| {
        b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b':' | b'@' | b'+' | b'-')
    }) {
        return false;
    }
    const RESERVED: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf",
    ];
    if RESERVED.iter().any(|r| s.eq_ignore_ascii_case(r)) {
        return false;
    }
    !number_like(s)
}

/// Strings some YAML reader could take for a number, a YAML 1.1 sexagesimal value or a
/// date: decimal/hex/octal/binary/float forms (at most one dot), anything of hex digits
/// and colons only (MACs, `12:30`), and `YYYY-MM-DD`. Dotted quads and prefixes
/// (`10.0.0.1`, `0.0.0.0/0`) are not among them and stay plain.
fn number_like(s: &str) -> bool {
    let body = s.trim_start_matches(['-', '+']).as_bytes();
    let numeric = body
        .first()
        .is_some_and(|&b| b.is_ascii_digit() || b == b'.')
        && body.iter().all(|b| {
            b.is_ascii_hexdigit()
                || matches!(b, b'x' | b'X' | b'o' | b'O' | b'_' | b'.' | b'+' | b'-')
        })
        && body.iter().filter(|&&b| b == b'.').count() <= 1;
    let bytes = s.as_bytes();
    let hex_and_colons =
        bytes.contains(&b':') && bytes.iter().all(|b| b.is_ascii_hexdigit() || *b == b':');
    let date = bytes.len() >= 8 && bytes[..4].iter().all(u8::is_ascii_digit) && bytes[4] == b'-';
    numeric || hex_and_colons || date
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_are_quoted_only_when_needed() {
        let cases = [
            ("ens192", "ens192"),
            ("10.20.87.154/22", "10.20.87.154/22"),
            ("fc00:10:20:87::154/64", "fc00:10:20:87::154/64"),
            ("fc00:10:20:87::154", "\"fc00:10:20:87::154\""),
            ("::/0", "\"::/0\""),
            ("0.0.0.0/0", "0.0.0.0/0"),
            ("00:50:56:a6:8c:08", "\"00:50:56:a6:8c:08\""),
            ("00:50:56:12:34:56", "\"00:50:56:12:34:56\""),
            ("10.20.145.1", "10.20.145.1"),
            ("1.5", "\"1.5\""),
            ("2026-11-30", "\"2026-11-30\""),
            ("12:30", "\"12:30\""),
            ("eth0", "eth0"),
            ("yes", "\"yes\""),
            ("No", "\"No\""),
            ("1", "\"1\""),
            ("1e3", "\"1e3\""),
            ("", "\"\""),
            ("a b", "\"a b\""),
            ("key:", "\"key:\""),
            ("-x", "\"-x\""),
            ("corp.example.net", "corp.example.net"),
            ("with\"quote", "\"with\\\"quote\""),
            ("a\tb\\c\u{1}é\n", "\"a\\tb\\\\c\\u0001é\\n\""),
        ];
        for (input, want) in cases {
            let mut got = String::new();
            scalar(&mut got, input);
            assert_eq!(got, want, "input {input:?}");
        }
    }

    #[test]
    fn block_layout() {
        let doc = json!({
            "network": {
                "version": 2,
                "ethernets": {
                    "ens192": {
                        "match": {"macaddress": "00:50:56:a6:8c:08"},
                        "dhcp4": false,
                        "addresses": ["10.0.0.5/24"],
                        "routes": [{"to": "0.0.0.0/0", "via": "10.0.0.1", "metric": 100}],
                        "link-local": []
                    }
                }
            }
        });
        let want = "network:
  version: 2
  ethernets:
    ens192:
      match:
        macaddress: \"00:50:56:a6:8c:08\"
      dhcp4: false
      addresses:
      - 10.0.0.5/24
      routes:
      - to: 0.0.0.0/0
        via: 10.0.0.1
        metric: 100
      link-local: []
";
        assert_eq!(to_string(&doc).unwrap(), want);
    }

    #[test]
    fn output_reads_back_as_the_same_value() {
        let doc = json!({
            "a": ["x", {"b": "::/0", "c": [1, 2], "d": {}}, "yes", ""],
            "e": {"f": null, "g": "00:11:22:33:44:55", "h": true},
            "list": [[1, 2], ["x"]]
        });
        let text = to_string(&doc).unwrap();
        let back: Value = serde_norway::from_str(&text).unwrap();
        assert_eq!(back, doc, "{text}");
    }
}
