//! User-data bytes: gzip, MIME multipart (mailparse) and first-line typing, then the whole
//! read with the same bytes as vendor-data.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcust::test_api::{parts, userdata};

fuzz_target!(|data: &[u8]| {
    if parts::read(data, &vmcust::test_api::jinja::Vars::empty()).is_ok() {
        let _ = userdata::read(data, Some(data));
    }
});
