//! OpenStack config drive documents: `meta_data.json` and `network_data.json` (the input
//! split at its first NUL byte), read into the model as at boot.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcust::test_api::{network_data, config_drive::meta_data};

fuzz_target!(|data: &[u8]| {
    let (md, nd) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, data),
    };
    let _ = meta_data("meta_data.json", md);
    let _ = network_data::translate(nd);
});
