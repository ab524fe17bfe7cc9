//! One row per validation rule: cfg text → expected line of the error; plus ref §10.1's small cases.

use vmcust_imc::{DomainName, Spec, SpecError};

/// A minimal valid NIC block to build rows on.
const NIC1: &str = "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\n";

fn error_of(cfg: &str) -> String {
    match Spec::parse(cfg.as_bytes()) {
        Ok(p) => panic!("accepted:\n{cfg}\n{:?}", p.spec),
        Err(e) => e.to_string(),
    }
}

#[test]
fn each_rule_has_an_error() {
    let nic = |extra: &str| format!("{NIC1}{extra}");
    let rows: Vec<(String, &str)> = vec![
        ("[NETWORK]\nHOSTNAME = my_host\n".into(), "line 2: [NETWORK] HOSTNAME = \"my_host\": label with a character other than a letter, digit or hyphen; use dot-separated labels"),
        ("[NETWORK]\nHOSTNAME =\n".into(), "line 2: [NETWORK] HOSTNAME = \"\": empty name"),
        (format!("[NETWORK]\nHOSTNAME = {}\n", "a".repeat(64)), "label longer than 63 characters"),
        ("[NETWORK]\nDOMAINNAME = -eng.com\n".into(), "line 2: [NETWORK] DOMAINNAME = \"-eng.com\": label starting or ending with a hyphen"),
        ("[NIC-CONFIG]\nNICS = NIC1,,NIC2\n".into(), "line 2: [NIC-CONFIG] NICS = \"NIC1,,NIC2\": empty nic name; use comma-separated section names such as NIC1,NIC2"),
        ("[NIC-CONFIG]\nNICS = NIC1, NIC1\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\n".into(), "line 2: [NIC-CONFIG] NICS = \"NIC1, NIC1\": nic NIC1 is listed twice"),
        ("[NIC-CONFIG]\nNICS = NIC1\n".into(), "line 2: [NIC-CONFIG] NICS: nic NIC1 is listed but there is no [NIC1] section"),
        ("[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nONBOOT = yes\n".into(), "line 3: [NIC1] MACADDR: missing; the nic is found by its mac address"),
        ("[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:a6:8c\n".into(), "line 4: [NIC1] MACADDR = \"00:50:56:a6:8c\": not a mac address; use six hex pairs separated by : or -"),
        (nic("ONBOOT = maybe\n"), "line 5: [NIC1] ONBOOT = \"maybe\": not a boolean; use yes, no, true or false (any case)"),
        (nic("PRIMARY = 1\n"), "line 5: [NIC1] PRIMARY = \"1\": not a boolean; use yes, no, true or false (any case)"),
        (nic("IPv4_MODE = AUTO\n"), "line 5: [NIC1] IPv4_MODE = \"AUTO\": unknown ipv4 mode; use BACKWARDS_COMPATIBLE, STATIC, DHCP, DISABLED or AS_IS (any case)"),
        (nic("BOOTPROTO = bootp\n"), "line 5: [NIC1] BOOTPROTO = \"bootp\": unknown boot protocol; use dhcp or static (any case)"),
        (nic("BOOTPROTO = static\n"), "line 5: [NIC1] IPADDR: BOOTPROTO = static needs IPADDR"),
        (nic("BOOTPROTO = static\nIPADDR = 10.0.0.300\n"), "line 6: [NIC1] IPADDR = \"10.0.0.300\": not an ipv4 address; use a dotted address such as 10.20.87.154"),
        (nic("IPADDR = 10.0.0.3\nNETMASK = 255.0.255.0\n"), "line 6: [NIC1] NETMASK = \"255.0.255.0\": not a contiguous netmask; use a dotted mask such as 255.255.252.0 or a prefix length 0-32"),
        (nic("IPADDR = 10.0.0.3\nNETMASK = 33\n"), "line 6: [NIC1] NETMASK = \"33\": not a netmask; use a dotted mask such as 255.255.252.0 or a prefix length 0-32"),
        (nic("GATEWAY = 10.0.0.1, x\n"), "line 5: [NIC1] GATEWAY = \"10.0.0.1, x\": not a list of ipv4 addresses"),
        (nic("IPv6ADDR|1 = fc00::1\nIPv6NETMASK|1 = 64\nIPv6ADDR|3 = fc00::3\nIPv6NETMASK|3 = 64\n"), "line 7: [NIC1] IPv6ADDR|2: missing; IPv6ADDR|n keys must be numbered 1, 2, 3, ... without gaps (found 1, 3)"),
        (nic("IPv6ADDR|1 = fc00::1\n"), "line 5: [NIC1] IPv6NETMASK|1: missing; every IPv6ADDR|n needs an IPv6NETMASK|n"),
        (nic("IPv6NETMASK|1 = 64\n"), "line 5: [NIC1] IPv6NETMASK|1: IPv6ADDR|1 is missing; every IPv6NETMASK|n and IPv6GATEWAY|n needs an IPv6ADDR|n"),
        (nic("IPv6GATEWAY|1 = fc00::1\n"), "line 5: [NIC1] IPv6GATEWAY|1: IPv6ADDR|1 is missing"),
        (nic("IPv6ADDR|1 = fc00::1\nIPv6NETMASK|1 = ffff::ffff\n"), "line 6: [NIC1] IPv6NETMASK|1 = \"ffff::ffff\": not a contiguous ipv6 netmask; use a prefix length 0-128"),
        (nic("IPv6ADDR|1 = fc00::g\nIPv6NETMASK|1 = 64\n"), "line 5: [NIC1] IPv6ADDR|1 = \"fc00::g\": not an ipv6 address"),
        (nic("IPv6ADDR|1 = fc00::1\nIPv6NETMASK|1 = 64\nIPv6GATEWAY|1 = gw\n"), "line 7: [NIC1] IPv6GATEWAY|1 = \"gw\": not an ipv6 address"),
        (nic("IPv6ADDR|01 = fc00::1\n"), "line 5: [NIC1] IPv6ADDR|01: bad index \"01\"; use IPv6ADDR|1, IPv6ADDR|2, ..."),
        ("[NIC-CONFIG]\nNICS = NIC1,NIC2\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\nPRIMARY = yes\n[NIC2]\nMACADDR = 00:50:56:a6:8c:09\nPRIMARY = true\n".into(),
         "line 8: [NIC2] PRIMARY: both NIC1 (line 5) and NIC2 (line 8) are primary; at most one nic may have PRIMARY = yes"),
        ("[NIC-CONFIG]\nNICS = NIC1,NIC2\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\n[NIC2]\nMACADDR = 00-50-56-A6-8C-08\n".into(),
         "line 6: [NIC2] MACADDR: NIC2 has the same mac address 00:50:56:a6:8c:08 as NIC1 (line 4); each nic needs its own MACADDR"),
        ("[DNS]\nDNSFROMDHCP = true\n".into(), "line 2: [DNS] DNSFROMDHCP = \"true\": not a boolean; use yes or no (any case)"),
        ("[DNS]\nNAMESERVER|1 = 10.0.0.1\nNAMESERVER|3 = 10.0.0.3\n".into(), "line 3: [DNS] NAMESERVER|2: missing; NAMESERVER|n keys must be numbered 1, 2, 3, ... without gaps (found 1, 3)"),
        ("[DNS]\nNAMESERVER|2 = 10.0.0.2\n".into(), "line 2: [DNS] NAMESERVER|1: missing"),
        ("[DNS]\nNAMESERVER|x = 10.0.0.2\n".into(), "line 2: [DNS] NAMESERVER|x: bad index \"x\""),
        ("[DNS]\nNAMESERVER|1 = dns.example\n".into(), "line 2: [DNS] NAMESERVER|1 = \"dns.example\": not an ip address; use an ipv4 or ipv6 address"),
        ("[DNS]\nSUFFIX|1 = a..b\n".into(), "line 2: [DNS] SUFFIX|1 = \"a..b\": empty label"),
        ("[DNS]\nSUFFIX|2 = b.com\n".into(), "line 2: [DNS] SUFFIX|1: missing; SUFFIX|n keys must be numbered"),
        ("[DATETIME]\nTIMEZONE = ../../etc/passwd\n".into(), "line 2: [DATETIME] TIMEZONE = \"../../etc/passwd\": not a time zone name"),
        ("[DATETIME]\nTIMEZONE = /UTC\n".into(), "line 2: [DATETIME] TIMEZONE = \"/UTC\": not a time zone name"),
        ("[DATETIME]\nUTC = 1\n".into(), "line 2: [DATETIME] UTC = \"1\": not a boolean; use yes or no (any case)"),
        // Every value in [PASSWORD] is secret, RESET's too.
        ("[PASSWORD]\nRESET = random\n".into(), "line 2: [PASSWORD] RESET = <redacted>: not a boolean; use yes or no (any case)"),
        ("[PASSWORD]\n-PASS = %%%\n".into(), "line 2: [PASSWORD] -PASS = <redacted>: not valid base64; use standard base64 with padding (the value is not shown)"),
        ("[PASSWORD]\n-PASS = /w==\n".into(), "line 2: [PASSWORD] -PASS = <redacted>: the decoded password is not valid UTF-8"),
        ("[MISC]\nMARKER-ID = ..\n".into(), "line 2: [MISC] MARKER-ID = \"..\": not a plain file name; use a non-empty name without / or NUL that is not . or .."),
        ("[MISC]\nMARKER-ID = a/b\n".into(), "line 2: [MISC] MARKER-ID = \"a/b\": not a plain file name"),
        ("[MISC]\nPOST-GC-STATUS = y\n".into(), "line 2: [MISC] POST-GC-STATUS = \"y\": not a boolean; use yes or no"),
        ("[MISC]\nDEFAULT-RUN-POST-CUST-SCRIPT = on\n".into(), "line 2: [MISC] DEFAULT-RUN-POST-CUST-SCRIPT = \"on\": not a boolean"),
        ("[CUSTOM-SCRIPT]\nSCRIPT-NAME = ../x.sh\n".into(), "line 2: [CUSTOM-SCRIPT] SCRIPT-NAME = \"../x.sh\": not a plain file name"),
        ("[CUSTOM-SCRIPT]\nSCRIPT-NAME =\n".into(), "line 2: [CUSTOM-SCRIPT] SCRIPT-NAME = \"\": not a plain file name"),
        ("[CLOUDINIT]\nMETADATA = /etc/shadow\n".into(), "line 2: [CLOUDINIT] METADATA = \"/etc/shadow\": not a plain file name"),
        ("[CLOUDINIT]\nMETADATA = m\nUSERDATA = .\n".into(), "line 3: [CLOUDINIT] USERDATA = \".\": not a plain file name"),
        ("[A]\nk = v\nk = w\n".into(), "line 3: duplicate key k in [A] (first at line 2)"),
    ];
    for (cfg, want) in rows {
        let got = error_of(&cfg);
        assert!(got.contains(want), "cfg:\n{cfg}\nwant: {want}\ngot:  {got}");
    }
}

