//! Guestinfo values: the first byte picks the `.encoding`, the rest is the raw value; the
//! decoded text goes through the metadata reader (JSON or YAML, network config included)
//! and into a customization.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcust::test_api::encoding::{Encoding, decode, normalize};
use vmcust::test_api::metadata;

const KEY: &str = "guestinfo.metadata";

fuzz_target!(|data: &[u8]| {
    let Some((&selector, raw)) = data.split_first() else {
        return;
    };
    let name = ["", "base64", "b64", "gzip+base64", "gz+b64", "other"][usize::from(selector) % 6];
    let Ok(Some(value)) = normalize(KEY, raw) else {
        return;
    };
    let Ok(encoding) = Encoding::parse(KEY, Some(name)) else {
        return;
    };
    let Ok(bytes) = decode(KEY, encoding, &value) else {
        return;
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return;
    };
    if let Ok(md) = metadata::parse(KEY, text) {
        let _ = metadata::network(KEY, &md);
        // The whole customization: host name and FQDN length, SSH keys (type, base64 and
        // the blob's own type field), each refused with a bounded message.
        if let Err(e) = metadata::customization(KEY, &md) {
            assert!(e.to_string().len() < 2048, "{} bytes", e.to_string().len());
        }
    }
});
