//! Issue 9: bounded, linear and strict. Each row failed before the change that made it pass.

use std::time::{Duration, Instant};

use vmcust_imc::{Limits, RawSpec, ReadError, Spec, SpecError, MAX_NICS};

/// A minimal valid NIC block to build rows on.
const NIC1: &str = "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\n";

/// Generous for a loaded CI machine: the inputs below take tens of milliseconds when linear,
/// and took 28 s and 25 s when quadratic.
const BOUND: Duration = Duration::from_secs(5);

fn error_of(cfg: &str) -> String {
    match Spec::parse(cfg.as_bytes()) {
        Ok(p) => panic!("accepted:\n{cfg}\n{:?}", p.spec),
        Err(e) => e.to_string(),
    }
}

fn warnings_of(cfg: &str) -> Vec<String> {
    let parsed = Spec::parse(cfg.as_bytes()).unwrap_or_else(|e| panic!("{cfg}\n{e}"));
    parsed.warnings.iter().map(ToString::to_string).collect()
}

fn many_sections(n: usize) -> String {
    (0..n).map(|i| format!("[S{i}]\nK = v\n")).collect()
}

fn many_nics(n: usize) -> String {
    let names: Vec<String> = (1..=n).map(|i| format!("NIC{i}")).collect();
    let mut cfg = format!("[NIC-CONFIG]\nNICS = {}\n", names.join(","));
    for i in 1..=n {
        cfg += &format!(
            "[NIC{i}]\nMACADDR = 02:00:00:{:02x}:{:02x}:{:02x}\nBOOTPROTO = static\nIPADDR = 10.{}.{}.1\nNETMASK = 24\nGATEWAY = 10.{}.{}.254\n",
            i >> 16 & 0xff, i >> 8 & 0xff, i & 0xff, i >> 8 & 0xff, i & 0xff, i >> 8 & 0xff, i & 0xff
        );
    }
    cfg
}

#[test]
fn reading_is_linear_in_sections_and_nics() {
    for cfg in [many_sections(100_000), many_nics(20_000)] {
        let start = Instant::now();
        let raw = RawSpec::parse_with(cfg.as_bytes(), Limits::NONE).unwrap();
        // Validation walks every section too (unknown ones are warnings).
        let _ = Spec::from_raw(&raw);
        let took = start.elapsed();
        assert!(took < BOUND, "{} bytes took {took:?}", cfg.len());
    }
}

#[test]
fn caps_refuse_big_inputs_early() {
    let start = Instant::now();
    let err = Spec::parse(many_sections(2_000).as_bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            SpecError::Read(ReadError::TooManySections { max: 1024, .. })
        ),
        "{err}"
    );
    let cfg = format!(
        "[A]\n{}",
        (0..20_000)
            .map(|i| format!("K{i} = v\n"))
            .collect::<String>()
    );
    let err = Spec::parse(cfg.as_bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            SpecError::Read(ReadError::TooManyEntries { max: 16384, .. })
        ),
        "{err}"
    );
    let big = format!("[A]\nK = {}\n", "x".repeat(2 << 20));
    let err = Spec::parse(big.as_bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            SpecError::Read(ReadError::TooLarge { max: 1048576, .. })
        ),
        "{err}"
    );
    assert!(start.elapsed() < BOUND);

    let err = error_of(&many_nics(MAX_NICS + 1));
    assert!(
        err.contains("65 nics listed; at most 64 are supported"),
        "{err}"
    );
    Spec::parse(many_nics(MAX_NICS).as_bytes()).unwrap();
}

#[test]
fn an_empty_spec_is_refused() {
    for cfg in ["", "\n\n", "# only a comment\n; and another\n", "\u{feff}"] {
        let err = error_of(cfg);
        assert!(err.starts_with("cust.cfg is empty"), "{cfg:?}: {err}");
    }
}

#[test]
fn long_values_are_cut_in_messages() {
    let host = "h".repeat(1 << 19);
    let err = error_of(&format!("[NETWORK]\nHOSTNAME = {host}_\n"));
    assert!(err.len() < 400, "{} bytes: {}", err.len(), &err[..400]);
    assert!(err.contains("(524289 bytes)"), "{err}");
    let key = "K".repeat(1 << 18);
    let err = error_of(&format!("[A]\n{key} = 1\n{key} = 2\n"));
    assert!(
        err.len() < 400 && err.contains("(262144 bytes)"),
        "{}",
        &err[..400]
    );
}

