//! cust.cfg inputs shaped like cloud-init's own IMC test inputs (reference §10.1–10.2),
//! written with our own values in `tests/data/imc`, through vmcust: the meaning cloud-init
//! gives that shape, except the documented differences
//! (docs/differences-from-cloud-init.md), which each row below names where it applies.

mod support;

use serde_json::{json, Value};
use vmcust::test_api::facts::NetworkFacts;
use vmcust::test_api::{netplan, network::resolve_devices};

/// The spec's network as a netplan v2 document, devices named by the spec (as
/// cloud-init does without system devices), as JSON for comparison.
fn netplan_of(file: &str) -> Value {
    let bytes = std::fs::read(support::imc_input(file)).unwrap();
    let parsed = vmcust_imc::Spec::parse(&bytes).unwrap();
    let c = vmcust::test_api::imc::customization(&parsed.spec).unwrap();
    let net = c.network.expect("spec has NICs");
    let devices = resolve_devices(&net, &NetworkFacts::default()).unwrap();
    serde_json::to_value(netplan::document(&net, &devices)).unwrap()["network"].clone()
}

#[test]
fn static_2nic() {
    let n = netplan_of("static-2nic-ipv4-ipv6.cfg");
    let dns = json!({
        "search": ["corp.example.net", "lab.example.net"],
        "addresses": ["172.16.40.53", "172.16.41.53"]
    });
    // Difference: no PRIMARY, so cloud-init writes on-link subnet routes and no default
    // route; vmcust makes default routes (first NIC first, later gateways as backups).
    assert_eq!(
        n["ethernets"]["NIC1"],
        json!({
            "match": {"macaddress": "00:50:56:8a:10:01"},
            "dhcp4": false,
            "dhcp6": false,
            "addresses": ["172.16.40.23/23", "2001:db8:40::23/64"],
            "routes": [
                {"to": "0.0.0.0/0", "via": "172.16.40.1", "metric": 100},
                {"to": "0.0.0.0/0", "via": "172.16.41.254", "metric": 101},
                {"to": "::/0", "via": "2001:db8:40::1", "metric": 100}
            ],
            "nameservers": dns
        })
    );
    assert_eq!(
        n["ethernets"]["NIC2"],
        json!({
            "match": {"macaddress": "00:50:56:8a:10:02"},
            "dhcp4": false,
            "addresses": ["192.0.2.45/24"],
            "routes": [{"to": "0.0.0.0/0", "via": "192.0.2.1", "metric": 200}],
            "nameservers": dns
        })
    );
}

#[test]
fn dhcp_2nic_keeps_dhcp_dns_because_the_spec_says_so() {
    let n = netplan_of("dhcp-2nic-root-password.cfg");
    for nic in ["NIC1", "NIC2"] {
        let e = &n["ethernets"][nic];
        assert_eq!(e["dhcp4"], true);
        // Difference: DNSFROMDHCP=yes is honoured; cloud-init adds use-dns: false.
        assert!(e.get("dhcp4-overrides").is_none(), "{nic}: {e}");
        assert_eq!(e["nameservers"], json!({"search": ["ci.example.org"]}));
        assert!(e["nameservers"].get("addresses").is_none());
    }
}

/// Single-NIC rows of §10.2: (file, expected addresses, expected routes, nameservers).
#[test]
fn single_nic_rows() {
    let rows: &[(&str, Value, Value, Value)] = &[
        (
            // Difference: a default route, not an on-link subnet route.
            "non-primary-nic-with-gateway.cfg",
            json!(["10.64.13.40/22"]),
            json!([{"to": "0.0.0.0/0", "via": "10.64.13.1", "metric": 100}]),
            Value::Null,
        ),
        (
            "primary-nic-with-gateway.cfg",
            json!(["10.64.12.40/24"]),
            json!([{"to": "0.0.0.0/0", "via": "10.64.12.1", "metric": 100}]),
            Value::Null,
        ),
        (
            // Difference: a default route, not an on-link subnet route.
            "non-primary-nic-with-gateway-and-dns.cfg",
            json!(["100.72.18.9/24"]),
            json!([{"to": "0.0.0.0/0", "via": "100.72.18.254", "metric": 100}]),
            json!({"addresses": ["203.0.113.53"]}),
        ),
    ];
    for (file, addresses, routes, dns) in rows {
        let n = netplan_of(file);
        let (_, e) = n["ethernets"].as_object().unwrap().iter().next().unwrap();
        assert_eq!(e["dhcp4"], false, "{file}");
        assert_eq!(&e["addresses"], addresses, "{file}");
        assert_eq!(e.get("routes").unwrap_or(&Value::Null), routes, "{file}");
        assert_eq!(e.get("nameservers").unwrap_or(&Value::Null), dns, "{file}");
    }
}

