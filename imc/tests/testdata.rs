//! Our own cust.cfg inputs in `tests/data/`, shaped like the ones cloud-init's tests feed its
//! VMware reader (ref §10.1), with our documented differences.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use vmcust_imc::{BootProto, Ipv4Mode, Ipv4Static, Ipv6Entry, Parsed, Spec, SpecError, SpecKind};

/// This crate's test inputs (see docs/testing.md, "Test inputs").
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn parse(name: &str) -> Parsed {
    Spec::parse(&read(name)).unwrap_or_else(|e| panic!("{name}:\n{e}"))
}

#[test]
fn every_file_is_read_and_all_but_two_validate() {
    let mut names: Vec<String> = std::fs::read_dir(DATA)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".cfg"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 15);
    let mut refused = 0;
    for name in names {
        let result = Spec::parse(&read(&name));
        // Both files leave out a netmask; cloud-init would use /32 for IPv4 (refused here
        // since a /32 cannot reach a gateway) and fails on IPv6.
        if name == "static-nic-without-ipv6-netmask.cfg"
            || name == "static-nic-without-ipv4-netmask.cfg"
        {
            assert!(result.is_err(), "{name}");
            refused += 1;
        } else {
            let parsed = result.unwrap_or_else(|e| panic!("{name}:\n{e}"));
            assert!(parsed.warnings.is_empty(), "{name}: {:?}", parsed.warnings);
        }
    }
    assert_eq!(refused, 2);
}

#[test]
fn static_two_nics() {
    let spec = parse("static-2nic-ipv4-ipv6.cfg").spec;
    let hostname = spec.network.hostname.as_ref().unwrap();
    assert_eq!((hostname.as_str(), hostname.short()), ("web-17", "web-17"));
    assert_eq!(
        spec.datetime.timezone.as_ref().unwrap().as_str(),
        "Europe/Lisbon"
    );
    assert_eq!(spec.datetime.utc, Some(true));
    assert_eq!(spec.dns.from_dhcp, Some(false));
    let servers: Vec<IpAddr> = vec![
        "172.16.40.53".parse().unwrap(),
        "172.16.41.53".parse().unwrap(),
    ];
    assert_eq!(spec.dns.nameservers, servers);
    let suffixes: Vec<&str> = spec.dns.suffixes.iter().map(|s| s.as_str()).collect();
    assert_eq!(suffixes, ["corp.example.net", "lab.example.net"]);
    assert_eq!(spec.network.networking.as_deref(), Some("yes"));
    assert_eq!(spec.network.bootproto.as_deref(), Some("dhcp"));
    assert_eq!(spec.kind(), SpecKind::Traditional);

    let nics = spec.nics.as_ref().unwrap();
    assert_eq!(nics.len(), 2);
    let nic1 = &nics[0];
    assert_eq!(nic1.name, "NIC1");
    assert_eq!(nic1.mac.to_string(), "00:50:56:8a:10:01");
    assert_eq!(nic1.bootproto, BootProto::Static);
    assert_eq!(nic1.ipv4_mode, Ipv4Mode::BackwardsCompatible);
    assert!(nic1.onboot == Some(true) && !nic1.primary);
    assert_eq!(
        nic1.ipv4,
        Some(Ipv4Static {
            address: Ipv4Addr::new(172, 16, 40, 23),
            prefix: 23
        })
    );
    assert_eq!(
        nic1.gateways,
        [
            Ipv4Addr::new(172, 16, 40, 1),
            Ipv4Addr::new(172, 16, 41, 254)
        ]
    );
    assert_eq!(
        nic1.ipv6,
        [Ipv6Entry {
            address: "2001:db8:40::23".parse::<Ipv6Addr>().unwrap(),
            prefix: 64,
            gateway: Some("2001:db8:40::1".parse().unwrap()),
        }]
    );
    let nic2 = &nics[1];
    assert_eq!(nic2.name, "NIC2");
    assert_eq!(nic2.mac.to_string(), "00:50:56:8a:10:02");
    assert_eq!(nic2.ipv4.unwrap().prefix, 24);
    assert_eq!(nic2.gateways, [Ipv4Addr::new(192, 0, 2, 1)]);
    assert!(nic2.ipv6.is_empty());
}

#[test]
fn dhcp_two_nics_with_password() {
    let spec = parse("dhcp-2nic-root-password.cfg").spec;
    let nics = spec.nics.as_ref().unwrap();
    assert_eq!(nics.len(), 2);
    assert_eq!(nics[0].mac.to_string(), "00:50:56:8a:20:01");
    assert_eq!(nics[0].bootproto, BootProto::Dhcp);
    assert_eq!(nics[0].ipv4, None);
    assert_eq!(spec.misc.instance_id, None);
    // "Y29ycmVjdC1ob3JzZS03Cg==" is "correct-horse-7\n"; the newline is chpasswd's line end,
    // not part of the password.
    assert_eq!(
        spec.password.root.as_ref().unwrap().expose(),
        "correct-horse-7"
    );
    assert!(!spec.password.reset);
    assert_eq!(spec.dns.from_dhcp, Some(true));
}

