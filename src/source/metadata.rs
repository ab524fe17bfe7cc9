//! Guestinfo metadata: a JSON or YAML mapping with `instance-id`, `local-hostname`, public
//! keys, a network config (v1/v2, optionally encoded), the redaction list and
//! `wait-on-network`, read as cloud-init's VMware datasource reads it.
//!
//! YAML is parsed with `serde_norway` (see `docs/guestinfo.md` for why). JSON is tried
//! first, then YAML; the root must be a mapping.

use serde_norway::{Mapping, Value};

use super::encoding::{self, DecodeError, Encoding};
use super::field::{field, host_and_domain};
use super::netconfig::{self, NetworkConfigError};
use crate::model::{Customization, Identity, InstanceId, InvalidValue, SshKey};

/// Keys that carry SSH public keys; the first one present wins.
pub(crate) const PUBLIC_KEY_KEYS: [&str; 4] = [
    "public-keys-data",
    "public_keys_data",
    "public-keys",
    "public_keys",
];

/// Why metadata could not be read. Messages name the key, not its content.
#[derive(Debug, thiserror::Error)]
pub enum MetadataError {
    /// The text is neither a JSON object nor a YAML mapping.
    #[error("{key}: not a json object or yaml mapping: {detail}")]
    Syntax {
        /// Where the document came from (e.g. `guestinfo.metadata`).
        key: String,
        /// The parser's complaint, with line and column when known.
        detail: String,
    },
    /// The document nests deeper than [`MAX_DEPTH`] (refused before parsing, since the YAML
    /// parser is slow on deep nesting and nothing real nests this deep).
    #[error("{key}: nested deeper than {MAX_DEPTH} levels; metadata is a flat mapping with a few nested lists and mappings")]
    TooDeep {
        /// Where the document came from.
        key: String,
    },
    /// A field has the wrong type.
    #[error("{key}: {field}: {detail}")]
    Field {
        /// Where the document came from.
        key: String,
        /// The metadata field.
        field: String,
        /// What was expected.
        detail: String,
    },
    /// The encoded `network` value could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A value is not usable (a host name with a newline, an unusable address…).
    #[error(transparent)]
    Invalid(#[from] InvalidValue),
    /// The network config could not be translated.
    #[error("{key}: {source}")]
    Network {
        /// Where the document came from.
        key: String,
        /// The cause.
        #[source]
        source: NetworkConfigError,
    },
}

/// `wait-on-network`: block until an address of these families exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WaitOnNetwork {
    /// Wait for an IPv4 address.
    pub ipv4: bool,
    /// Wait for an IPv6 address.
    pub ipv6: bool,
}

impl From<WaitOnNetwork> for crate::host::addresses::Wait {
    fn from(w: WaitOnNetwork) -> Self {
        crate::host::addresses::Wait {
            ipv4: w.ipv4,
            ipv6: w.ipv6,
        }
    }
}

/// Parsed metadata.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// `instance-id`.
    pub instance_id: Option<String>,
    /// `local-hostname`, else `hostname`: a host name or FQDN.
    pub local_hostname: Option<String>,
    /// SSH public keys, one per entry.
    pub public_keys: Vec<String>,
    /// The network config (decoded, still in v1/v2 form).
    pub network_config: Option<Value>,
    /// Guestinfo keys to clear after a successful read (`redact`, else `cleanup-guestinfo`),
    /// without the `guestinfo.` prefix.
    pub redact: Vec<String>,
    /// `wait-on-network`.
    pub wait_on_network: WaitOnNetwork,
    /// The whole mapping, `network` and `network.encoding` removed.
    pub raw: Mapping,
}

/// Deepest nesting of lists and mappings accepted in a metadata or network document.
/// serde_json stops at 128 anyway; the YAML fallback has no such bound and is quadratic.
pub(crate) const MAX_DEPTH: usize = 64;

