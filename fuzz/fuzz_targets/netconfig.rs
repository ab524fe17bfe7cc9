//! Network config v1/v2: a JSON or YAML document translated as the metadata `network` key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcust::test_api::{metadata, netconfig};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(map) = metadata::load_json_or_yaml("guestinfo.metadata", text) {
        let _ = netconfig::translate(&serde_norway::Value::Mapping(map));
    }
});
