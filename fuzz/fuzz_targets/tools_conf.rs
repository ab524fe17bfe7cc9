//! tools.conf with glib's key-file rules, and the script switch read from it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcust::test_api::keyfile::KeyFile;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = KeyFile::parse(data) {
        let _ = file.string("deployPkg", "enable-custom-scripts");
        let _ = file.boolean("deployPkg", "enable-customization");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = vmcust::test_api::gate::tools_conf_value(text);
    }
});