/// Parses a JSON or YAML document whose root must be a mapping; empty text is an empty
/// mapping (cloud-init's `load_json_or_yaml`). A document nesting deeper than [`MAX_DEPTH`]
/// is refused before either parser sees it.
pub fn load_json_or_yaml(key: &str, text: &str) -> Result<Mapping, MetadataError> {
    if text.trim().is_empty() {
        return Ok(Mapping::new());
    }
    if nesting_depth(text) > MAX_DEPTH {
        return Err(MetadataError::TooDeep {
            key: key.to_string(),
        });
    }
    if let Ok(Value::Mapping(m)) = serde_json::from_str::<Value>(text) {
        return Ok(m);
    }
    match serde_norway::from_str::<Value>(text) {
        Ok(Value::Mapping(m)) => Ok(m),
        Ok(Value::Null) => Ok(Mapping::new()),
        Ok(other) => Err(MetadataError::Syntax {
            key: key.to_string(),
            detail: format!("the document is a {}, not a mapping", kind(&other)),
        }),
        Err(e) => Err(MetadataError::Syntax {
            key: key.to_string(),
            detail: cut_detail(&e.to_string()),
        }),
    }
}

/// A parser's message can quote the document; keep it to a line or two.
fn cut_detail(detail: &str) -> String {
    const MAX: usize = 240;
    match detail.char_indices().nth(MAX) {
        None => detail.to_owned(),
        Some((end, _)) => format!("{}… ({} bytes)", &detail[..end], detail.len()),
    }
}

/// An upper bound of how deep a JSON or YAML document nests, in one linear pass: flow
/// brackets (`[`, `{`) outside quoted strings, plus block nesting (indentation levels and
/// `- ` list markers). It may overestimate (a `[` inside a plain scalar counts), never
/// underestimate by much, which is what a cap needs.
pub(crate) fn nesting_depth(text: &str) -> usize {
    let mut deepest = 0;
    // Indentation of the enclosing block levels.
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    let mut quote: Option<u8> = None;
    for line in text.split('\n') {
        if flow == 0 && quote.is_none() {
            let indent = line.len() - line.trim_start_matches(' ').len();
            let rest = &line[indent..];
            if !rest.is_empty() && !rest.starts_with('#') {
                while indents.last().is_some_and(|&i| i >= indent) {
                    indents.pop();
                }
                indents.push(indent);
                // `- - - a` opens a list level per marker on one line.
                let markers = rest
                    .as_bytes()
                    .chunks(2)
                    .take_while(|c| *c == b"- " || *c == b"-")
                    .count();
                deepest = deepest.max(indents.len() + markers);
            }
        }
        // A quote opens a string only where a value starts (as in JSON, and YAML's quoted
        // scalars), so that `it's` in a plain scalar hides no bracket from the count.
        let mut at_value_start = true;
        let mut bytes = line.bytes();
        while let Some(b) = bytes.next() {
            match (quote, b) {
                (Some(b'"'), b'\\') => {
                    bytes.next();
                }
                (Some(q), _) if b == q => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') if at_value_start => quote = Some(b),
                (None, b'[' | b'{') => {
                    flow += 1;
                    deepest = deepest.max(indents.len() + flow);
                }
                (None, b']' | b'}') => flow = flow.saturating_sub(1),
                (None, b'#') if at_value_start => break,
                _ => {}
            }
            at_value_start = quote.is_none()
                && (b.is_ascii_whitespace()
                    || matches!(b, b'[' | b'{' | b',' | b':' | b'-' | b'?'));
        }
    }
    deepest
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Sequence(_) => "list",
        Value::Mapping(_) => "mapping",
        Value::Tagged(_) => "tagged value",
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Sequence(s) => !s.is_empty(),
        Value::Mapping(m) => !m.is_empty(),
        Value::Tagged(t) => truthy(&t.value),
    }
}

/// A scalar as text (strings, numbers and booleans); `None` for null or empty.
fn scalar(key: &str, field: &str, v: Option<&Value>) -> Result<Option<String>, MetadataError> {
    let s = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(other) => {
            return Err(MetadataError::Field {
                key: key.to_string(),
                field: field.to_string(),
                detail: format!("expected a string, found a {}", kind(other)),
            })
        }
    };
    Ok((!s.is_empty()).then_some(s))
}

