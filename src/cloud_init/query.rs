//! The stand-in's `cloud-init query`: a key, `--all`, `--list-keys` or a `--format`
//! template answered from the instance data vmcust writes ([`super::instance_data`]),
//! root reading the sensitive file and other users the redacted one, with cloud-init's
//! messages and exit statuses.

use std::io::Write;

use clap::Args;
use serde_json::{Map, Value};

use super::instance_data;
use crate::cloud_config::jinja::{self, Vars};
use crate::root::Root;

/// `cloud-init query`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct QueryArgs {
    /// A dot-delimited key of the instance data (`v1.local_hostname`,
    /// `ds.meta_data.local_hostname`, `local_hostname`); a dashed key may be written with
    /// `_`.
    varname: Option<String>,
    /// Print the whole instance data as JSON.
    #[arg(short = 'a', long = "all")]
    all: bool,
    /// Print the keys of the mapping (the whole instance data, or VARNAME), one a line.
    #[arg(short = 'l', long = "list-keys")]
    list_keys: bool,
    /// Render TEMPLATE with the instance data, as Jinja user-data is rendered
    /// (`'{{ v1.local_hostname }}'`).
    #[arg(short = 'f', long = "format", value_name = "TEMPLATE")]
    format: Option<String>,
    /// Accepted as cloud-init does; only for its debug log.
    #[arg(short = 'd', long = "debug")]
    debug: bool,
}

/// The instance data as `query` shows it: the keys of `v1` also at the top level.
fn with_top_level_v1(tree: Value) -> Value {
    let Value::Object(mut m) = tree else {
        return tree;
    };
    if let Some(Value::Object(v1)) = m.get("v1").cloned() {
        for (k, v) in v1 {
            m.entry(k).or_insert(v);
        }
    }
    Value::Object(m)
}

/// `part` in `m`: the key itself, else a key whose `_` alias it is.
fn child<'a>(m: &'a Map<String, Value>, part: &str) -> Option<&'a Value> {
    m.get(part).or_else(|| {
        m.iter()
            .find(|(k, _)| jinja::alias(k).as_deref() == Some(part))
            .map(|(_, v)| v)
    })
}

fn sorted_json(v: &Value) -> String {
    String::from_utf8_lossy(&instance_data::to_json(v))
        .trim_end()
        .to_string()
}

/// Runs `cloud-init query` on `root` for a user who is root (`privileged`) or not.
pub(crate) fn run(
    args: &QueryArgs,
    root: &Root,
    privileged: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let _ = args.debug;
    if args.varname.is_none() && !args.all && !args.list_keys && args.format.is_none() {
        let _ = writeln!(
            err,
            "ERROR: Expected one of the options: --all, --format, --list-keys or varname"
        );
        return 1;
    }
    let (tree, warning) = match instance_data::read(root, privileged) {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(err, "ERROR: {e}");
            return 1;
        }
    };
    if let Some(w) = warning {
        let _ = writeln!(err, "WARNING: {w}");
    }
    if let Some(template) = &args.format {
        let vars = Vars::new(&tree);
        return match jinja::render(&format!("## template: jinja\n{template}"), &vars) {
            Ok(r) if !r.text.is_empty() => {
                let _ = writeln!(out, "{}", r.text);
                0
            }
            Ok(_) => 1,
            Err(e) => {
                let _ = writeln!(err, "ERROR: Failed to render templated data. {e}");
                1
            }
        };
    }
    let tree = with_top_level_v1(tree);
    let mut value = &tree;
    if let Some(name) = &args.varname {
        let mut walked = Vec::new();
        for part in name.split('.') {
            let found = match value {
                Value::Object(m) => child(m, part),
                _ => None,
            };
            match found {
                Some(v) => value = v,
                None if walked.is_empty() => {
                    let _ = writeln!(err, "ERROR: Undefined instance-data key '{name}'");
                    return 1;
                }
                None => {
                    let _ = writeln!(
                        err,
                        "ERROR: instance-data '{}' has no '{part}'",
                        walked.join(".")
                    );
                    return 1;
                }
            }
            walked.push(part);
        }
    }
    if args.list_keys {
        let Value::Object(m) = value else {
            let _ = writeln!(
                err,
                "ERROR: --list-keys provided but '{}' is not a dict",
                args.varname.as_deref().unwrap_or_default()
            );
            return 1;
        };
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort();
        for k in keys {
            let _ = writeln!(out, "{k}");
        }
        return 0;
    }
    let _ = match value {
        Value::String(s) => writeln!(out, "{s}"),
        other => writeln!(out, "{}", sorted_json(other)),
    };
    0
}
