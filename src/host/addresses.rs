//! Publishing the guest's default addresses to the host (`guestinfo.local-ipv4`,
//! `guestinfo.local-ipv6`), as cloud-init's VMware datasource does, but with a bounded wait.
//!
//! Which address (reference §4.9): the device of the default route of each family, if that
//! device has exactly one (non-link-local) address of the family. When only one family has a
//! default route, the device's single address of the other family is borrowed. IPv6 is
//! published as `addr/prefix`.

use std::net::IpAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use ipnet::IpNet;
use serde::Serialize;

use super::GuestRpc;

/// Key the IPv4 address is published under.
pub(crate) const LOCAL_IPV4: &str = "guestinfo.local-ipv4";
/// Key the IPv6 address is published under.
pub(crate) const LOCAL_IPV6: &str = "guestinfo.local-ipv6";

/// The longest wait for an address unless another is given (cloud-init waits forever).
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(30);

/// The addresses to publish.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct GuestAddresses {
    /// The default IPv4 address.
    pub ipv4: Option<String>,
    /// The default IPv6 address as `addr/prefix`.
    pub ipv6: Option<String>,
}

/// Which families to wait for (metadata `wait-on-network`); with neither, any address ends
/// the wait.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Wait {
    /// Wait for an IPv4 address.
    pub ipv4: bool,
    /// Wait for an IPv6 address.
    pub ipv6: bool,
}

impl Wait {
    /// The record the late stage reads (`state::WAIT_ON_NETWORK`): one family name
    /// a line, empty for "any address".
    pub(crate) fn record(self) -> String {
        let mut text = String::new();
        if self.ipv4 {
            text.push_str("ipv4\n");
        }
        if self.ipv6 {
            text.push_str("ipv6\n");
        }
        text
    }

    /// Reads [`Wait::record`]'s text back; a line it does not write is ignored.
    pub(crate) fn from_record(text: &str) -> Wait {
        Wait {
            ipv4: text.lines().any(|l| l.trim() == "ipv4"),
            ipv6: text.lines().any(|l| l.trim() == "ipv6"),
        }
    }
}

/// What [`publish`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Published {
    /// The addresses sent to the host.
    pub addresses: GuestAddresses,
    /// Whether the wait ran out before the wanted addresses existed.
    pub timed_out: bool,
    /// Failures to set a key (not fatal).
    pub warnings: Vec<String>,
}

impl GuestAddresses {
    fn ready(&self, wait: Wait) -> bool {
        if wait.ipv4 || wait.ipv6 {
            (!wait.ipv4 || self.ipv4.is_some()) && (!wait.ipv6 || self.ipv6.is_some())
        } else {
            self.ipv4.is_some() || self.ipv6.is_some()
        }
    }
}

/// Waits (polling `probe` every `poll`, at most `limit`) until the addresses `wait` asks for
/// exist, then publishes whatever exists. Setting failures become warnings.
pub(crate) fn publish(
    rpc: &mut dyn GuestRpc,
    wait: Wait,
    limit: Duration,
    poll: Duration,
    mut probe: impl FnMut() -> GuestAddresses,
) -> Published {
    let deadline = Instant::now() + limit;
    let mut addresses = probe();
    let mut timed_out = false;
    while !addresses.ready(wait) {
        let now = Instant::now();
        if now >= deadline {
            timed_out = true;
            tracing::warn!(
                "no {} address after {} s; publishing what exists",
                match (wait.ipv4, wait.ipv6) {
                    (true, false) => "ipv4",
                    (false, true) => "ipv6",
                    (true, true) => "ipv4 and ipv6",
                    _ => "",
                },
                limit.as_secs()
            );
            break;
        }
        std::thread::sleep(poll.min(deadline - now));
        addresses = probe();
    }
    let pairs: Vec<(&str, &str)> = [(LOCAL_IPV4, &addresses.ipv4), (LOCAL_IPV6, &addresses.ipv6)]
        .into_iter()
        .filter_map(|(key, value)| Some((key, value.as_deref()?)))
        .collect();
    let warnings = pairs
        .iter()
        .zip(rpc.set_many(&pairs))
        .filter_map(|((key, _), result)| Some(format!("publishing {key}: {}", result.err()?)))
        .collect();
    Published {
        addresses,
        timed_out,
        warnings,
    }
}

/// The live system's default addresses (`/proc/net/route`, `/proc/net/ipv6_route` under
/// `proc_root`, interface addresses from getifaddrs).
pub(crate) fn current(proc_root: &Path) -> GuestAddresses {
    let read = |p: &str| std::fs::read_to_string(proc_root.join(p)).unwrap_or_default();
    pick(
        &read("net/route"),
        &read("net/ipv6_route"),
        &interface_addresses(),
    )
}

