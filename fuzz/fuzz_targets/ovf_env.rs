//! The OVF environment document: any bytes give a document or a short error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match vmcust_ovf::parse(data) {
        Ok(env) => {
            let _ = env.property("password");
        }
        Err(e) => assert!(e.to_string().len() < 1024, "{} bytes", e.to_string().len()),
    }
});