#[test]
fn malformed_password_keys_are_refused_without_echo() {
    const PASSWORD: &str = "U3VwZXJTZWNyZXQ=";
    for line in [
        format!("-PASS{PASSWORD}"),
        format!("-PASS;{PASSWORD}"),
        format!("-PASS\0{PASSWORD}"),
        format!("-PASS\u{200b}= {PASSWORD}"),
        format!("-pass{PASSWORD}"),
        format!("\u{200b}-PASS = {PASSWORD}"),
        format!("-PASS; {PASSWORD}"),
    ] {
        let cfg = format!("[PASSWORD]\n{line}\n");
        let err = Spec::parse(cfg.as_bytes()).unwrap_err();
        let all = format!("{err} {err:?}");
        assert!(!all.contains("U3Vw"), "{line:?}: {all}");
        assert!(all.contains("line 2"), "{line:?}: {all}");
    }
    let err = error_of(&format!("[PASSWORD]\n-PASS{PASSWORD}\n"));
    assert!(err.contains("malformed password key (not shown)"), "{err}");
    let err = error_of("[NIC\u{200b}1]\n");
    assert!(err.contains("invisible character"), "{err}");
}

#[test]
fn unknown_keys_get_a_suggestion() {
    let warnings = warnings_of(&format!(
        "{NIC1}ONBOTO = yes\n[NETWORK]\nhostname = x\nCOLOUR = red\n"
    ));
    assert_eq!(
        warnings,
        [
            "line 5: [NIC1] ONBOTO: unknown key; kept but not used; did you mean ONBOOT?",
            "line 7: [NETWORK] hostname: unknown key; kept but not used; did you mean HOSTNAME?",
            "line 8: [NETWORK] COLOUR: unknown key; kept but not used",
        ]
    );
}

#[test]
fn lower_case_ipaddr_is_pointed_at() {
    let err = error_of(&format!(
        "{NIC1}BOOTPROTO = static\nipaddr = 10.0.0.2\nNETMASK = 24\n"
    ));
    assert!(
        err.starts_with("line 6: [NIC1] ipaddr: BOOTPROTO = static needs IPADDR; keys are case-sensitive, write IPADDR instead of ipaddr"),
        "{err}"
    );
}

#[test]
fn a_static_nic_needs_a_netmask() {
    let err = error_of(&format!(
        "{NIC1}BOOTPROTO = static\nIPADDR = 10.0.0.2\nGATEWAY = 10.0.0.1\n"
    ));
    assert!(
        err.starts_with("line 6: [NIC1] NETMASK: static IPADDR needs NETMASK; add NETMASK"),
        "{err}"
    );
    let err = error_of(&format!(
        "{NIC1}BOOTPROTO = static\nIPADDR = 10.0.0.2\nNETMAKS = 24\n"
    ));
    assert!(
        err.starts_with("line 6: [NIC1] NETMASK: static IPADDR needs NETMASK; line 7 has NETMAKS, did you mean NETMASK?"),
        "{err}"
    );
    // DHCP ignores IPADDR, so no netmask is needed there.
    Spec::parse(format!("{NIC1}IPADDR = 10.0.0.2\n").as_bytes()).unwrap();
}

#[test]
fn a_gateway_outside_the_subnet_is_a_warning() {
    let warnings = warnings_of(&format!(
        "{NIC1}BOOTPROTO = static\nIPADDR = 10.0.0.2\nNETMASK = 255.255.255.0\nGATEWAY = 10.0.0.1, 10.0.1.1\n"
    ));
    assert_eq!(
        warnings,
        ["line 8: [NIC1] GATEWAY: gateway 10.0.1.1 is outside the nic's subnet 10.0.0.0/24; check IPADDR, NETMASK and GATEWAY"]
    );
    assert!(warnings_of(&format!(
        "{NIC1}BOOTPROTO = static\nIPADDR = 10.0.0.2\nNETMASK = 0\nGATEWAY = 192.168.1.1\n"
    ))
    .is_empty());
}