/// The device of the IPv4 default route with the lowest metric.
fn default_device_v4(route: &str) -> Option<String> {
    route
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let flags = u32::from_str_radix(f.get(3)?, 16).ok()?;
            let metric: u32 = f.get(6)?.parse().ok()?;
            (f.get(1) == Some(&"00000000") && f.get(7) == Some(&"00000000") && flags & 1 == 1)
                .then(|| (metric, f[0].to_string()))
        })
        .min()
        .map(|(_, dev)| dev)
}

/// The device of the IPv6 default route with the lowest metric (not `lo`, not a reject route).
fn default_device_v6(route: &str) -> Option<String> {
    const RTF_UP: u32 = 0x1;
    const RTF_REJECT: u32 = 0x200;
    route
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 10 {
                return None;
            }
            let flags = u32::from_str_radix(f[8], 16).ok()?;
            let metric = u32::from_str_radix(f[5], 16).ok()?;
            let default = f[0].bytes().all(|b| b == b'0') && f[1] == "00";
            (default && f[9] != "lo" && flags & RTF_UP != 0 && flags & RTF_REJECT == 0)
                .then(|| (metric, f[9].to_string()))
        })
        .min()
        .map(|(_, dev)| dev)
}

fn usable(a: &IpAddr) -> bool {
    match a {
        IpAddr::V4(a) => !(a.is_loopback() || a.is_link_local() || a.is_unspecified()),
        IpAddr::V6(a) => {
            !(a.is_loopback() || a.is_unspecified() || (a.segments()[0] & 0xffc0) == 0xfe80)
        }
    }
}

/// The single usable address of a family on a device.
fn single(addrs: &[(String, IpNet)], dev: &str, v4: bool) -> Option<IpNet> {
    let mut it = addrs
        .iter()
        .filter(|(d, n)| d == dev && n.addr().is_ipv4() == v4 && usable(&n.addr()))
        .map(|(_, n)| *n);
    match (it.next(), it.next()) {
        (Some(n), None) => Some(n),
        _ => None,
    }
}

/// Picks the default addresses from the route tables and the interface addresses.
pub(crate) fn pick(route_v4: &str, route_v6: &str, addrs: &[(String, IpNet)]) -> GuestAddresses {
    let dev4 = default_device_v4(route_v4);
    let dev6 = default_device_v6(route_v6);
    let mut v4 = dev4.as_deref().and_then(|d| single(addrs, d, true));
    let mut v6 = dev6.as_deref().and_then(|d| single(addrs, d, false));
    match (&v4, &v6, &dev4, &dev6) {
        (Some(_), None, Some(d), _) => v6 = single(addrs, d, false),
        (None, Some(_), _, Some(d)) => v4 = single(addrs, d, true),
        _ => {}
    }
    GuestAddresses {
        ipv4: v4.map(|n| n.addr().to_string()),
        ipv6: v6.map(|n| n.to_string()),
    }
}

