//! The JSON view of a raw [`Node`] with every secret replaced by `"<redacted>"`: password
//! fields (`passwd`, `hashed_passwd`, `password`, `plain_text_passwd`) anywhere, and
//! everything under `chpasswd` but its `expire`, and every `*_private` value (the private
//! host keys of `ssh_keys`). The only way a raw node is printed.

use serde_json::{json, Map, Value as Json};

use super::node::{Node, Value};

/// Keys whose values are secret wherever they appear.
pub(crate) const SECRET_KEYS: &[&str] =
    &["passwd", "hashed_passwd", "password", "plain_text_passwd"];

/// The placeholder shown instead of a secret.
pub(crate) const REDACTED: &str = "<redacted>";

/// `node` as JSON, secrets replaced; `key` is the key it sits under (the top-level key
/// for a module's value).
pub fn to_json(key: &str, node: &Node) -> Json {
    if SECRET_KEYS.contains(&key) || key.ends_with("_private") {
        return json!(REDACTED);
    }
    if key == "chpasswd" {
        return match &node.value {
            Value::Map(m) => Json::Object(
                m.iter()
                    .map(|(k, v)| {
                        let shown = if k.text == "expire" {
                            plain(v)
                        } else {
                            json!(REDACTED)
                        };
                        (k.text.clone(), shown)
                    })
                    .collect(),
            ),
            _ => json!(REDACTED),
        };
    }
    match &node.value {
        Value::Seq(items) => Json::Array(items.iter().map(|n| to_json("", n)).collect()),
        Value::Map(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                out.insert(k.text.clone(), to_json(&k.text, v));
            }
            Json::Object(out)
        }
        _ => plain(node),
    }
}

/// A scalar (or a tree without secret keys) as JSON.
fn plain(node: &Node) -> Json {
    match &node.value {
        Value::Null => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::Str(s) => json!(s),
        Value::Binary(b) => json!(format!("<{} bytes of binary data>", b.len())),
        Value::Seq(_) | Value::Map(_) => to_json("", node),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::node::parse;

    #[test]
    fn secrets_are_redacted_wherever_they_are() {
        let doc = "users:\n- name: a\n  passwd: HASH1\n  hashed_passwd: HASH2\n  plain_text_passwd: PLAIN\n  groups: [x]\nchpasswd:\n  expire: false\n  list: |\n    root:SECRET3\n  users:\n  - {name: b, password: SECRET4}\npassword: SECRET5\nssh_keys: {rsa_private: SECRET6}\n";
        let n = parse(doc, 0).unwrap();
        let mut all = String::new();
        for (k, v) in n.as_map().unwrap() {
            all.push_str(&to_json(&k.text, v).to_string());
        }
        for s in [
            "HASH1", "HASH2", "PLAIN", "SECRET3", "SECRET4", "SECRET5", "SECRET6",
        ] {
            assert!(!all.contains(s), "{s} in {all}");
        }
        assert!(
            all.contains("\"expire\":false") && all.contains("\"groups\":[\"x\"]"),
            "{all}"
        );
        let n = parse("chpasswd: 'root:x'\n", 0).unwrap();
        assert_eq!(
            to_json("chpasswd", n.get("chpasswd").unwrap()),
            json!(REDACTED)
        );
    }
}
