//! What kind of document a file that failed to parse looks like, so that a cust.cfg given
//! to `--ovf`, an OVF environment given as a spec or guestinfo metadata given to either
//! gets a hint to use the right option rather than only a parse error.
//!
//! Only a hint: it is asked after the parse has failed, and looks at the first lines.

/// The kinds of document vmcust reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A vSphere customization spec: INI with `[SECTION]` headers.
    CustCfg,
    /// An OVF environment document (`<Environment ...>`), or other XML.
    OvfEnvironment,
    /// Guestinfo (cloud-init) metadata: a JSON object or YAML `key: value` lines.
    Metadata,
}

/// How much of the file is looked at.
const HEAD: usize = 4096;

/// What `bytes` looks like, if any kind at all.
pub(crate) fn sniff(bytes: &[u8]) -> Option<Kind> {
    let head = &bytes[..bytes.len().min(HEAD)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let text = String::from_utf8_lossy(head);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))?;
    if first.starts_with('<') {
        return Some(Kind::OvfEnvironment);
    }
    if first.starts_with('{') || first == "---" {
        return Some(Kind::Metadata);
    }
    let is_header = first
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .is_some_and(|name| {
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'|'))
        });
    if is_header {
        return Some(Kind::CustCfg);
    }
    // A YAML mapping key such as `instance-id:` or `local-hostname: web`.
    let (key, rest) = first.split_once(':')?;
    let yaml_key = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && (rest.is_empty() || rest.starts_with(' '));
    yaml_key.then_some(Kind::Metadata)
}

/// The hint for a file that failed to parse as `expected`, when it looks like another kind.
pub(crate) fn hint(bytes: &[u8], expected: Kind) -> Option<&'static str> {
    let found = sniff(bytes).filter(|k| *k != expected)?;
    Some(match found {
        Kind::OvfEnvironment => "this looks like an OVF environment (ovf-env.xml); use --ovf FILE",
        Kind::CustCfg => {
            "this looks like a vSphere customization spec (cust.cfg); give it as FILE or --imc FILE"
        }
        Kind::Metadata => {
            "this looks like guestinfo metadata (JSON or YAML); save it as guestinfo.metadata in a directory and use --guestinfo-dir DIR"
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let rows: &[(&str, Option<Kind>)] = &[
            ("[NETWORK]\nHOSTNAME = web\n", Some(Kind::CustCfg)),
            (
                "# a spec\n\n[NIC-CONFIG]\nNICS = NIC1\n",
                Some(Kind::CustCfg),
            ),
            ("\u{feff}[MISC]\r\n", Some(Kind::CustCfg)),
            (
                "<?xml version=\"1.0\"?>\n<Environment/>\n",
                Some(Kind::OvfEnvironment),
            ),
            ("  <Environment xmlns=\"x\">", Some(Kind::OvfEnvironment)),
            ("{\"instance-id\": \"i\"}", Some(Kind::Metadata)),
            (
                "instance-id: i\nlocal-hostname: web\n",
                Some(Kind::Metadata),
            ),
            ("---\nnetwork:\n  version: 2\n", Some(Kind::Metadata)),
            ("#cloud-config\nnetwork:\n", Some(Kind::Metadata)),
            ("HOSTNAME = web\n", None),
            ("[\"a\", \"b\"]", None),
            ("", None),
            ("\u{0}\u{1}binary", None),
        ];
        for (text, want) in rows {
            assert_eq!(sniff(text.as_bytes()), *want, "{text:?}");
        }
    }

    #[test]
    fn hints_only_for_another_kind() {
        let ovf = b"<?xml version=\"1.0\"?>\n<Environment/>\n";
        assert!(hint(ovf, Kind::CustCfg).unwrap().contains("use --ovf"));
        assert_eq!(hint(ovf, Kind::OvfEnvironment), None);
        let spec = b"[NETWORK]\nHOSTNAME = web\n";
        assert!(hint(spec, Kind::OvfEnvironment).unwrap().contains("--imc"));
        assert_eq!(hint(spec, Kind::CustCfg), None);
        assert!(hint(b"{}", Kind::CustCfg)
            .unwrap()
            .contains("--guestinfo-dir"));
    }
}