#[test]
fn all_problems_are_reported_one_per_line() {
    let cfg = "[NETWORK]\nHOSTNAME = bad_name\n[DATETIME]\nUTC = maybe\n[MISC]\nMARKER-ID = a/b\n";
    let err = Spec::parse(cfg.as_bytes()).unwrap_err();
    let SpecError::Invalid(problems) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(problems.len(), 3);
    assert_eq!(problems[1].line(), Some(4));
    assert_eq!(problems[1].section(), "DATETIME");
    assert_eq!(problems[1].key(), Some("UTC"));
    let text = err.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("line 2: [NETWORK] HOSTNAME"));
    assert!(lines[2].starts_with("line 6: [MISC] MARKER-ID"));
}

#[test]
fn read_errors_are_distinguishable() {
    let err = Spec::parse(b"k = v\n").unwrap_err();
    assert!(matches!(err, SpecError::Read(_)), "{err:?}");
}

#[test]
fn defaults_and_accepted_forms() {
    let cfg = format!("{NIC1}IPv4_MODE = disabled\nBOOTPROTO = STATIC\nNETMASK = 24\n[NETWORK]\nDOMAINNAME =\nHOSTNAME = web1.example.com\n[PASSWORD]\nRESET = YES\n[MISC]\nPOST-GC-STATUS = YES\nDEFAULT-RUN-POST-CUST-SCRIPT = NO\n");
    let parsed = Spec::parse(cfg.as_bytes()).unwrap();
    let spec = parsed.spec;
    let nic = &spec.nics.as_ref().unwrap()[0];
    assert!(nic.onboot.is_none() && !nic.primary);
    assert_eq!(nic.ipv4, None, "DISABLED with static and no IPADDR is fine");
    assert_eq!(spec.network.domain_name, Some(DomainName::Clear));
    assert_eq!(spec.network.hostname.as_ref().unwrap().short(), "web1");
    assert!(spec.password.reset, "RESET=YES");
    assert!(spec.password.root.is_none());
    assert!(spec.misc.post_gc_status, "POST-GC-STATUS=YES");
    assert!(!spec.misc.default_run_post_cust_script);
    assert_eq!(parsed.warnings.len(), 1, "{:?}", parsed.warnings);
    assert_eq!(
        parsed.warnings[0].to_string(),
        "line 7: [NIC1] NETMASK: NETMASK without IPADDR is ignored"
    );

    let spec = Spec::parse(b"[PASSWORD]\nRESET = yes\n").unwrap().spec;
    assert!(spec.password.reset);
    let spec = Spec::parse(b"[MISC]\n").unwrap().spec;
    assert!(!spec.password.reset && !spec.misc.post_gc_status && spec.custom_script.is_none());
    assert!(spec.cloudinit.metadata.is_none() && spec.cloudinit.userdata.is_none());
}

