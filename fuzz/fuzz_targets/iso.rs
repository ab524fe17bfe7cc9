//! ISO9660 images: the label and the OVF environment file, bounded by the default limits,
//! and the file's name found with the image limit lifted (as the boot looks at a big disc).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use vmcust_ovf::iso9660::ovf_env_name;
use vmcust_ovf::{read_ovf_env, volume_label, IsoLimits};

fuzz_target!(|data: &[u8]| {
    let limits = IsoLimits::default();
    let _ = volume_label(&mut Cursor::new(data), &limits);
    let lifted = IsoLimits {
        max_image_bytes: u64::MAX,
        ..limits
    };
    let _ = ovf_env_name(&mut Cursor::new(data), &lifted);
    if let Ok(Some(found)) = read_ovf_env(&mut Cursor::new(data), &limits) {
        let _ = vmcust_ovf::parse(&found.bytes);
    }
});
