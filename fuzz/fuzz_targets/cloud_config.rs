//! cloud-config: a YAML document read with lines, merged over itself as vendor-data, and
//! validated through the module registry; the JSON view of the result is built too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcust::test_api::merge::{Mergers, merge};
use vmcust::test_api::{document, node, redact};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(n) = node::parse(text, 0) {
        let _ = redact::to_json("", &n);
        let (cfg, _problems) = document::from_node(&n);
        let _ = serde_json::to_string(&cfg);
        // cloud-init's mergers, with the document as vendor-data under itself.
        let _ = merge(n.clone(), n, &Mergers::vendor());
    }
});
