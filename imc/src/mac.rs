//! MAC addresses as VMware writes them (`00:50:56:a6:8c:08`).

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// A 48-bit MAC address. Displays in the lower-case colon form cloud-init matches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MacAddr(pub [u8; 6]);

/// Why a MAC address was rejected, with the accepted forms.
const MAC_FORMS: &str =
    "not a mac address; use six hex pairs separated by : or -, such as 00:50:56:a6:8c:08";

impl FromStr for MacAddr {
    type Err = &'static str;

    /// Accepts `:` or `-` separators (one kind throughout), hex digits in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let sep = if s.contains('-') { '-' } else { ':' };
        let mut bytes = [0u8; 6];
        let mut parts = s.split(sep);
        for byte in &mut bytes {
            let part = parts.next().ok_or(MAC_FORMS)?;
            if part.len() != 2 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(MAC_FORMS);
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| MAC_FORMS)?;
        }
        if parts.next().is_some() {
            return Err(MAC_FORMS);
        }
        Ok(MacAddr(bytes))
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Built in a buffer and written at once (this runs on every boot): `xx:xx:...:xx`.
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = [b':'; 17];
        for (i, byte) in self.0.iter().enumerate() {
            text[3 * i] = HEX[usize::from(byte >> 4)];
            text[3 * i + 1] = HEX[usize::from(byte & 0xf)];
        }
        f.write_str(std::str::from_utf8(&text).expect("hex digits and colons are ASCII"))
    }
}

impl Serialize for MacAddr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_both_separators_and_any_case() {
        for s in ["00:50:56:A6:8C:08", "00-50-56-a6-8c-08"] {
            assert_eq!(
                s.parse::<MacAddr>().unwrap().to_string(),
                "00:50:56:a6:8c:08"
            );
        }
    }

    #[test]
    fn displays_every_digit() {
        let mac = MacAddr([0x01, 0x23, 0x45, 0x67, 0x89, 0xab]);
        assert_eq!(mac.to_string(), "01:23:45:67:89:ab");
        assert_eq!(
            MacAddr([0xcd, 0xef, 0xf0, 0, 0xff, 0x10]).to_string(),
            "cd:ef:f0:00:ff:10"
        );
    }

    #[test]
    fn rejects_malformed() {
        for s in [
            "",
            "00:50:56:a6:8c",
            "00:50:56:a6:8c:08:09",
            "00:50-56:a6:8c:08",
            "0:50:56:a6:8c:08",
            "+0:50:56:a6:8c:08",
        ] {
            assert!(s.parse::<MacAddr>().is_err(), "{s}");
        }
    }
}
