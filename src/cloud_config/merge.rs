//! cloud-init's mergers (`cloudinit/mergers`), on [`Node`] trees.
//!
//! The merge of `old` with `new` is chosen by the type of `old`, as cloud-init's
//! `LookupMerger` does: a mapping merges by the `dict` rules, a list by the `list` rules,
//! a string by the `str` rules; any other value (number, boolean, null) stays `old`.
//!
//! Two sets of rules matter by default: the parts of one user-data are merged with
//! `dict(replace)+list()+str()` ([`Mergers::parts`]: a later part's key replaces an
//! earlier part's whole value), and vendor-data goes under the user-data with
//! `dict()+list()+str()` ([`Mergers::vendor`]: user-data wins, mappings merge key by key).
//! A part may ask for others with a `merge_how` key or a `Merge-Type` header.

use std::collections::HashMap;

use super::node::{Key, Node, Value};

/// The `dict` merger's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DictRules {
    /// `replace`: the new value of a key both have wins (else the old one does, but
    /// mappings under it are merged).
    pub replace: bool,
    /// `recurse_array` / `recurse_list`.
    pub recurse_array: bool,
    /// `recurse_str`.
    pub recurse_str: bool,
    /// `allow_delete`: a null new value removes the key.
    pub allow_delete: bool,
}

/// How a list merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListMethod {
    /// Index by index, the new entry winning (the default).
    #[default]
    Replace,
    /// Old entries, then new ones.
    Append,
    /// New entries, then old ones.
    Prepend,
    /// The old list as it is.
    NoReplace,
}

/// The `list` merger's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListRules {
    /// The method.
    pub method: ListMethod,
    /// `recurse_dict`.
    pub recurse_dict: bool,
    /// `recurse_array`.
    pub recurse_array: bool,
    /// `recurse_str`.
    pub recurse_str: bool,
}

/// A set of mergers; one left out keeps the old value of its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mergers {
    /// `dict(...)`.
    pub dict: Option<DictRules>,
    /// `list(...)`.
    pub list: Option<ListRules>,
    /// `str(...)`: `Some(true)` for `str(append)`.
    pub str_append: Option<bool>,
}

impl Mergers {
    /// `dict(replace)+list()+str()`: cloud-init's rule for the parts of one user-data.
    pub fn parts() -> Self {
        Mergers {
            dict: Some(DictRules {
                replace: true,
                ..DictRules::default()
            }),
            list: Some(ListRules::default()),
            str_append: Some(false),
        }
    }

    /// `list()+dict()+str()`: cloud-init's default (`mergemanydict`), vendor-data under
    /// user-data.
    pub fn vendor() -> Self {
        Mergers {
            dict: Some(DictRules::default()),
            list: Some(ListRules::default()),
            str_append: Some(false),
        }
    }

