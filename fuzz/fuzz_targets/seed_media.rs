//! Seed media: arbitrary bytes as an image (ISO9660 or vfat by their signatures), its
//! label and the seed files read as the config drive and NoCloud sources read them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcust::test_api::seed_media::{MAX_FILE_BYTES, Medium};

fuzz_target!(|data: &[u8]| {
    // The reader takes a path (a device at boot); one scratch file per fuzzing process.
    let path = std::env::temp_dir().join(format!("vmcust-fuzz-seed-{}", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(Some(mut m)) = Medium::open(&path, "fuzz") {
        for file in [
            "openstack/latest/meta_data.json",
            "openstack/latest/network_data.json",
            "meta-data",
            "user-data",
        ] {
            let _ = m.read(file, MAX_FILE_BYTES);
        }
    }
});
