//! A small block-style YAML writer for the documents vmcust emits (netplan files,
//! `--format yaml` output).
//!
//! Values go through `serde_json::Value` (with key order preserved), then out as block
//! YAML. libyaml's emitter (through serde_norway) cost three quarters of the time of a
//! whole plan on the boot path; this writer does the same job for our shapes in a few
//! microseconds. Strings are written plain only when no YAML 1.1 or 1.2 reader could take
//! them for anything but a string; everything else is double-quoted (JSON escaping is valid
//! YAML).

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

/// Serializes `value` as a block-style YAML document.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
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
    out.extend(std::iter::repeat_n(' ', indent));
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

/// A string scalar: plain when unambiguous, otherwise double-quoted with JSON escapes
/// (which YAML's double-quoted style accepts).
fn scalar(out: &mut String, s: &str) {
    if is_plain_safe(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Plain only for `[A-Za-z0-9_][A-Za-z0-9_./:@+-]*` strings that cannot read as a number,
/// a boolean, null or a YAML 1.1 sexagesimal/date value, and have no `:` at the end.
fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !(first.is_ascii_alphanumeric() || first == '_') || s.ends_with(':') {
        return false;
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_./:@+-".contains(c))
    {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    const RESERVED: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "nan", "inf",
    ];
    if RESERVED.contains(&lower.as_str()) {
        return false;
    }
    !number_like(s)
}

/// Strings some YAML reader could take for a number, a YAML 1.1 sexagesimal value or a
/// date: decimal/hex/octal/binary/float forms (at most one dot), anything of hex digits
/// and colons only (MACs, `12:30`), and `YYYY-MM-DD`. Dotted quads and prefixes
/// (`10.0.0.1`, `0.0.0.0/0`) are not among them and stay plain.
fn number_like(s: &str) -> bool {
    let body = s.trim_start_matches(['-', '+']);
    let numeric = body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body
            .chars()
            .all(|c| c.is_ascii_hexdigit() || "xXoO_.+-".contains(c))
        && body.matches('.').count() <= 1;
    let hex_and_colons = s.contains(':') && s.chars().all(|c| c.is_ascii_hexdigit() || c == ':');
    let date =
        s.len() >= 8 && s[..4].chars().all(|c| c.is_ascii_digit()) && s[4..].starts_with('-');
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