/// Every interface address with its prefix length (getifaddrs).
pub(crate) fn interface_addresses() -> Vec<(String, IpNet)> {
    use std::ffi::CStr;
    use std::net::{Ipv4Addr, Ipv6Addr};

    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned; fields are read only while
        // the list is alive, and each sockaddr is read as the type its family names.
        unsafe {
            let ifa = &*cur;
            cur = ifa.ifa_next;
            if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
                continue;
            }
            let name = CStr::from_ptr(ifa.ifa_name).to_string_lossy().into_owned();
            let mask = ifa.ifa_netmask;
            match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    let addr = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                    let prefix = if mask.is_null() {
                        32
                    } else {
                        let m = &*(mask as *const libc::sockaddr_in);
                        u32::from_be(m.sin_addr.s_addr).count_ones() as u8
                    };
                    if let Ok(n) = IpNet::new(addr.into(), prefix) {
                        out.push((name, n));
                    }
                }
                libc::AF_INET6 => {
                    let sin6 = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    let addr = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                    let prefix = if mask.is_null() {
                        128
                    } else {
                        let m = &*(mask as *const libc::sockaddr_in6);
                        u128::from_be_bytes(m.sin6_addr.s6_addr).count_ones() as u8
                    };
                    if let Ok(n) = IpNet::new(addr.into(), prefix) {
                        out.push((name, n));
                    }
                }
                _ => {}
            }
        }
    }
    // SAFETY: `head` came from a successful getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::guestinfo_dir::GuestinfoDir;

    const ROUTE_V4: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
        eth0\t00000000\t0182550A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n\
        eth0\t0082550A\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n";
    const ROUTE_V6: &str = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n\
        00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo\n";
    const NO_DEFAULT_V4: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
        eth0\t00BC7DB9\t0182550A\t0003\t0\t0\t100\t00FFFFFF\t0\t0\t0\n";

    #[test]
    fn the_wait_record_reads_back_as_written() {
        for (ipv4, ipv6, text) in [
            (false, false, ""),
            (true, false, "ipv4\n"),
            (false, true, "ipv6\n"),
            (true, true, "ipv4\nipv6\n"),
        ] {
            let w = Wait { ipv4, ipv6 };
            assert_eq!(w.record(), text);
            assert_eq!(Wait::from_record(text), w);
        }
        assert_eq!(
            Wait::from_record("ipv5\n ipv6 \n"),
            Wait {
                ipv4: false,
                ipv6: true
            }
        );
    }

    fn addrs(list: &[(&str, &str)]) -> Vec<(String, IpNet)> {
        list.iter()
            .map(|(d, a)| (d.to_string(), a.parse().unwrap()))
            .collect()
    }

    /// Route tables, interface addresses, and the wanted IPv4 and IPv6 answers.
    type Case<'a> = (
        &'a str,
        &'a str,
        Vec<(&'a str, &'a str)>,
        Option<&'a str>,
        Option<&'a str>,
    );

    #[test]
    fn picks_like_cloud_init() {
        let v4 = ("eth0", "10.85.130.116/24");
        let v6 = ("eth0", "fd42:baa2:3dd:17a:216:3eff:fe16:db54/64");
        let ll = ("eth0", "fe80::216:3eff:fe16:db54/64");
        let lo = ("lo", "127.0.0.1/8");
        let cases: Vec<Case> = vec![
            (ROUTE_V4, "", vec![v4, lo], Some("10.85.130.116"), None),
            (
                "",
                ROUTE_V6,
                vec![v6, ll],
                None,
                Some("fd42:baa2:3dd:17a:216:3eff:fe16:db54/64"),
            ),
            (
                ROUTE_V4,
                ROUTE_V6,
                vec![v4, v6, ll],
                Some("10.85.130.116"),
                Some("fd42:baa2:3dd:17a:216:3eff:fe16:db54/64"),
            ),
            // Borrowed: only IPv4 has a default route.
            (
                ROUTE_V4,
                "",
                vec![v4, v6],
                Some("10.85.130.116"),
                Some("fd42:baa2:3dd:17a:216:3eff:fe16:db54/64"),
            ),
            // Two addresses of each family: ambiguous, nothing.
            (
                ROUTE_V4,
                ROUTE_V6,
                vec![v4, ("eth0", "10.0.0.2/24"), v6, ("eth0", "fd00::2/64")],
                None,
                None,
            ),
            (NO_DEFAULT_V4, "", vec![v4], None, None),
        ];
        for (r4, r6, list, want4, want6) in cases {
            let got = pick(r4, r6, &addrs(&list));
            assert_eq!(got.ipv4.as_deref(), want4, "{list:?}");
            assert_eq!(got.ipv6.as_deref(), want6, "{list:?}");
        }
    }

    #[test]
    fn waits_a_bounded_time_then_publishes() {
        let d = tempfile::tempdir().unwrap();
        let mut host = GuestinfoDir::new(d.path());
        let mut polls = 0;
        let out = publish(
            &mut host,
            Wait {
                ipv4: true,
                ipv6: false,
            },
            Duration::from_secs(5),
            Duration::from_millis(1),
            || {
                polls += 1;
                GuestAddresses {
                    ipv4: (polls >= 3).then(|| "10.0.0.5".to_string()),
                    ipv6: None,
                }
            },
        );
        assert!(!out.timed_out);
        assert_eq!(polls, 3);
        assert_eq!(
            host.recorded().unwrap(),
            ["info-set guestinfo.local-ipv4 10.0.0.5"]
        );

        let mut host = GuestinfoDir::new(d.path());
        let start = Instant::now();
        let out = publish(
            &mut host,
            Wait {
                ipv4: false,
                ipv6: true,
            },
            Duration::from_millis(50),
            Duration::from_millis(10),
            || GuestAddresses {
                ipv4: Some("10.0.0.6".into()),
                ipv6: None,
            },
        );
        assert!(out.timed_out);
        assert!(start.elapsed() < Duration::from_secs(2));
        assert_eq!(
            host.recorded().unwrap().last().unwrap(),
            "info-set guestinfo.local-ipv4 10.0.0.6"
        );
    }

    #[test]
    fn live_addresses_do_not_panic() {
        let _ = current(Path::new("/proc"));
    }
}
