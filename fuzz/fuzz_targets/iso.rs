//! ISO9660 images: the label and the OVF environment file, bounded by the default limits.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use vmcust_ovf::{read_ovf_env, volume_label, IsoLimits};

fuzz_target!(|data: &[u8]| {
    let limits = IsoLimits::default();
    let _ = volume_label(&mut Cursor::new(data), &limits);
    if let Ok(Some(found)) = read_ovf_env(&mut Cursor::new(data), &limits) {
        let _ = vmcust_ovf::parse(&found.bytes);
    }
});