#[test]
fn instance_id() {
    let spec = parse("dhcp-2nic-instance-id.cfg").spec;
    assert_eq!(
        spec.misc.instance_id.as_deref(),
        Some("3f6c2a9e-51d4-4b7a-9e0c-d2b8a1f47c36")
    );
}

#[test]
fn scripts_and_markers() {
    let spec = parse("script-and-marker.cfg").spec;
    assert_eq!(
        spec.custom_script.as_ref().unwrap().as_str(),
        "customize.sh"
    );
    assert_eq!(spec.misc.marker_id.as_ref().unwrap().as_str(), "c0ffee01");
    assert!(!spec.misc.default_run_post_cust_script);
    assert!(
        spec.nics.is_none(),
        "no NIC-CONFIG means no network customization"
    );

    let spec = parse("script-and-new-marker.cfg").spec;
    assert_eq!(spec.misc.marker_id.as_ref().unwrap().as_str(), "c0ffee02");

    let spec = parse("script-marker-default-run-post-yes.cfg").spec;
    assert!(spec.misc.default_run_post_cust_script);
    assert!(!spec.misc.post_gc_status);

    let spec = parse("marker-only.cfg").spec;
    assert_eq!(spec.custom_script, None);
    assert_eq!(spec.misc.marker_id.as_ref().unwrap().as_str(), "c0ffee01");
}

#[test]
fn raw_cloud_init_data() {
    let spec = parse("raw-cloudinit-metadata-and-userdata.cfg").spec;
    assert_eq!(spec.kind(), SpecKind::RawCloudInit);
    assert_eq!(
        spec.cloudinit.metadata.as_ref().unwrap().as_str(),
        "seed-meta.yaml"
    );
    assert_eq!(
        spec.cloudinit.userdata.as_ref().unwrap().as_str(),
        "seed-user.yaml"
    );

    let spec = parse("raw-cloudinit-metadata-only.cfg").spec;
    assert_eq!(spec.kind(), SpecKind::RawCloudInit);
    assert_eq!(spec.cloudinit.userdata, None);
}

#[test]
fn primary_nic_accepts_true() {
    let spec = parse("primary-nic-with-gateway.cfg").spec;
    let nic = &spec.nics.as_ref().unwrap()[0];
    assert!(nic.primary);
    assert_eq!(nic.gateways, [Ipv4Addr::new(10, 64, 12, 1)]);
}

#[test]
fn non_primary_nics() {
    let spec = parse("non-primary-nic-with-gateway-and-dns.cfg").spec;
    let nic = &spec.nics.as_ref().unwrap()[0];
    assert!(!nic.primary);
    assert_eq!(spec.dns.nameservers, [IpAddr::from([203, 0, 113, 53])]);
    assert_eq!(spec.datetime.timezone, None);

    let spec = parse("non-primary-nic-without-gateway.cfg").spec;
    assert!(spec.nics.as_ref().unwrap()[0].gateways.is_empty());
    let spec = parse("non-primary-nic-with-gateway.cfg").spec;
    assert_eq!(spec.nics.as_ref().unwrap()[0].gateways.len(), 1);
}

#[test]
fn missing_ipv4_netmask_is_an_error_not_a_host_route() {
    let bytes = read("static-nic-without-ipv4-netmask.cfg");
    let err = Spec::parse(&bytes).unwrap_err().to_string();
    assert!(
        err.contains("[NIC1] NETMASK: static IPADDR needs NETMASK; add NETMASK"),
        "{err}"
    );
}

#[test]
fn missing_ipv6_netmask_is_an_error() {
    let bytes = read("static-nic-without-ipv6-netmask.cfg");
    let err = Spec::parse(&bytes).unwrap_err();
    assert!(matches!(err, SpecError::Invalid(_)));
    // The IPv4 netmask is missing too (line 15), then the IPv6 one.
    let text = err.to_string();
    assert_eq!(
        text.lines().nth(1),
        Some("line 17: [NIC1] IPv6NETMASK|1: missing; every IPv6ADDR|n needs an IPv6NETMASK|n (a prefix length 0-128 or a full mask)"),
        "{text}"
    );
}

#[test]
fn serializes_for_show() {
    let spec = parse("static-2nic-ipv4-ipv6.cfg").spec;
    let json = serde_json::to_value(&spec).unwrap();
    assert_eq!(json["nics"][0]["mac"], "00:50:56:8a:10:01");
    assert_eq!(json["nics"][0]["ipv4"]["address"], "172.16.40.23");
    assert_eq!(json["nics"][0]["ipv4"]["prefix"], 23);
    assert_eq!(json["nics"][0]["ipv4_mode"], "BACKWARDS_COMPATIBLE");
    assert_eq!(json["nics"][0]["bootproto"], "static");
    assert_eq!(json["nics"][0]["ipv6"][0]["prefix"], 64);
    assert_eq!(json["dns"]["nameservers"][1], "172.16.41.53");
    assert_eq!(json["network"]["hostname"], "web-17");
    assert_eq!(json["network"]["domain_name"], "corp.example.net");
    assert_eq!(json["datetime"]["timezone"], "Europe/Lisbon");

    let spec = parse("dhcp-2nic-root-password.cfg").spec;
    let json = serde_json::to_value(&spec).unwrap();
    assert_eq!(json["password"]["root"], "<redacted>");
}