fn bool_of(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => matches!(
            s.trim().to_ascii_lowercase().as_str(),
            "true" | "yes" | "on" | "y" | "1"
        ),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        _ => false,
    }
}

/// Parses metadata text read from `key`.
pub fn parse(key: &str, text: &str) -> Result<Metadata, MetadataError> {
    let mut raw = load_json_or_yaml(key, text)?;
    let network = raw.remove("network");
    let network_encoding = raw.remove("network.encoding");
    let network_config = match network {
        Some(Value::Mapping(m)) if !m.is_empty() => Some(Value::Mapping(m)),
        Some(Value::String(s)) if !s.trim().is_empty() => {
            let net_key = format!("{key}.network");
            let enc = scalar(key, "network.encoding", network_encoding.as_ref())?;
            let enc = Encoding::parse(&net_key, enc.as_deref())?;
            let bytes = encoding::decode(&net_key, enc, s.trim_end())?;
            let text = String::from_utf8(bytes).map_err(|_| DecodeError::NotUtf8 {
                key: net_key.clone(),
            })?;
            let m = load_json_or_yaml(&net_key, &text)?;
            (!m.is_empty()).then_some(Value::Mapping(m))
        }
        Some(Value::String(_) | Value::Mapping(_)) => None,
        Some(v) if truthy(&v) => {
            return Err(MetadataError::Field {
                key: key.to_string(),
                field: "network".into(),
                detail: format!(
                    "expected a mapping or an encoded string, found a {}",
                    kind(&v)
                ),
            })
        }
        _ => None,
    };
    let instance_id = scalar(key, "instance-id", raw.get("instance-id"))?;
    let local_hostname = match scalar(key, "local-hostname", raw.get("local-hostname"))? {
        Some(h) => Some(h),
        None => scalar(key, "hostname", raw.get("hostname"))?,
    };
    let public_keys = match PUBLIC_KEY_KEYS
        .iter()
        .find_map(|k| raw.get(*k).map(|v| (*k, v)))
    {
        Some((field, v)) => public_keys(key, field, v)?,
        None => Vec::new(),
    };
    let redact_value = raw
        .get("redact")
        .filter(|v| truthy(v))
        .or_else(|| raw.get("cleanup-guestinfo"));
    let redact = match redact_value {
        Some(v) if truthy(v) => strings(key, "redact", v)?
            .into_iter()
            .map(|k| k.strip_prefix("guestinfo.").unwrap_or(&k).to_string())
            .filter(|k| !k.is_empty())
            .collect(),
        _ => Vec::new(),
    };
    let wait_on_network = match raw.get("wait-on-network") {
        Some(Value::Mapping(m)) => WaitOnNetwork {
            ipv4: bool_of(m.get("ipv4")),
            ipv6: bool_of(m.get("ipv6")),
        },
        None | Some(Value::Null) => WaitOnNetwork::default(),
        Some(other) => {
            return Err(MetadataError::Field {
                key: key.to_string(),
                field: "wait-on-network".into(),
                detail: format!(
                    "expected a mapping such as {{ipv4: true}}, found a {}",
                    kind(other)
                ),
            })
        }
    };
    Ok(Metadata {
        instance_id,
        local_hostname,
        public_keys,
        network_config,
        redact,
        wait_on_network,
        raw,
    })
}

/// A string (one entry) or a list of strings.
fn strings(key: &str, field: &str, v: &Value) -> Result<Vec<String>, MetadataError> {
    match v {
        Value::Sequence(items) => items
            .iter()
            .map(|i| scalar(key, field, Some(i)))
            .filter_map(Result::transpose)
            .collect(),
        other => Ok(scalar(key, field, Some(other))?.into_iter().collect()),
    }
}