#[test]
fn nics_are_trimmed_and_nic_fields_lenient_where_cloud_init_is() {
    let cfg = "[NIC-CONFIG]\nNICS = NIC1 , NIC2\n[NIC1]\nMACADDR = 00:50:56:A6:8C:08\nPRIMARY = TRUE\nONBOOT = No\nIPADDR = 10.0.0.2\nGATEWAY =\n[NIC2]\nMACADDR = 00:50:56:a6:8c:09\nIPv6ADDR|1 = fc00::2\nIPv6NETMASK|1 = ffff:ffff:ffff:ffff::\nIPv6ADDR|2 = fc00::3\nIPv6NETMASK|2 = 128\n";
    let spec = Spec::parse(cfg.as_bytes()).unwrap().spec;
    let nics = spec.nics.unwrap();
    assert_eq!(nics[1].name, "NIC2");
    assert!(nics[0].primary && nics[0].onboot == Some(false));
    assert_eq!(nics[0].ipv4.unwrap().prefix, 32);
    assert!(nics[0].gateways.is_empty());
    let prefixes: Vec<u8> = nics[1].ipv6.iter().map(|e| e.prefix).collect();
    assert_eq!(prefixes, [64, 128]);
}

#[test]
fn unknown_keys_and_sections_are_kept_as_warnings() {
    let cfg = format!("{NIC1}FOO = bar\n[NIC2]\nMACADDR = 00:50:56:a6:8c:09\n[VENDOR]\n-TOKEN = s3cr3t\n[EMPTY]\n[CUSTOM-SOURCE]\nCUSTOMIZATION_SOURCE = clone\n[GOSC]\nCOMPATIBILITY = 1\n[CLOUDINIT]\nINSTANCE-ID = old\n");
    let parsed = Spec::parse(cfg.as_bytes()).unwrap();
    let warnings: Vec<String> = parsed.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "line 5: [NIC1] FOO: unknown key; kept but not used",
            "line 6: [NIC2]: nic section not listed in NIC-CONFIG|NICS; kept but not used",
            "line 8: [VENDOR]: unknown section; kept but not used",
            "line 10: [EMPTY]: unknown section; kept but not used",
            "line 16: [CLOUDINIT] INSTANCE-ID: unknown key; kept but not used",
        ]
    );
    let spec = parsed.spec;
    assert_eq!(spec.customization_source.as_deref(), Some("clone"));
    assert_eq!(spec.gosc_compatibility.as_deref(), Some("1"));
    let kept: Vec<(&str, &str, usize)> = spec
        .unknown
        .iter()
        .map(|u| (u.section.as_str(), u.key.as_str(), u.line))
        .collect();
    assert_eq!(
        kept,
        [
            ("NIC1", "FOO", 5),
            ("NIC2", "MACADDR", 7),
            ("VENDOR", "-TOKEN", 9),
            ("CLOUDINIT", "INSTANCE-ID", 16)
        ]
    );
    let all = format!("{spec:?} {}", serde_json::to_string(&spec).unwrap());
    assert!(!all.contains("s3cr3t"), "{all}");
}
