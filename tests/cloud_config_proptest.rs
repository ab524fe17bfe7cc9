//! Property tests of the user-data readers: arbitrary bytes never panic the parts reader,
//! the YAML reader or the whole read; MIME messages and gzip built from random parts come
//! back part for part; any JSON document (JSON is YAML) reads back as the same tree.

use std::io::Write as _;

use base64::Engine as _;
use proptest::prelude::*;

use vmcust::test_api::modules::Frequency;
use vmcust::test_api::node;
use vmcust::test_api::redact;
use vmcust::test_api::userdata;
use vmcust::test_api::{parts, parts::PartKind};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A part: its content type, its body (starting as that type must), and its kind.
fn part() -> impl Strategy<Value = (String, String, PartKind)> {
    let body = "[a-zA-Z0-9 =:_./-]{0,40}(\n[a-zA-Z0-9 =:_./-]{0,40}){0,4}";
    (0..5usize, body).prop_map(|(k, text)| match k {
        0 => (
            "text/cloud-config".into(),
            format!("#cloud-config\n# {text}\n"),
            PartKind::CloudConfig,
        ),
        1 => (
            "text/x-shellscript".into(),
            format!("#!/bin/sh\n# {text}\n"),
            PartKind::Script,
        ),
        2 => (
            "text/x-shellscript-per-boot".into(),
            format!("#!/bin/sh\n{text}\n"),
            PartKind::ScriptPer(Frequency::PerBoot),
        ),
        3 => (
            "text/cloud-boothook".into(),
            format!("#cloud-boothook\n{text}\n"),
            PartKind::Boothook,
        ),
        _ => (
            "text/plain".into(),
            format!("#!/bin/bash\n{text}\n"),
            PartKind::Script,
        ),
    })
}

/// JSON values without floats (whose text YAML and JSON round differently).
fn json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        "[ -~]{0,20}".prop_map(serde_json::Value::from),
        "\\PC{0,8}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_parts_reader_never_panics(raw in proptest::collection::vec(any::<u8>(), 0..1024)) {
        let _ = parts::read(&raw, &vmcust::test_api::jinja::Vars::empty());
        let mut mime = b"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\n".to_vec();
        mime.extend_from_slice(&raw);
        let _ = parts::read(&mime, &vmcust::test_api::jinja::Vars::empty());
        let _ = parts::read(&gzip(&raw), &vmcust::test_api::jinja::Vars::empty());
    }

    #[test]
    fn mime_and_gzip_round_trip_part_for_part(
        ps in proptest::collection::vec((part(), any::<bool>()), 1..8),
        compress in any::<bool>(),
    ) {
        let mut msg = String::from("Content-Type: multipart/mixed; boundary=\"==BOUNDARY==\"\nMIME-Version: 1.0\n\n");
        for ((ctype, body, _), b64) in &ps {
            msg.push_str(&format!("--==BOUNDARY==\nContent-Type: {ctype}\n"));
            if *b64 {
                let enc = base64::engine::general_purpose::STANDARD.encode(body);
                msg.push_str(&format!("Content-Transfer-Encoding: base64\n\n{enc}\n"));
            } else {
                msg.push_str(&format!("\n{body}\n"));
            }
        }
        msg.push_str("--==BOUNDARY==--\n");
        let data = if compress { gzip(msg.as_bytes()) } else { msg.clone().into_bytes() };
        let got = parts::read(&data, &vmcust::test_api::jinja::Vars::empty()).unwrap();
        prop_assert_eq!(got.len(), ps.len());
        for (g, ((_, body, kind), _)) in got.iter().zip(&ps) {
            prop_assert_eq!(g.kind, *kind);
            // The line break before a boundary belongs to the boundary (RFC 2046).
            prop_assert_eq!(&g.body[..], body.as_bytes());
        }
    }

    #[test]
    fn the_yaml_reader_never_panics(text in "[-\\[\\]{}:,&*!|>'\"#%@`?~ a-z0-9\n]{0,400}") {
        if let Ok(n) = node::parse(&text, 0) {
            let _ = redact::to_json("", &n);
        }
        let doc = format!("#cloud-config\n{text}");
        let _ = userdata::read(doc.as_bytes(), Some(doc.as_bytes()));
    }

    #[test]
    fn any_json_document_reads_back_as_the_same_tree(v in json()) {
        let text = serde_json::to_string(&v).unwrap();
        let n = node::parse(&text, 0).unwrap();
        // The redacting view only hides values under password keys, which [a-z_]{1,8}
        // can spell; compare without them.
        let shown = redact::to_json("", &n);
        if !text.contains("passwd") && !text.contains("password") && !text.contains("chpasswd") {
            prop_assert_eq!(shown, v);
        }
    }
}