/// Public keys: a string is split into lines, a list taken as is, a mapping flattened.
fn public_keys(key: &str, field: &str, v: &Value) -> Result<Vec<String>, MetadataError> {
    let keys = match v {
        Value::String(s) => SshKey::lines_of(s).map(|(_, l)| l.to_string()).collect(),
        Value::Sequence(_) => strings(key, field, v)?,
        Value::Mapping(m) => {
            let mut out = Vec::new();
            for v in m.values() {
                match v {
                    Value::String(_) => out.extend(public_keys(key, field, v)?),
                    Value::Sequence(_) => out.extend(strings(key, field, v)?),
                    _ => {}
                }
            }
            out
        }
        Value::Null => Vec::new(),
        other => {
            return Err(MetadataError::Field {
                key: key.to_string(),
                field: field.to_string(),
                detail: format!(
                    "expected a string, list or mapping, found a {}",
                    kind(other)
                ),
            })
        }
    };
    Ok(keys)
}

/// Translates the network config of parsed metadata (see [`netconfig::translate`]).
pub fn network(key: &str, md: &Metadata) -> Result<netconfig::Translated, MetadataError> {
    match &md.network_config {
        Some(cfg) => netconfig::translate(cfg).map_err(|source| MetadataError::Network {
            key: key.to_string(),
            source,
        }),
        None => Ok(netconfig::Translated::default()),
    }
}

/// The customization parsed metadata asks for, with warnings about what was left out.
/// `key` names the document in messages (`guestinfo.metadata`, a file name).
pub fn customization(
    key: &str,
    md: &Metadata,
) -> Result<(Customization, Vec<String>), MetadataError> {
    let net = network(key, md)?;
    let (host_name, domain) = match md.local_hostname.as_deref() {
        Some(h) => {
            let (h, d) = host_and_domain(&format!("{key}: local-hostname"), h)?;
            (Some(h), d)
        }
        None => (None, None),
    };
    let instance_id = match &md.instance_id {
        Some(id) => Some(field(format!("{key}: instance-id"), InstanceId::parse(id))?),
        None => None,
    };
    let ssh_authorized_keys = md
        .public_keys
        .iter()
        .enumerate()
        .filter(|(_, k)| !SshKey::is_not_a_key(k))
        .map(|(i, k)| field(format!("{key}: public-keys[{i}]"), SshKey::parse(k)))
        .collect::<Result<_, _>>()?;
    let c = Customization {
        instance_id,
        identity: Identity {
            host_name,
            domain,
            ssh_authorized_keys,
            ..Default::default()
        },
        network: net.network,
        ..Default::default()
    };
    Ok((c, net.warnings))
}

