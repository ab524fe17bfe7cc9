//! Jinja user-data (`## template: jinja`), rendered as cloud-init renders it: the header
//! line taken off, the rest rendered by the `minijinja` engine with the instance data as
//! its variables (`v1.*`, `ds.meta_data.*`, the `v1` keys again at the top level, and an
//! `_` alias beside every key that holds a Jinja operator character), blocks trimmed, a
//! trailing newline kept, and a variable that is not defined printed as
//! `CI_MISSING_JINJA_VAR/<name>` (and named in a warning) rather than failing.
//!
//! Rendering is bounded: the engine's fuel limits the instructions a template may run,
//! its recursion limit the nesting, and the output may not exceed the user-data cap.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use minijinja::value::{Enumerator, Object, ObjectExt as _, ObjectRepr, Value};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};

/// What cloud-init prints for a variable that is not defined, before its name.
pub(crate) const MISSING: &str = "CI_MISSING_JINJA_VAR/";

/// The instructions one template may run (a 20 KiB CABPK user-data takes a few thousand).
const FUEL: u64 = 5_000_000;
/// The deepest nesting of blocks, includes and calls.
const RECURSION: usize = 64;
/// The largest rendered text, as the largest user-data taken.
const MAX_OUTPUT: usize = super::parts::MAX_USERDATA;

/// The characters Jinja's lexer reads as (part of) an operator: a key holding one gets an
/// alias with each replaced by `_`, so `{{ ds.meta_data.local_hostname }}` finds
/// `local-hostname`.
const OPERATOR_CHARS: &[char] = &[
    '+', '-', '/', '*', '%', '~', '[', ']', '(', ')', '{', '}', '|', ':', ';', ',', '.', '=', '<',
    '>', '!', '^',
];

/// The variables templates are rendered with: the instance data, converted as cloud-init
/// converts it (aliases and top-level `v1` keys). Built once, used for every part.
#[derive(Debug, Clone)]
pub struct Vars {
    tree: serde_json::Map<String, serde_json::Value>,
}

impl Vars {
    /// The variables of `instance_data` (the root-only tree, not the redacted one).
    pub fn new(instance_data: &serde_json::Value) -> Vars {
        let tree = match convert(instance_data) {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        Vars { tree }
    }

    /// No instance data at all: every variable renders as missing.
    pub fn empty() -> Vars {
        Vars {
            tree: serde_json::Map::new(),
        }
    }

    /// The converted tree (for `cloud-init query`).
    pub fn tree(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.tree
    }
}

/// The alias cloud-init adds beside `key`, when it differs from it.
pub(crate) fn alias(key: &str) -> Option<String> {
    key.contains(OPERATOR_CHARS)
        .then(|| key.replace(OPERATOR_CHARS, "_"))
}

/// cloud-init's `convert_jinja_instance_data`: every key's alias written first, then the
/// key itself (so a real `local_hostname` wins over the alias of `local-hostname`, which
/// sorts before it), and the keys of a `v<digits>` mapping copied up one level.
fn convert(value: &serde_json::Value) -> serde_json::Value {
    let serde_json::Value::Object(map) = value else {
        return value.clone();
    };
    let mut out = serde_json::Map::new();
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for key in keys {
        let v = convert(&map[key]);
        if let Some(a) = alias(key) {
            out.insert(a, v.clone());
        }
        let versioned =
            key.len() > 1 && key.starts_with('v') && key[1..].bytes().all(|b| b.is_ascii_digit());
        if let (true, serde_json::Value::Object(inner)) = (versioned, &v) {
            for (k, sub) in inner {
                out.insert(k.clone(), sub.clone());
            }
        }
        out.insert(key.clone(), v);
    }
    serde_json::Value::Object(out)
}

/// A rendered template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The text, to be typed again by its first line.
    pub text: String,
    /// The names printed as missing, in order, each once.
    pub missing: Vec<String>,
}

/// Why a template cannot be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JinjaError {
    /// The first line is not a Jinja header.
    #[error("its first line is not `## template: jinja`")]
    NoHeader,
    /// A syntax error, on a line of the part (header included).
    #[error("line {line}: the Jinja template has a syntax error: {reason}")]
    Syntax {
        /// The line of the part.
        line: usize,
        /// What the engine said.
        reason: String,
    },
    /// An error while rendering (an attribute of an undefined value, a bad operand,
    /// fuel or output exhausted).
    #[error("line {line}: the Jinja template cannot be rendered: {reason}")]
    Render {
        /// The line of the part.
        line: usize,
        /// What the engine said.
        reason: String,
    },
}