    /// A `merge_how` string such as `list(append)+dict(no_replace,recurse_list)+str()`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut m = Mergers {
            dict: None,
            list: None,
            str_append: None,
        };
        let mut any = false;
        for item in s.split('+') {
            let item = item.trim().to_ascii_lowercase().replace('-', "_");
            if item.is_empty() {
                continue;
            }
            let (name, opts) = item
                .strip_suffix(')')
                .and_then(|i| i.split_once('('))
                .ok_or_else(|| format!("{item:?} is not name(options), such as list(append)"))?;
            let opts: Vec<&str> = opts
                .split(',')
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .collect();
            m.set(name, &opts)?;
            any = true;
        }
        if !any {
            return Err("names no merger".into());
        }
        Ok(m)
    }

    /// Sets the merger `name` with `opts` (the list form of `merge_how` uses this too).
    pub fn set(&mut self, name: &str, opts: &[&str]) -> Result<(), String> {
        let known = |allowed: &[&str]| -> Result<(), String> {
            match opts.iter().find(|o| !allowed.contains(o)) {
                Some(o) => Err(format!(
                    "{name}({o}): unknown option; {name} takes {}",
                    allowed.join(", ")
                )),
                None => Ok(()),
            }
        };
        let has = |o: &str| opts.contains(&o);
        match name.strip_prefix("m_").unwrap_or(name) {
            "dict" => {
                known(&[
                    "replace",
                    "no_replace",
                    "recurse_array",
                    "recurse_list",
                    "recurse_str",
                    "allow_delete",
                ])?;
                self.dict = Some(DictRules {
                    // cloud-init takes the first of its MERGE_TYPES found: replace first.
                    replace: has("replace"),
                    recurse_array: has("recurse_array") || has("recurse_list"),
                    recurse_str: has("recurse_str"),
                    allow_delete: has("allow_delete"),
                });
            }
            "list" => {
                known(&[
                    "append",
                    "prepend",
                    "replace",
                    "no_replace",
                    "recurse_dict",
                    "recurse_array",
                    "recurse_list",
                    "recurse_str",
                ])?;
                let method = if has("append") {
                    ListMethod::Append
                } else if has("prepend") {
                    ListMethod::Prepend
                } else if has("replace") {
                    ListMethod::Replace
                } else if has("no_replace") {
                    ListMethod::NoReplace
                } else {
                    ListMethod::Replace
                };
                self.list = Some(ListRules {
                    method,
                    recurse_dict: has("recurse_dict"),
                    recurse_array: has("recurse_array") || has("recurse_list"),
                    recurse_str: has("recurse_str"),
                });
            }
            "str" => {
                known(&["append"])?;
                self.str_append = Some(has("append"));
            }
            other => {
                return Err(format!(
                    "{other:?} is not a merger; the mergers are dict, list and str"
                ))
            }
        }
        Ok(())
    }
}

/// `merge_how` in its list form: `[{name: list, settings: [append]}, ...]` or
/// `[[list, append], ...]`.
pub(crate) fn parse_list(items: &[Node]) -> Result<Mergers, String> {
    let mut m = Mergers {
        dict: None,
        list: None,
        str_append: None,
    };
    let words = |n: &Node| -> Result<Vec<String>, String> {
        match &n.value {
            Value::Seq(s) => s
                .iter()
                .map(|w| {
                    w.as_str()
                        .map(str::to_string)
                        .ok_or("settings are names".to_string())
                })
                .collect(),
            _ => Err("settings is a list of names".into()),
        }
    };
    for item in items {
        let (name, opts) = match &item.value {
            Value::Map(_) => {
                let name = item
                    .get("name")
                    .and_then(Node::as_str)
                    .ok_or("each merger has a name")?
                    .to_string();
                let opts = item
                    .get("settings")
                    .map(words)
                    .transpose()?
                    .unwrap_or_default();
                (name, opts)
            }
            Value::Seq(s) if !s.is_empty() => {
                let all = words(item)?;
                (all[0].clone(), all[1..].to_vec())
            }
            _ => return Err("each merger is {name: ..., settings: [...]}".into()),
        };
        let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
        m.set(&name.trim().replace('-', "_").to_ascii_lowercase(), &opts)?;
    }
    Ok(m)
}

/// Why two values could not merge (cloud-init would raise a `TypeError` and drop the
/// part).
pub(crate) type MergeError = String;

/// Merges `new` into `old` by the rules `m`.
pub fn merge(old: Node, new: Node, m: &Mergers) -> Result<Node, MergeError> {
    match old.value {
        Value::Map(_) => match m.dict {
            Some(d) => merge_dict(old, new, d, m),
            None => Ok(old),
        },
        Value::Seq(_) => match m.list {
            Some(l) => merge_list(old, new, l, m),
            None => Ok(old),
        },
        Value::Str(_) => match m.str_append {
            None | Some(false) => Ok(if m.str_append.is_some() { new } else { old }),
            Some(true) => match (&old.value, &new.value) {
                (Value::Str(a), Value::Str(b)) => {
                    let joined = format!("{a}{b}");
                    Ok(Node::new(Value::Str(joined), old.line, old.part))
                }
                _ => Err(format!("cannot append {} to a string", new.kind())),
            },
        },
        _ => Ok(old),
    }
}