#[cfg(test)]
mod tests {
    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let start = std::time::Instant::now();
        for text in [
            "[".repeat(200_000),
            format!("a: {}", "[".repeat(65)),
            format!("{}1{}", "{\"a\":".repeat(100), "}".repeat(100)),
            (0..100)
                .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                .collect::<String>(),
            format!("a:\n{}x\n", "- ".repeat(100)),
            format!("a: it's\nb: {}", "[".repeat(100)),
            format!("a: [{}]", "\"]\", [".repeat(100)),
        ] {
            let err = load_json_or_yaml("guestinfo.metadata", &text).unwrap_err();
            assert!(
                matches!(err, MetadataError::TooDeep { .. }),
                "{:.60}: {err}",
                text
            );
        }
        // Generous for a loaded machine; the YAML fallback took minutes on the first input.
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        for text in [
            "a: [1, [2, [3]]]\nb:\n  c:\n    - d: 'x[' \n",
            "{\"a\": \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"}",
            "# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\na: 1\n",
        ] {
            assert!(nesting_depth(text) <= MAX_DEPTH, "{text}");
            load_json_or_yaml("k", text).unwrap();
        }
    }

    use super::*;

    const KEY: &str = "guestinfo.metadata";

    #[test]
    fn json_and_yaml() {
        let j = parse(
            KEY,
            r#"{"instance-id": "cloud-vm", "local-hostname": "my-host.domain.com"}"#,
        )
        .unwrap();
        assert_eq!(j.instance_id.as_deref(), Some("cloud-vm"));
        assert_eq!(j.local_hostname.as_deref(), Some("my-host.domain.com"));
        // Tabs are fine in JSON but not as YAML indentation.
        let j = parse(KEY, "{\n\t\"instance-id\": \"x\"\n}").unwrap();
        assert_eq!(j.instance_id.as_deref(), Some("x"));
        let y = parse(KEY, "instance-id: cloud-vm\nhostname: h\n").unwrap();
        assert_eq!(y.local_hostname.as_deref(), Some("h"));
        assert!(parse(KEY, "").unwrap().raw.is_empty());
        assert!(parse(KEY, "# only a comment\n").unwrap().raw.is_empty());
    }

    #[test]
    fn malformed_documents_name_the_key() {
        for text in [
            "[This is not json or yaml format]a=b",
            "- a\n- b\n",
            "42",
            "a: [1,\n",
        ] {
            let e = parse(KEY, text).unwrap_err().to_string();
            assert!(
                e.starts_with("guestinfo.metadata: not a json object"),
                "{text}: {e}"
            );
        }
        let e = parse(KEY, "instance-id: [a]\n").unwrap_err().to_string();
        assert_eq!(
            e,
            "guestinfo.metadata: instance-id: expected a string, found a list"
        );
    }

    #[test]
    fn public_keys_forms() {
        let cases = [
            (
                "public-keys-data: \"ssh-rsa A\\nssh-ed25519 B\\n\"",
                vec!["ssh-rsa A", "ssh-ed25519 B"],
            ),
            ("public_keys: ssh-rsa A", vec!["ssh-rsa A"]),
            (
                "public-keys: [ssh-rsa A, ssh-rsa B]",
                vec!["ssh-rsa A", "ssh-rsa B"],
            ),
            (
                "public_keys: {a: ssh-rsa A, b: [ssh-rsa B], c: ''}",
                vec!["ssh-rsa A", "ssh-rsa B"],
            ),
            (
                "public-keys-data: ssh-rsa FIRST\npublic_keys: ssh-rsa SECOND",
                vec!["ssh-rsa FIRST"],
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(KEY, text).unwrap().public_keys, want, "{text}");
        }
    }

    #[test]
    fn redact_lists() {
        let cases = [
            (
                "redact: [userdata, guestinfo.vendordata]",
                vec!["userdata", "vendordata"],
            ),
            ("redact: metadata", vec!["metadata"]),
            ("cleanup-guestinfo: [userdata]", vec!["userdata"]),
            (
                "redact: []\ncleanup-guestinfo: [userdata]",
                vec!["userdata"],
            ),
            ("redact: false", vec![]),
            ("other: 1", vec![]),
        ];
        for (text, want) in cases {
            assert_eq!(parse(KEY, text).unwrap().redact, want, "{text}");
        }
    }

    #[test]
    fn encoded_network() {
        use base64::Engine;
        let net = "version: 2\nethernets:\n  e:\n    match: {macaddress: '00:50:56:00:00:01'}\n    dhcp4: true\n";
        let b64 = base64::engine::general_purpose::STANDARD.encode(net);
        let md = parse(KEY, &format!("network: {b64}\nnetwork.encoding: base64\n")).unwrap();
        assert!(md.raw.get("network").is_none());
        assert!(md.raw.get("network.encoding").is_none());
        let t = network(KEY, &md).unwrap();
        assert_eq!(t.network.unwrap().interfaces.len(), 1);
        let e = parse(KEY, "network: '%%%'\nnetwork.encoding: base64\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("guestinfo.metadata.network: not valid base64"),
            "{e}"
        );
        let e = parse(KEY, "network: 'abc'\nnetwork.encoding: rot13\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown encoding"), "{e}");
        // An empty network falls back to no network change.
        assert!(parse(KEY, "network: {}\n")
            .unwrap()
            .network_config
            .is_none());
        assert!(parse(KEY, "network: ''\n")
            .unwrap()
            .network_config
            .is_none());
    }

    #[test]
    fn wait_on_network() {
        let md = parse(KEY, "wait-on-network: {ipv4: true, ipv6: 'false'}").unwrap();
        assert_eq!(
            md.wait_on_network,
            WaitOnNetwork {
                ipv4: true,
                ipv6: false
            }
        );
        assert!(parse(KEY, "wait-on-network: ipv4").is_err());
    }
}