/// Whether `first_line` is a Jinja header as cloud-init's `detect_template` reads it:
/// `##`, spaces, `template:`, spaces, `jinja` (case ignored).
fn is_header(first_line: &str) -> bool {
    let Some(rest) = first_line.trim().strip_prefix("##") else {
        return false;
    };
    let rest = rest.trim_start();
    match rest.get(..9) {
        Some(t) if t.eq_ignore_ascii_case("template:") => {
            rest[9..].trim().eq_ignore_ascii_case("jinja")
        }
        _ => false,
    }
}

/// Renders `text` (a part starting with its `## template: jinja` line, after leading
/// whitespace) with `vars`.
pub fn render(text: &str, vars: &Vars) -> Result<Rendered, JinjaError> {
    let start = text.len() - text.trim_start().len();
    let skipped = text[..start].matches('\n').count();
    let text = &text[start..];
    let (header, body) = text.split_once('\n').unwrap_or((text, ""));
    if !is_header(header) {
        return Err(JinjaError::NoHeader);
    }
    // Lines of `body` are the part's lines after the header (and any blank lines above).
    let offset = skipped + 1;
    let last = Arc::new(Mutex::new(None::<String>));
    let written = Arc::new(Mutex::new(0usize));
    let mut env = Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .map_err(|e| JinjaError::Syntax {
                line: offset,
                reason: reason(&e),
            })?,
    );
    env.set_undefined_behavior(UndefinedBehavior::Lenient);
    env.set_fuel(Some(FUEL));
    env.set_recursion_limit(RECURSION);
    {
        let last = last.clone();
        let written = written.clone();
        env.set_formatter(move |out, _state, value| {
            let text = printed(value, &last);
            let mut n = written.lock().unwrap_or_else(PoisonError::into_inner);
            *n += text.len();
            if *n > MAX_OUTPUT {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("the output is larger than {MAX_OUTPUT} bytes"),
                ));
            }
            out.write_str(&text).map_err(Error::from)
        });
    }
    let template = env
        .template_from_str(body)
        .map_err(|e| JinjaError::Syntax {
            line: e.line().unwrap_or(1) + offset,
            reason: reason(&e),
        })?;
    let ctx = Value::from_object(Tree {
        map: tree_values(&vars.tree, &last),
        last: last.clone(),
    });
    let text = template.render(ctx).map_err(|e| JinjaError::Render {
        line: e.line().unwrap_or(1) + offset,
        reason: reason(&e),
    })?;
    if text.len() > MAX_OUTPUT {
        return Err(JinjaError::Render {
            line: offset,
            reason: format!("the output is larger than {MAX_OUTPUT} bytes"),
        });
    }
    let mut missing: Vec<String> = Vec::new();
    for (i, _) in text.match_indices(MISSING) {
        let name: String = text[i + MISSING.len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
            .collect();
        if !missing.contains(&name) {
            missing.push(name);
        }
    }
    Ok(Rendered { text, missing })
}

/// The engine's message without its own "(in template …)" place: the line is given apart.
fn reason(e: &Error) -> String {
    let mut kind = e.kind().to_string();
    if e.kind() == ErrorKind::UndefinedError {
        kind.push_str(
            " (a key of a variable the instance data does not define; \
             `cloud-init query --list-keys` shows what it defines)",
        );
    }
    match e.detail() {
        Some(d) => format!("{kind}: {d}"),
        None => kind,
    }
}

/// What `{{ value }}` prints: Python's words for booleans and none (the templates are
/// written for cloud-init's Jinja2), the missing marker for an undefined value.
fn printed(value: &Value, last: &Mutex<Option<String>>) -> String {
    if value.is_undefined() {
        let name = last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_default();
        return format!("{MISSING}{name}");
    }
    if value.is_none() {
        return "None".into();
    }
    if value.kind() == minijinja::value::ValueKind::Bool {
        return if value.is_true() { "True" } else { "False" }.into();
    }
    value.to_string()
}

/// A mapping of the instance data whose lookups of a missing key leave the key's name
/// behind, for the marker the formatter prints next.
#[derive(Debug)]
struct Tree {
    map: BTreeMap<String, Value>,
    last: Arc<Mutex<Option<String>>>,
}

impl Object for Tree {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let name = key.as_str()?;
        let got = self.map.get(name).cloned();
        if got.is_none() {
            *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(name.to_string());
        }
        got
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.mapped_enumerator(|this| Box::new(this.map.keys().map(|k| Value::from(k.as_str()))))
    }
}

fn tree_values(
    map: &serde_json::Map<String, serde_json::Value>,
    last: &Arc<Mutex<Option<String>>>,
) -> BTreeMap<String, Value> {
    map.iter()
        .map(|(k, v)| (k.clone(), value_of(v, last)))
        .collect()
}