fn merge_dict(old: Node, new: Node, d: DictRules, m: &Mergers) -> Result<Node, MergeError> {
    let (line, part) = (old.line, old.part);
    let Value::Map(entries) = old.value else {
        return Err("internal: dict merge of a non-mapping".into());
    };
    let Value::Map(with) = new.value else {
        // A mapping merged with anything else stays as it was.
        return Ok(Node::new(Value::Map(entries), line, part));
    };
    // Each key found through an index, a deleted one left as a hole until the end: a
    // lookup or a removal that walked the entries made merging two mappings quadratic.
    let mut index: HashMap<String, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (k.text.clone(), i))
        .collect();
    let mut slots: Vec<Option<(Key, Node)>> = entries.into_iter().map(Some).collect();
    for (k, v) in with {
        match index.get(&k.text).copied() {
            Some(i) => {
                if matches!(v.value, Value::Null) && d.allow_delete {
                    slots[i] = None;
                    index.remove(&k.text);
                    continue;
                }
                let Some((_, old_v)) = slots[i].as_mut() else {
                    return Err("internal: an indexed key was deleted".into());
                };
                if d.replace {
                    *old_v = v;
                } else {
                    let recurse = match v.value {
                        Value::Seq(_) => d.recurse_array,
                        Value::Str(_) => d.recurse_str,
                        Value::Map(_) => true,
                        _ => false,
                    };
                    if recurse {
                        let was = std::mem::replace(old_v, Node::new(Value::Null, line, part));
                        *old_v = merge(was, v, m)?;
                    }
                }
            }
            None => {
                index.insert(k.text.clone(), slots.len());
                slots.push(Some((k, v)));
            }
        }
    }
    let entries: Vec<(Key, Node)> = slots.into_iter().flatten().collect();
    Ok(Node::new(Value::Map(entries), line, part))
}

