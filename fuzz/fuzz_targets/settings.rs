//! vmcust's settings file: never fatal, whatever the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = vmcust::test_api::settings::parse(text, std::path::Path::new("/etc/vmcust/vmcust.conf"));
    }
});
