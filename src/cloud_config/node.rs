//! A cloud-config YAML document read into a tree of [`Node`]s that each know their line,
//! with the scalar types PyYAML's `safe_load` (what cloud-init uses) gives them.
//!
//! The project reads other YAML with `serde_norway`, which gives no per-key line; here every
//! problem must name its line, so the document goes through `yaml-rust2`'s event parser
//! (each event carries a marker) into our own tree. Building the tree ourselves is also
//! where the bounds live: document size, nesting depth, node count (aliases included, so
//! a "billion laughs" document is refused, not expanded).
//!
//! Plain scalars are resolved as YAML 1.1 does (PyYAML): `yes`/`no`/`on`/`off` are
//! booleans, `0644` is octal, `1_000` and `1:30` (sexagesimal) are integers, `~` is null.
//! Quoted and block scalars are strings. `<<` merge keys work as in PyYAML.

use std::collections::{HashMap, HashSet};
use std::fmt;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Largest cloud-config document read, in bytes.
pub(crate) const MAX_DOCUMENT: usize = 4 * 1024 * 1024;
/// Deepest nesting of sequences and mappings.
pub(crate) const MAX_DEPTH: usize = 64;
/// Most nodes in one document, counting each alias as the nodes it stands for.
pub(crate) const MAX_NODES: usize = 200_000;

/// One value of the document, with the line (1-based) it starts on and the user-data part
/// (0-based) it came from.
#[derive(Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// The line it starts on, 1-based, within its part.
    pub line: u32,
    /// The user-data part it came from (0 for a plain `#cloud-config`).
    pub part: u16,
}

/// The value of a [`Node`].
#[derive(Clone, PartialEq)]
pub enum Value {
    /// `~`, `null`, or nothing.
    Null,
    /// A YAML 1.1 boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// `!!binary` data (base64 in the document), as PyYAML gives `bytes`.
    Binary(Vec<u8>),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order, each key once (a later duplicate replaced the earlier
    /// value, as in PyYAML).
    Map(Vec<(Key, Node)>),
}

/// A mapping key: its text and line.
#[derive(Clone, PartialEq, Eq)]
pub struct Key {
    /// The key as written (a scalar's text; non-string scalars keep their source text).
    pub text: String,
    /// Its line, 1-based.
    pub line: u32,
}

impl Node {
    /// A node of `value` at `line` of `part`.
    pub fn new(value: Value, line: u32, part: u16) -> Self {
        Node { value, line, part }
    }

    /// The value under `key`, when this is a mapping holding it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(m) => m.iter().find(|(k, _)| k.text == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The entries when this is a mapping.
    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The text when this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// What kind of value this is, for messages ("a string", "a mapping"…).
    pub fn kind(&self) -> &'static str {
        self.value.kind()
    }

    /// The number of nodes in this tree.
    pub fn size(&self) -> usize {
        1 + match &self.value {
            Value::Seq(s) => s.iter().map(Node::size).sum(),
            Value::Map(m) => m.iter().map(|(_, v)| 1 + v.size()).sum(),
            _ => 0,
        }
    }
}

impl Value {
    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Binary(_) => "binary data",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// Debug never prints values: any string in a cloud-config may be a password or a file's
/// secret contents. The redacting JSON view (`crate::cloud_config::redact`) is the way to
/// look inside.
impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Node({} at part {} line {})",
            self.kind(),
            self.part,
            self.line
        )
    }
}

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum YamlError {
    /// Not valid YAML.
    #[error("line {line}: not valid YAML: {info}")]
    Syntax {
        /// The line, 1-based.
        line: u32,
        /// The parser's message.
        info: String,
    },
    /// Over a bound.
    #[error("line {line}: {what}")]
    Bound {
        /// The line reached.
        line: u32,
        /// Which bound and what to do.
        what: String,
    },
    /// A construct PyYAML's safe loader refuses too, or one we do not take.
    #[error("line {line}: {what}")]
    Unsupported {
        /// The line.
        line: u32,
        /// What and how to fix it.
        what: String,
    },
}

