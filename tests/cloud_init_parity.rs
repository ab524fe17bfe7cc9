//! cloud-init's own IMC test inputs (reference §10.1–10.2) through vmcust: the same
//! meaning, except the documented differences (docs/differences-from-cloud-init.md),
//! which each row below names where it applies.

mod support;

use serde_json::{json, Value};
use vmcust::facts::NetworkFacts;
use vmcust::plan::network::{netplan, resolve_devices};

/// The spec's network as a netplan v2 document, devices named by the spec (as
/// cloud-init does without system devices), as JSON for comparison.
fn netplan_of(file: &str) -> Value {
    let bytes = std::fs::read(support::cloud_init_imc(file)).unwrap();
    let parsed = vmcust_imc::Spec::parse(&bytes).unwrap();
    let c = vmcust::source::imc::customization(&parsed.spec);
    let net = c.network.expect("spec has NICs");
    let devices = resolve_devices(&net, &NetworkFacts::default()).unwrap();
    serde_json::to_value(netplan::document(&net, &devices)).unwrap()["network"].clone()
}

#[test]
fn static_2nic() {
    let n = netplan_of("ci-data-cust-static-2nic.cfg");
    let dns = json!({
        "search": ["eng.vmware.com", "proxy.vmware.com"],
        "addresses": ["10.20.145.1", "10.20.145.2"]
    });
    // Difference: no PRIMARY, so cloud-init writes on-link subnet routes and no default
    // route; vmcust makes default routes (first NIC first, later gateways as backups).
    assert_eq!(
        n["ethernets"]["NIC1"],
        json!({
            "match": {"macaddress": "00:50:56:a6:8c:08"},
            "dhcp4": false,
            "dhcp6": false,
            "addresses": ["10.20.87.154/22", "fc00:10:20:87::154/64"],
            "routes": [
                {"to": "0.0.0.0/0", "via": "10.20.87.253", "metric": 100},
                {"to": "0.0.0.0/0", "via": "10.20.87.105", "metric": 101},
                {"to": "::/0", "via": "fc00:10:20:87::253", "metric": 100}
            ],
            "nameservers": dns
        })
    );
    assert_eq!(
        n["ethernets"]["NIC2"],
        json!({
            "match": {"macaddress": "00:50:56:a6:ef:7d"},
            "dhcp4": false,
            "addresses": ["192.168.6.102/16"],
            "routes": [{"to": "0.0.0.0/0", "via": "192.168.0.10", "metric": 200}],
            "nameservers": dns
        })
    );
}

#[test]
fn dhcp_2nic_keeps_dhcp_dns_because_the_spec_says_so() {
    let n = netplan_of("ci-data-cust-dhcp-2nic.cfg");
    for nic in ["NIC1", "NIC2"] {
        let e = &n["ethernets"][nic];
        assert_eq!(e["dhcp4"], true);
        // Difference: DNSFROMDHCP=yes is honoured; cloud-init adds use-dns: false.
        assert!(e.get("dhcp4-overrides").is_none(), "{nic}: {e}");
        assert_eq!(e["nameservers"], json!({"search": ["eng.vmware.com"]}));
        assert!(e["nameservers"].get("addresses").is_none());
    }
}

/// Single-NIC rows of §10.2: (file, expected addresses, expected routes, nameservers).
#[test]
fn single_nic_rows() {
    let rows: &[(&str, Value, Value, Value)] = &[
        (
            // Difference: a default route, not an on-link subnet route.
            "ci-ut-vmware_config_file-non_primary_nic_with_gateway.cfg",
            json!(["10.20.87.154/22"]),
            json!([{"to": "0.0.0.0/0", "via": "10.20.87.253", "metric": 100}]),
            Value::Null,
        ),
        (
            "ci-ut-vmware_config_file-a_primary_nic_with_gateway.cfg",
            json!(["10.20.87.154/22"]),
            json!([{"to": "0.0.0.0/0", "via": "10.20.87.253", "metric": 100}]),
            Value::Null,
        ),
        (
            "ci-ut-vmware_config_file-cust_non_primary_nic_with_gateway.cfg",
            json!(["100.115.223.75/24"]),
            json!([{"to": "0.0.0.0/0", "via": "100.115.223.254", "metric": 100}]),
            json!({"addresses": ["8.8.8.8"]}),
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
    let bytes = std::fs::read(support::cloud_init_imc(
        "ci-ut-vmware_config_file-static_nic_without_ipv4_netmask.cfg",
    ))
    .unwrap();
    let err = vmcust_imc::Spec::parse(&bytes).unwrap_err().to_string();
    assert!(err.contains("static IPADDR needs NETMASK"), "{err}");
}

#[test]
fn missing_ipv6_netmask_is_refused() {
    let bytes = std::fs::read(support::cloud_init_imc(
        "ci-ut-vmware_config_file-static_nic_without_ipv6_netmask.cfg",
    ))
    .unwrap();
    let err = vmcust_imc::Spec::parse(&bytes).unwrap_err().to_string();
    assert!(err.contains("IPv6NETMASK|1"), "{err}");
}

/// §10.1: the meaning of the non-network keys.
#[test]
fn identity_and_ids() {
    let load = |f: &str| {
        let bytes = std::fs::read(support::cloud_init_imc(f)).unwrap();
        vmcust::source::imc::customization(&vmcust_imc::Spec::parse(&bytes).unwrap().spec)
    };
    let c = load("ci-data-cust-static-2nic.cfg");
    assert_eq!(c.identity.host_name.as_deref(), Some("myhost1"));
    assert_eq!(c.identity.fqdn().as_deref(), Some("myhost1.eng.vmware.com"));
    assert_eq!(c.identity.time_zone.as_deref(), Some("Africa/Abidjan"));
    assert_eq!(c.instance_id, None);
    let c = load("ci-data-cust-dhcp-2nic-instance-id.cfg");
    assert_eq!(
        c.instance_id.as_deref(),
        Some("50078779-0bc7-1a57-7c52-1179f03f5650")
    );
    let c = load("ci-data-cust-dhcp-2nic.cfg");
    let pw = c.identity.root_password.expect("password given");
    // cloud-init keeps the decoded trailing newline; chpasswd drops it anyway.
    assert_eq!(pw.password.unwrap().expose(), "secret");
    assert!(!pw.expire);
    let c = load("ci-ut-custom-script-and-marker.cfg");
    assert!(c.marker_id.is_some());
    assert!(c.custom_script.is_some());
}
