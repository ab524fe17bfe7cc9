//! Property tests: no input, however broken, makes the reader or the validator panic.

use proptest::prelude::*;
use vmcust_imc::{RawSpec, Spec};

/// Line fragments that exercise every branch of the reader and the validators.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[A-Z0-9|-]{0,6}".prop_map(|s| format!("[{s}]")),
        prop::sample::select(vec![
            "[NETWORK]",
            "[NIC-CONFIG]",
            "[NIC1]",
            "[NIC2]",
            "[DNS]",
            "[DATETIME]",
            "[PASSWORD]",
            "[MISC]",
            "[CUSTOM-SCRIPT]",
            "[CLOUDINIT]",
            "NICS = NIC1,NIC2",
            "NICS = NIC1",
            "MACADDR = 00:50:56:a6:8c:08",
            "PRIMARY = yes",
            "BOOTPROTO = static",
            "IPADDR = 10.0.0.1",
            "NETMASK = 255.255.0.0",
            "IPv6ADDR|1 = fc00::1",
            "IPv6NETMASK|1 = 64",
            "IPv6GATEWAY|2 = ::1",
            "NAMESERVER|1 = 1.1.1.1",
            "SUFFIX|2 = a.b",
            "-PASS = c2VjcmV0Cg==",
            "-PASS = ???",
            "HOSTNAME = h",
            "TIMEZONE = UTC",
            "# c",
            "  cont",
            "\u{feff}",
            "k:v",
            "=",
        ])
        .prop_map(str::to_owned),
        "[A-Za-z0-9|_-]{1,12} ?[=:] ?[ -~]{0,16}",
        any::<String>(),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = RawSpec::parse(&bytes);
        let _ = Spec::parse(&bytes);
    }

    #[test]
    fn line_soups_never_panic(lines in prop::collection::vec(line(), 0..40), crlf in any::<bool>()) {
        let text = lines.join(if crlf { "\r\n" } else { "\n" });
        let _ = RawSpec::parse(text.as_bytes());
        if let Err(e) = Spec::parse(text.as_bytes()) {
            let _ = e.to_string();
        }
    }
}