impl YamlError {
    /// The line the problem is on.
    pub fn line(&self) -> u32 {
        match self {
            YamlError::Syntax { line, .. }
            | YamlError::Bound { line, .. }
            | YamlError::Unsupported { line, .. } => *line,
        }
    }
}

/// A container being built.
enum Open {
    Seq {
        items: Vec<Node>,
        line: u32,
        anchor: usize,
    },
    Map {
        entries: Vec<(Key, Node)>,
        /// Each key's place in `entries`: the duplicate-key rule looks every key up, and a
        /// walk of the entries for each made a mapping quadratic to read.
        index: HashMap<String, usize>,
        /// The key read, waiting for its value.
        key: Option<Node>,
        /// `<<` values, merged in when the mapping ends.
        merges: Vec<Node>,
        line: u32,
        anchor: usize,
    },
}

fn line_of(m: &Marker) -> u32 {
    u32::try_from(m.line()).unwrap_or(u32::MAX)
}

/// Reads `text` (one YAML document, as `safe_load` takes it) into a tree, every node
/// marked with `part`. An empty document is [`Value::Null`] at line 1.
pub fn parse(text: &str, part: u16) -> Result<Node, YamlError> {
    if text.len() > MAX_DOCUMENT {
        return Err(YamlError::Bound {
            line: 1,
            what: format!(
                "the document is {} bytes; at most {MAX_DOCUMENT} are read",
                text.len()
            ),
        });
    }
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Open> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut nodes = 0usize;
    let mut docs = 0usize;
    let mut root: Option<Node> = None;
    loop {
        let (event, mark) = parser.next_token().map_err(|e| YamlError::Syntax {
            line: line_of(e.marker()),
            info: e.info().to_string(),
        })?;
        let line = line_of(&mark);
        let done: Option<(Node, usize)> = match event {
            Event::StreamEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => None,
            Event::DocumentStart => {
                docs += 1;
                if docs > 1 {
                    return Err(YamlError::Unsupported {
                        line,
                        what: "a second YAML document (`---`); cloud-config is one document: merge them, or send them as MIME parts".into(),
                    });
                }
                None
            }
            Event::Alias(id) => {
                let node = anchors.get(&id).cloned().ok_or(YamlError::Syntax {
                    line,
                    info: "alias to an unknown anchor".into(),
                })?;
                nodes += node.size();
                Some((node, 0))
            }
            Event::Scalar(text, style, anchor, tag) => {
                nodes += 1;
                let value = scalar(text, style, tag.as_ref(), line)?;
                Some((Node::new(value, line, part), anchor))
            }
            Event::SequenceStart(anchor, tag) => {
                no_tag(tag.as_ref(), "tag:yaml.org,2002:seq", line)?;
                nodes += 1;
                stack.push(Open::Seq {
                    items: Vec::new(),
                    line,
                    anchor,
                });
                None
            }
            Event::MappingStart(anchor, tag) => {
                no_tag(tag.as_ref(), "tag:yaml.org,2002:map", line)?;
                nodes += 1;
                stack.push(Open::Map {
                    entries: Vec::new(),
                    index: HashMap::new(),
                    key: None,
                    merges: Vec::new(),
                    line,
                    anchor,
                });
                None
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Open::Seq {
                    items,
                    line,
                    anchor,
                }) => Some((Node::new(Value::Seq(items), line, part), anchor)),
                _ => unreachable!("the parser pairs sequence ends with starts"),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Open::Map {
                    mut entries,
                    index,
                    merges,
                    line,
                    anchor,
                    ..
                }) => {
                    merge_keys(&mut entries, index, merges, line)?;
                    Some((Node::new(Value::Map(entries), line, part), anchor))
                }
                _ => unreachable!("the parser pairs mapping ends with starts"),
            },
        };
        if nodes > MAX_NODES {
            return Err(YamlError::Bound {
                line,
                what: format!("more than {MAX_NODES} values (aliases counted as what they repeat); cloud-config is far smaller"),
            });
        }
        if stack.len() > MAX_DEPTH {
            return Err(YamlError::Bound {
                line,
                what: format!("nested deeper than {MAX_DEPTH} levels"),
            });
        }
        let Some((node, anchor)) = done else {
            continue;
        };
        if anchor != 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Open::Seq { items, .. }) => items.push(node),
            Some(Open::Map {
                entries,
                index,
                key,
                merges,
                ..
            }) => match key.take() {
                None => *key = Some(node),
                Some(k) => {
                    let text = key_text(&k)?;
                    if text == "<<" && matches!(k.value, Value::Str(_)) {
                        merges.push(node);
                    } else if let Some(&at) = index.get(&text) {
                        // PyYAML: a later duplicate key replaces the earlier value.
                        entries[at].1 = node;
                    } else {
                        index.insert(text.clone(), entries.len());
                        entries.push((Key { text, line: k.line }, node));
                    }
                }
            },
        }
    }
    Ok(root.unwrap_or(Node::new(Value::Null, 1, part)))
}

