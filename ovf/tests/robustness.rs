//! Property tests: arbitrary or mutated input never panics the parser or the ISO reader.

mod common;

use std::io::Cursor;
use std::sync::OnceLock;

use proptest::prelude::*;
use vmcust_ovf::{parse, read_ovf_env, IsoLimits};

const DOC: &str = r#"<?xml version="1.0"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1"
  xmlns:oe="http://schemas.dmtf.org/ovf/environment/1"
  xmlns:ve="http://www.vmware.com/schema/ovfenv" oe:id="a" ve:vCenterId="vm-1">
  <PlatformSection><Kind>ESXi</Kind><Locale>en</Locale></PlatformSection>
  <PropertySection><Property oe:key="k" oe:value="v&#10;w"/></PropertySection>
  <Entity oe:id="e"><PropertySection><Property key="x" value="y"/></PropertySection></Entity>
  <ve:EthernetAdapterSection><ve:Adapter ve:mac="m" ve:unitNumber="3"/></ve:EthernetAdapterSection>
</Environment>"#;

/// One small real image (Rock Ridge and Joliet), built once for all cases.
fn image() -> &'static [u8] {
    static IMAGE: OnceLock<Vec<u8>> = OnceLock::new();
    IMAGE.get_or_init(|| {
        common::build_iso(
            "xorriso",
            &["-J", "-R", "-V", "OVF-TRANSPORT"],
            &[("ovf-env.xml", DOC.as_bytes())],
        )
    })
}

fn mutate(base: &[u8], edits: &[(usize, u8)]) -> Vec<u8> {
    let mut bytes = base.to_vec();
    for &(at, value) in edits {
        let len = bytes.len();
        bytes[at % len] = value;
    }
    bytes
}

proptest! {
    #[test]
    fn parse_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn parse_never_panics_on_mutated_documents(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..16),
    ) {
        let _ = parse(&mutate(DOC.as_bytes(), &edits));
    }

    #[test]
    fn iso_reader_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..40_000)) {
        let _ = read_ovf_env(&mut Cursor::new(&bytes), &IsoLimits::default());
    }

    #[test]
    fn iso_reader_never_panics_behind_a_valid_signature(
        bytes in proptest::collection::vec(any::<u8>(), 36_864..50_000),
        block_size in prop_oneof![Just(512u16), Just(1024), Just(2048), any::<u16>()],
    ) {
        // Get past the CD001 check so the descriptor and directory code sees the noise.
        let mut bytes = bytes;
        bytes[32_768..32_774].copy_from_slice(b"\x01CD001");
        bytes[32_768 + 128..32_768 + 130].copy_from_slice(&block_size.to_le_bytes());
        let _ = read_ovf_env(&mut Cursor::new(&bytes), &IsoLimits::default());
    }

    #[test]
    fn iso_reader_never_panics_on_mutated_images(
        // Descriptors and the root directories live in the first few dozen sectors.
        edits in proptest::collection::vec((16 * 2048..48 * 2048usize, any::<u8>()), 1..32),
        far in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
    ) {
        let mut bytes = mutate(image(), &edits);
        bytes = mutate(&bytes, &far);
        let _ = read_ovf_env(&mut Cursor::new(&bytes), &IsoLimits::default());
    }
}