fn value_of(v: &serde_json::Value, last: &Arc<Mutex<Option<String>>>) -> Value {
    match v {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::from(n.as_f64().unwrap_or(0.0))
            }
        }
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(a) => {
            Value::from(a.iter().map(|x| value_of(x, last)).collect::<Vec<_>>())
        }
        serde_json::Value::Object(m) => Value::from_object(Tree {
            map: tree_values(m, last),
            last: last.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Vars {
        Vars::new(&json!({
            "v1": {"local-hostname": "node-1", "local_hostname": "node-1", "instance_id": "vm-7",
                   "public_ssh_keys": ["ssh-ed25519 AAAA a@b"]},
            "ds": {"meta_data": {"local-hostname": "node-1", "local_hostname": "node-1.lab",
                                 "instance-id": "vm-7", "hostname": "node-1.lab",
                                 "network": {"version": 2}}},
        }))
    }

    fn r(text: &str) -> Result<Rendered, JinjaError> {
        render(text, &vars())
    }

    #[test]
    fn variables_as_cloud_init_converts_them() {
        let table: &[(&str, &str)] = &[
            ("{{ ds.meta_data.hostname }}", "node-1.lab"),
            ("{{ ds.meta_data['local-hostname'] }}", "node-1"),
            // The real underscore key wins over the alias of the dashed one.
            ("{{ ds.meta_data.local_hostname }}", "node-1.lab"),
            ("{{ ds.meta_data.instance_id }}", "vm-7"),
            ("{{ v1.local_hostname }}", "node-1"),
            ("{{ local_hostname }}", "node-1"),
            ("{{ instance_id }}", "vm-7"),
            ("{{ public_ssh_keys[0] }}", "ssh-ed25519 AAAA a@b"),
            ("{{ ds.meta_data.network.version + 1 }}", "3"),
            ("{% if ds.meta_data.nothere %}a{% else %}b{% endif %}", "b"),
            ("{{ ds.meta_data.nothere | default('dflt') }}", "dflt"),
            ("{{ 1 == 1 }} {{ none }}", "True None"),
            (
                "{% for k in ds.meta_data.network %}{{ k }}{% endfor %}",
                "version",
            ),
        ];
        for (t, want) in table {
            let got = r(&format!("## template: jinja\n{t}")).unwrap();
            assert_eq!(got.text, *want, "{t}");
            assert!(got.missing.is_empty(), "{t}");
        }
    }

    #[test]
    fn header_trailing_newline_and_trim_blocks() {
        let got = r("\n  ## Template: JINJA \n#cloud-config\n{% if true %}\nhostname: {{ local_hostname }}\n{% endif %}\n").unwrap();
        assert_eq!(got.text, "#cloud-config\nhostname: node-1\n");
        assert_eq!(r("#cloud-config\n"), Err(JinjaError::NoHeader));
        assert_eq!(r("## template: jinja2\nx"), Err(JinjaError::NoHeader));
        assert!(is_header("##template:jinja"));
        assert!(is_header("##  Template:   Jinja  "));
        assert!(!is_header("###template: jinja"));
        assert!(!is_header("## template: jinja2"));
        assert!(!is_header("# template: jinja"));
    }

    #[test]
    fn missing_variables_print_cloud_inits_marker() {
        let got =
            r("## template: jinja\na {{ nothere }} b {{ ds.meta_data.nokey }} {{ nothere }}\n")
                .unwrap();
        assert_eq!(
            got.text,
            "a CI_MISSING_JINJA_VAR/nothere b CI_MISSING_JINJA_VAR/nokey CI_MISSING_JINJA_VAR/nothere\n"
        );
        assert_eq!(got.missing, ["nothere", "nokey"]);
    }

    #[test]
    fn errors_name_the_line_of_the_part() {
        let e = r("## template: jinja\n#cloud-config\nhostname: {{ local_hostname \n").unwrap_err();
        assert!(matches!(e, JinjaError::Syntax { line: 3, .. }), "{e:?}");
        let e = r("## template: jinja\n\n{% for x in y %}\n").unwrap_err();
        assert!(matches!(e, JinjaError::Syntax { .. }), "{e:?}");
        // An attribute of an undefined value fails, as in cloud-init.
        let e = r("## template: jinja\na\n{{ nothere.x }}\n").unwrap_err();
        assert!(matches!(e, JinjaError::Render { line: 3, .. }), "{e:?}");
    }

    #[test]
    fn rendering_is_bounded() {
        let e = r("## template: jinja\n{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}").unwrap_err();
        assert!(matches!(e, JinjaError::Render { .. }), "{e:?}");
        let e = r("## template: jinja\n{{ 'x' * 20000000 }}").unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e:?}");
    }
}