/// A key's text: scalars only (PyYAML's safe loader refuses a mapping or list as key,
/// which Python cannot hash).
fn key_text(k: &Node) -> Result<String, YamlError> {
    Ok(match &k.value {
        Value::Str(s) => s.clone(),
        Value::Null => "null".into(),
        Value::Bool(b) => if *b { "true" } else { "false" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Binary(_) | Value::Seq(_) | Value::Map(_) => {
            return Err(YamlError::Unsupported {
                line: k.line,
                what: "a list or mapping used as a key; keys are names".into(),
            })
        }
    })
}

/// `<<: *base` and `<<: [*a, *b]`: the keys the mapping lacks, from the first merged
/// mapping that has them (PyYAML's order).
fn merge_keys(
    entries: &mut Vec<(Key, Node)>,
    index: HashMap<String, usize>,
    merges: Vec<Node>,
    line: u32,
) -> Result<(), YamlError> {
    if merges.is_empty() {
        return Ok(());
    }
    let mut has: HashSet<String> = index.into_keys().collect();
    for merged in merges {
        let sources: Vec<Node> = match merged.value {
            Value::Map(_) => vec![merged],
            Value::Seq(items) => items,
            _ => {
                return Err(YamlError::Unsupported {
                    line,
                    what: "`<<` takes a mapping or a list of mappings".into(),
                })
            }
        };
        for source in sources {
            let Value::Map(m) = source.value else {
                return Err(YamlError::Unsupported {
                    line,
                    what: "`<<` takes a mapping or a list of mappings".into(),
                });
            };
            for (k, v) in m {
                if has.insert(k.text.clone()) {
                    entries.push((k, v));
                }
            }
        }
    }
    Ok(())
}

fn no_tag(
    tag: Option<&yaml_rust2::parser::Tag>,
    allowed: &str,
    line: u32,
) -> Result<(), YamlError> {
    match tag {
        None => Ok(()),
        Some(t) if tag_name(t) == allowed => Ok(()),
        Some(t) => Err(unsupported_tag(t, line)),
    }
}

/// A tag's full name: `!!str` and `tag:yaml.org,2002:str` alike.
fn tag_name(t: &yaml_rust2::parser::Tag) -> String {
    if t.handle == "!!" {
        format!("tag:yaml.org,2002:{}", t.suffix)
    } else {
        format!("{}{}", t.handle, t.suffix)
    }
}

fn unsupported_tag(t: &yaml_rust2::parser::Tag, line: u32) -> YamlError {
    YamlError::Unsupported {
        line,
        what: format!(
            "the tag {}{} is not taken; remove it (plain values are typed as YAML 1.1 types them)",
            if t.handle == "tag:yaml.org,2002:" {
                "!!"
            } else {
                &t.handle
            },
            t.suffix
        ),
    }
}

#[cfg(test)]
#[test]
fn a_tag_is_named_as_written() {
    let e = parse("a: !!python/object:x y\n", 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the tag !!python/object:x is not"), "{e}");
}

/// A scalar's value: quoted and block scalars are strings; plain ones resolved as YAML
/// 1.1; a core-schema tag forces its type.
fn scalar(
    text: String,
    style: TScalarStyle,
    tag: Option<&yaml_rust2::parser::Tag>,
    line: u32,
) -> Result<Value, YamlError> {
    if let Some(t) = tag {
        let full = tag_name(t);
        let bad = || YamlError::Unsupported {
            line,
            what: format!("the value is not a valid {full}"),
        };
        return match full.as_str() {
            "tag:yaml.org,2002:str" => Ok(Value::Str(text)),
            "tag:yaml.org,2002:null" => Ok(Value::Null),
            "tag:yaml.org,2002:bool" => resolve_bool(&text).map(Value::Bool).ok_or_else(bad),
            "tag:yaml.org,2002:int" => resolve_int(&text)
                .ok_or_else(bad)?
                .map(Value::Int)
                .map_err(|w| YamlError::Bound { line, what: w }),
            "tag:yaml.org,2002:float" => resolve_float(&text).map(Value::Float).ok_or_else(bad),
            "tag:yaml.org,2002:binary" => {
                super::decode::base64(&text)
                    .map(Value::Binary)
                    .map_err(|why| YamlError::Unsupported {
                        line,
                        what: format!("!!binary: {why}"),
                    })
            }
            _ => Err(unsupported_tag(t, line)),
        };
    }
    if style != TScalarStyle::Plain {
        return Ok(Value::Str(text));
    }
    resolve_plain(text).map_err(|what| YamlError::Bound { line, what })
}

/// YAML 1.1 resolution of a plain scalar, as PyYAML's resolver does it.
pub(crate) fn resolve_plain(text: String) -> Result<Value, String> {
    if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Value::Null);
    }
    if let Some(b) = resolve_bool(&text) {
        return Ok(Value::Bool(b));
    }
    if let Some(i) = resolve_int(&text) {
        return i.map(Value::Int);
    }
    if let Some(f) = resolve_float(&text) {
        return Ok(Value::Float(f));
    }
    Ok(Value::Str(text))
}