fn merge_list(old: Node, new: Node, l: ListRules, m: &Mergers) -> Result<Node, MergeError> {
    let (line, part) = (old.line, old.part);
    let Value::Seq(mut items) = old.value else {
        return Err("internal: list merge of a non-list".into());
    };
    let with = match new.value {
        Value::Seq(w) => w,
        _ if l.method == ListMethod::Replace => return Ok(new),
        other => return Err(format!("cannot merge {} into a list", other.kind())),
    };
    match l.method {
        ListMethod::Append => items.extend(with),
        ListMethod::Prepend => {
            let mut out = with;
            out.extend(items);
            items = out;
        }
        ListMethod::NoReplace => {}
        ListMethod::Replace => {
            for (i, new_v) in with.into_iter().enumerate().take(items.len()) {
                let recurse = match new_v.value {
                    Value::Seq(_) => l.recurse_array,
                    Value::Str(_) => l.recurse_str,
                    Value::Map(_) => l.recurse_dict,
                    _ => false,
                };
                items[i] = if recurse {
                    merge(items[i].clone(), new_v, m)?
                } else {
                    new_v
                };
            }
        }
    }
    Ok(Node::new(Value::Seq(items), line, part))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::node::parse;
    use crate::cloud_config::redact::to_json;

    fn run(a: &str, b: &str, m: &Mergers) -> String {
        let got = merge(parse(a, 0).unwrap(), parse(b, 1).unwrap(), m).unwrap();
        to_json("", &got).to_string()
    }

    /// Each row checked against cloud-init's mergers by reading their code
    /// (cloudinit/mergers/m_dict.py, m_list.py, m_str.py and `LookupMerger`).
    #[test]
    fn default_rules_table() {
        let parts = Mergers::parts();
        let vendor = Mergers::vendor();
        let table: &[(&str, &str, &Mergers, &str)] = &[
            // Parts: a later part's key replaces the whole value.
            (
                "{a: 1, b: [x]}",
                "{b: [y], c: 3}",
                &parts,
                r#"{"a":1,"b":["y"],"c":3}"#,
            ),
            (
                "{ntp: {enabled: true, servers: [a]}}",
                "{ntp: {servers: [b]}}",
                &parts,
                r#"{"ntp":{"servers":["b"]}}"#,
            ),
            (
                "{runcmd: [a, b]}",
                "{runcmd: [c]}",
                &parts,
                r#"{"runcmd":["c"]}"#,
            ),
            // Vendor under user: the user's value wins; mappings merge key by key.
            (
                "{a: 1, b: [x]}",
                "{a: 2, b: [y, z], c: 3}",
                &vendor,
                r#"{"a":1,"b":["x"],"c":3}"#,
            ),
            (
                "{ntp: {servers: [a]}}",
                "{ntp: {enabled: false, servers: [b]}}",
                &vendor,
                r#"{"ntp":{"servers":["a"],"enabled":false}}"#,
            ),
            (
                "{hostname: u}",
                "{hostname: v}",
                &vendor,
                r#"{"hostname":"u"}"#,
            ),
            ("{a: ~}", "{a: 5}", &vendor, r#"{"a":null}"#),
            // cloud-init's quirks, kept: a vendor mapping under a user string or list
            // wins (dict values always recurse, and str/list replace).
            ("{a: s}", "{a: {k: v}}", &vendor, r#"{"a":{"k":"v"}}"#),
            ("{a: [x]}", "{a: {k: v}}", &vendor, r#"{"a":{"k":"v"}}"#),
            ("{a: {k: v}}", "{a: s}", &vendor, r#"{"a":{"k":"v"}}"#),
        ];
        for (a, b, m, want) in table {
            assert_eq!(run(a, b, m), *want, "{a} + {b}");
        }
    }

    #[test]
    fn merge_how_options_table() {
        let table: &[(&str, &str, &str, &str)] = &[
            (
                "dict(no_replace,recurse_list)+list(append)",
                "{a: [1, 2]}",
                "{a: [3]}",
                r#"{"a":[1,2,3]}"#,
            ),
            (
                "dict(recurse_array)+list(prepend)",
                "{a: [1, 2]}",
                "{a: [3]}",
                r#"{"a":[3,1,2]}"#,
            ),
            (
                "dict(recurse_array)+list()",
                "{a: [1, 2]}",
                "{a: [3]}",
                r#"{"a":[3,2]}"#,
            ),
            (
                "dict(recurse_array)+list(no_replace)",
                "{a: [1, 2]}",
                "{a: [3]}",
                r#"{"a":[1,2]}"#,
            ),
            (
                "dict(recurse_str)+str(append)",
                "{a: x}",
                "{a: y}",
                r#"{"a":"xy"}"#,
            ),
            (
                "dict(replace,allow_delete)",
                "{a: 1, b: 2}",
                "{a: ~}",
                r#"{"b":2}"#,
            ),
            (
                "dict(replace)",
                "{a: [1]}",
                "{a: [2], b: 1}",
                r#"{"a":[2],"b":1}"#,
            ),
            ("list(append)", "{a: [1]}", "{a: [2]}", r#"{"a":[1]}"#),
        ];
        for (how, a, b, want) in table {
            let m = Mergers::parse(how).unwrap();
            assert_eq!(run(a, b, &m), *want, "{how}: {a} + {b}");
        }
        for bad in ["dict", "dict(sideways)", "tuple()", ""] {
            assert!(Mergers::parse(bad).is_err(), "{bad}");
        }
        let list = parse(
            "[{name: list, settings: [append]}, [dict, recurse_array]]",
            0,
        )
        .unwrap();
        let Value::Seq(items) = list.value else {
            panic!()
        };
        let m = parse_list(&items).unwrap();
        assert_eq!(m.list.unwrap().method, ListMethod::Append);
        assert!(m.dict.unwrap().recurse_array && m.str_append.is_none());
        let e = merge(
            parse("{a: x}", 0).unwrap(),
            parse("{a: [1]}", 0).unwrap(),
            &Mergers::parse("dict(recurse_array)+str(append)").unwrap(),
        );
        // Python: "x" + [1] raises TypeError, and cloud-init drops the part.
        assert!(e.is_err(), "{e:?}");
    }
}