/// Difference: cloud-init gives a static IPADDR without NETMASK a /32, which no gateway can
/// be reached on; vmcust refuses the spec.
#[test]
fn missing_ipv4_netmask_is_refused() {
    let bytes = std::fs::read(support::imc_input("static-nic-without-ipv4-netmask.cfg")).unwrap();
    let err = vmcust_imc::Spec::parse(&bytes).unwrap_err().to_string();
    assert!(err.contains("static IPADDR needs NETMASK"), "{err}");
}

#[test]
fn missing_ipv6_netmask_is_refused() {
    let bytes = std::fs::read(support::imc_input("static-nic-without-ipv6-netmask.cfg")).unwrap();
    let err = vmcust_imc::Spec::parse(&bytes).unwrap_err().to_string();
    assert!(err.contains("IPv6NETMASK|1"), "{err}");
}

/// §10.1: the meaning of the non-network keys.
#[test]
fn identity_and_ids() {
    let load = |f: &str| {
        let bytes = std::fs::read(support::imc_input(f)).unwrap();
        vmcust::test_api::imc::customization(&vmcust_imc::Spec::parse(&bytes).unwrap().spec)
            .unwrap()
    };
    let c = load("static-2nic-ipv4-ipv6.cfg");
    assert_eq!(
        c.identity.host_name.as_ref().map(|v| v.as_str()),
        Some("web-17")
    );
    assert_eq!(
        c.identity.fqdn().as_deref(),
        Some("web-17.corp.example.net")
    );
    assert_eq!(
        c.identity.time_zone.as_ref().map(|v| v.as_str()),
        Some("Europe/Lisbon")
    );
    assert_eq!(c.instance_id, None);
    let c = load("dhcp-2nic-instance-id.cfg");
    assert_eq!(
        c.instance_id.as_ref().map(|v| v.as_str()),
        Some("3f6c2a9e-51d4-4b7a-9e0c-d2b8a1f47c36")
    );
    let c = load("dhcp-2nic-root-password.cfg");
    let pw = c.identity.root_password.expect("password given");
    // cloud-init keeps the decoded trailing newline; chpasswd drops it anyway.
    assert_eq!(pw.password.unwrap().expose(), "correct-horse-7");
    assert!(!pw.expire);
    let c = load("script-and-marker.cfg");
    assert!(c.marker_id.is_some());
    assert!(c.custom_script.is_some());
}

/// The inputs here are copies of the sub-crates' own (each crate's tests stand alone, see
/// docs/testing.md): they must not drift apart.
#[test]
fn inputs_are_the_same_as_the_sub_crates_copies() {
    for (here, there) in [
        ("tests/data/imc", "imc/tests/data"),
        ("tests/data/ovf", "ovf/tests/data"),
    ] {
        for entry in std::fs::read_dir(support::repo().join(here)).unwrap() {
            let path = entry.unwrap().path();
            let copy = support::repo().join(there).join(path.file_name().unwrap());
            assert_eq!(
                std::fs::read(&path).unwrap(),
                std::fs::read(&copy).unwrap_or_else(|e| panic!("{}: {e}", copy.display())),
                "{} differs from {}",
                path.display(),
                copy.display()
            );
        }
    }
}