fn resolve_bool(t: &str) -> Option<bool> {
    match t {
        // PyYAML's resolver has no `y`/`n`: they stay strings.
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// `Some(Ok)` for a YAML 1.1 integer, `Some(Err)` for one too large for 64 bits, `None`
/// when the text is not an integer.
fn resolve_int(t: &str) -> Option<Result<i64, String>> {
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if body.is_empty() {
        return None;
    }
    let digits = |s: &str, radix: u32| -> Option<String> {
        let d: String = s.chars().filter(|c| *c != '_').collect();
        (!d.is_empty() && !s.starts_with('_') && d.chars().all(|c| c.is_digit(radix))).then_some(d)
    };
    let (digits, radix) = if let Some(b) = body.strip_prefix("0b") {
        (digits(b, 2)?, 2)
    } else if let Some(x) = body.strip_prefix("0x") {
        (digits(x, 16)?, 16)
    } else if body.len() > 1 && body.starts_with('0') {
        (digits(&body[1..], 8)?, 8)
    } else if body.contains(':') {
        // Sexagesimal: 1:30 is 90 (PyYAML).
        let mut total: i128 = 0;
        let mut parts = body.split(':');
        let first = parts.next()?;
        if first.is_empty()
            || first.starts_with('0')
            || !first.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        {
            return None;
        }
        total += digits(first, 10)?.parse::<i128>().ok()?;
        for p in parts {
            if p.is_empty() || p.len() > 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let n: i128 = p.parse().ok()?;
            if n > 59 {
                return None;
            }
            total = total.checked_mul(60)?.checked_add(n)?;
        }
        let total = if neg { -total } else { total };
        return Some(i64::try_from(total).map_err(|_| too_large(t)));
    } else {
        (digits(body, 10)?, 10)
    };
    Some(match i128::from_str_radix(&digits, radix) {
        Ok(n) => i64::try_from(if neg { -n } else { n }).map_err(|_| too_large(t)),
        Err(_) => Err(too_large(t)),
    })
}

fn too_large(t: &str) -> String {
    format!(
        "the integer {} does not fit in 64 bits; quote it if it is meant as text",
        crate::model::quote(t)
    )
}

fn resolve_float(t: &str) -> Option<f64> {
    let body = t.trim_start_matches(['-', '+']);
    if matches!(body, ".inf" | ".Inf" | ".INF") {
        return Some(if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if matches!(t, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN);
    }
    // [-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?  (YAML 1.1 wants a dot)
    if t.len() - body.len() > 1 || !body.contains('.') {
        return None;
    }
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.')?;
    let ok_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    if !ok_digits(int)
        || !ok_digits(frac)
        || frac.contains('.')
        || (int.is_empty() && frac.is_empty())
    {
        return None;
    }
    if int.starts_with('_') {
        return None;
    }
    if let Some(e) = exp {
        let digits = e.strip_prefix(['-', '+'])?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
    }
    t.replace('_', "").parse::<f64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Value {
        parse(text, 0).unwrap().value
    }

    #[test]
    fn plain_scalars_resolve_as_yaml_1_1() {
        let table: &[(&str, Value)] = &[
            ("yes", Value::Bool(true)),
            ("Off", Value::Bool(false)),
            ("TRUE", Value::Bool(true)),
            ("y", Value::Str("y".into())),
            ("0644", Value::Int(0o644)),
            ("644", Value::Int(644)),
            ("0x1F", Value::Int(31)),
            ("0b101", Value::Int(5)),
            ("1_000", Value::Int(1000)),
            ("-12", Value::Int(-12)),
            ("1:30", Value::Int(90)),
            ("1.5", Value::Float(1.5)),
            ("1e5", Value::Str("1e5".into())),
            ("~", Value::Null),
            ("", Value::Null),
            ("null", Value::Null),
            ("'yes'", Value::Str("yes".into())),
            ("\"0644\"", Value::Str("0644".into())),
            ("0899", Value::Str("0899".into())),
            ("2024-01-01", Value::Str("2024-01-01".into())),
            ("!!str 12", Value::Str("12".into())),
            ("!!int '12'", Value::Int(12)),
            ("hello world", Value::Str("hello world".into())),
        ];
        for (text, want) in table {
            assert!(v(text) == *want, "{text}: got {}", v(text).kind());
        }
    }

    #[test]
    fn keys_and_values_carry_their_lines() {
        let n = parse("#cloud-config\na: 1\nb:\n  - x\n  - y\nc: {d: e}\n", 3).unwrap();
        let m = n.as_map().unwrap();
        let lines: Vec<(&str, u32)> = m.iter().map(|(k, _)| (k.text.as_str(), k.line)).collect();
        assert_eq!(lines, [("a", 2), ("b", 3), ("c", 6)]);
        let Value::Seq(items) = &n.get("b").unwrap().value else {
            panic!()
        };
        assert_eq!(items[1].line, 5);
        assert_eq!(items[1].part, 3);
    }

    #[test]
    fn duplicate_keys_keep_the_last_and_merge_keys_fill_in() {
        let n = parse("a: 1\na: 2\n", 0).unwrap();
        assert!(n.get("a").unwrap().value == Value::Int(2));
        assert_eq!(n.as_map().unwrap().len(), 1);
        let n = parse("base: &b {x: 1, y: 2}\nnew:\n  <<: *b\n  y: 3\n", 0).unwrap();
        let new = n.get("new").unwrap();
        assert!(new.get("x").unwrap().value == Value::Int(1));
        assert!(new.get("y").unwrap().value == Value::Int(3));
    }

    #[test]
    fn hostile_documents_are_refused_with_a_line() {
        let laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let table: &[(&str, &str)] = &[
            (laughs, "more than"),
            (&deep, "nested deeper"),
            ("a: 1\n---\nb: 2\n", "second YAML document"),
            ("a: !!python/object:os.system x\n", "tag"),
            ("a: [1, 2\n", "not valid YAML"),
            ("? [a, b]\n: c\n", "used as a key"),
            ("a: 99999999999999999999\n", "64 bits"),
            ("a: *nope\n", "not valid YAML"),
        ];
        for (text, want) in table {
            let e = parse(text, 0).unwrap_err();
            assert!(e.to_string().contains(want), "{text:?}: {e}");
            assert!(e.line() >= 1);
        }
        assert!(parse(&"a".repeat(MAX_DOCUMENT + 1), 0).is_err());
    }

    #[test]
    fn debug_shows_no_value() {
        let n = parse("password: hunter2\n", 0).unwrap();
        assert!(!format!("{n:?}").contains("hunter2"));
    }
}
