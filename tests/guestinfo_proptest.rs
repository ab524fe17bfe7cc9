//! Property tests: arbitrary bytes never panic the guestinfo decoding, metadata parsing
//! and network translation paths; well-formed encodings always round-trip.

use std::io::Write;

use base64::Engine;
use proptest::prelude::*;

use vmcust::test_api::encoding::{decode, normalize, Encoding};
use vmcust::test_api::guestinfo_dir::GuestinfoDir;
use vmcust::test_api::{guestinfo, metadata};

fn encodings() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some("base64".to_string())),
        Just(Some("b64".to_string())),
        Just(Some("gzip+base64".to_string())),
        Just(Some("gz+b64".to_string())),
        Just(Some(String::new())),
        "[a-z+0-9]{0,12}".prop_map(Some),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decoding_never_panics(raw in proptest::collection::vec(any::<u8>(), 0..512), enc in encodings()) {
        if let Ok(Some(value)) = normalize("k", &raw) {
            if let Ok(e) = Encoding::parse("k.encoding", enc.as_deref()) {
                let _ = decode("k", e, &value);
            }
        }
    }

    #[test]
    fn metadata_parsing_never_panics(raw in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&raw);
        if let Ok(md) = metadata::parse("guestinfo.metadata", &text) {
            let _ = metadata::customization("guestinfo.metadata", &md);
        }
    }

    #[test]
    fn yamlish_metadata_never_panics(text in "(network|version|ethernets|config|type|match|macaddress|dhcp4|addresses|routes|to|via|subnets|redact|public_keys|[:{}\\[\\], \\n-]|[0-9a-f./]){0,200}") {
        if let Ok(md) = metadata::parse("guestinfo.metadata", &text) {
            let _ = metadata::customization("guestinfo.metadata", &md);
        }
    }

    #[test]
    fn whole_read_never_panics(md in proptest::collection::vec(any::<u8>(), 0..256),
                               ud in proptest::collection::vec(any::<u8>(), 0..256),
                               enc in encodings()) {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("guestinfo.metadata"), &md).unwrap();
        std::fs::write(d.path().join("guestinfo.userdata"), &ud).unwrap();
        if let Some(e) = &enc {
            std::fs::write(d.path().join("guestinfo.userdata.encoding"), e).unwrap();
        }
        let mut host = GuestinfoDir::new(d.path());
        let _ = guestinfo::read(&mut host);
    }

    #[test]
    fn encodings_round_trip(text in "\\PC{0,200}") {
        let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        prop_assert_eq!(decode("k", Encoding::Base64, &b64).unwrap(), text.as_bytes());
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        let gz = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
        prop_assert_eq!(decode("k", Encoding::GzipBase64, &gz).unwrap(), text.as_bytes());
    }
}
