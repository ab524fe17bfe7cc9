//! Netmasks: dotted (or full IPv6) masks and prefix lengths, turned into prefix lengths.
//! The one netmask parser of vmcust's crates: every source's netmask goes through it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

const V4_NOT_A_MASK: &str =
    "not a netmask; use a dotted mask such as 255.255.252.0 or a prefix length 0-32";
const V4_NOT_CONTIGUOUS: &str =
    "not a contiguous netmask; use a dotted mask such as 255.255.252.0 or a prefix length 0-32";
const V6_NOT_A_MASK: &str =
    "not an ipv6 netmask; use a prefix length 0-128 or a full mask such as ffff:ffff:ffff:ffff::";
const V6_NOT_CONTIGUOUS: &str = "not a contiguous ipv6 netmask; use a prefix length 0-128 or a full mask such as ffff:ffff:ffff:ffff::";

/// Parses an IPv4 `NETMASK`: a contiguous dotted mask or a prefix length 0-32.
pub fn ipv4_prefix(s: &str) -> Result<u8, &'static str> {
    if let Some(len) = prefix_length(s, 32) {
        return Ok(len);
    }
    let mask = u32::from(s.parse::<Ipv4Addr>().map_err(|_| V4_NOT_A_MASK)?);
    contiguous(mask.leading_ones(), mask.trailing_zeros(), 32).ok_or(V4_NOT_CONTIGUOUS)
}

/// Parses an `IPv6NETMASK|n`: a prefix length 0-128 or a contiguous full IPv6 mask.
pub fn ipv6_prefix(s: &str) -> Result<u8, &'static str> {
    if let Some(len) = prefix_length(s, 128) {
        return Ok(len);
    }
    let mask = u128::from(s.parse::<Ipv6Addr>().map_err(|_| V6_NOT_A_MASK)?);
    contiguous(mask.leading_ones(), mask.trailing_zeros(), 128).ok_or(V6_NOT_CONTIGUOUS)
}

/// The prefix length `mask` gives an address of `addr`'s family: [`ipv4_prefix`] or
/// [`ipv6_prefix`].
pub fn prefix_for(addr: IpAddr, mask: &str) -> Result<u8, &'static str> {
    match addr {
        IpAddr::V4(_) => ipv4_prefix(mask),
        IpAddr::V6(_) => ipv6_prefix(mask),
    }
}

/// A plain decimal prefix length not above `max`.
fn prefix_length(s: &str, max: u8) -> Option<u8> {
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<u8>().ok().filter(|&n| n <= max)
}

/// The prefix length if all ones are on the left: then ones and trailing zeros fill the mask.
fn contiguous(ones: u32, zeros: u32, bits: u32) -> Option<u8> {
    // `ones <= 128`, so the cast cannot truncate.
    (ones + zeros == bits).then_some(ones as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_family_picks_the_mask_rules() {
        let v4: IpAddr = "10.0.0.5".parse().unwrap();
        let v6: IpAddr = "fd00::5".parse().unwrap();
        let cases: [(IpAddr, &str, Result<u8, ()>); 6] = [
            (v4, "255.255.255.0", Ok(24)),
            (v4, "24", Ok(24)),
            (v4, "64", Err(())),
            (v6, "64", Ok(64)),
            (v6, "ffff:ffff:ffff:ffff::", Ok(64)),
            (v6, "255.255.255.0", Err(())),
        ];
        for (addr, mask, want) in cases {
            assert_eq!(
                prefix_for(addr, mask).map_err(|_| ()),
                want,
                "{addr} {mask}"
            );
        }
    }

    #[test]
    fn ipv4_masks_and_prefixes() {
        assert_eq!(ipv4_prefix("255.255.252.0"), Ok(22));
        assert_eq!(ipv4_prefix("0.0.0.0"), Ok(0));
        assert_eq!(ipv4_prefix("255.255.255.255"), Ok(32));
        assert_eq!(ipv4_prefix("24"), Ok(24));
        assert_eq!(ipv4_prefix("0"), Ok(0));
        assert!(ipv4_prefix("33").unwrap_err().starts_with("not a netmask"));
        assert!(ipv4_prefix("255.0.255.0")
            .unwrap_err()
            .starts_with("not a contiguous"));
        assert!(ipv4_prefix("").is_err());
    }

    #[test]
    fn ipv6_masks_and_prefixes() {
        assert_eq!(ipv6_prefix("64"), Ok(64));
        assert_eq!(ipv6_prefix("128"), Ok(128));
        assert_eq!(ipv6_prefix("ffff:ffff:ffff:ffff::"), Ok(64));
        assert_eq!(ipv6_prefix("::"), Ok(0));
        assert!(ipv6_prefix("129").is_err());
        assert!(ipv6_prefix("ffff::ffff")
            .unwrap_err()
            .starts_with("not a contiguous"));
    }
}
