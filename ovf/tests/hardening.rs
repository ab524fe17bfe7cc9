//! Issue 9: strict attributes, capped size, short messages and no echoed values.

use vmcust_ovf::{parse, read_env_capped, EnvError, EnvReadError, IsoError, MAX_OVF_ENV_BYTES};

fn doc(property: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:oe="http://schemas.dmtf.org/ovf/environment/1" xmlns:o2="http://schemas.dmtf.org/ovf/environment/1">
  <PropertySection>
    {property}
  </PropertySection>
</Environment>
"#
    )
}

fn malformed(xml: &str) -> String {
    match parse(xml.as_bytes()) {
        Err(e @ EnvError::Malformed { .. }) => e.to_string(),
        other => panic!("{xml}\n{other:?}"),
    }
}

#[test]
fn duplicate_attributes_are_refused() {
    let err = malformed(&doc(r#"<Property oe:key="a" oe:value="1" oe:value="2"/>"#));
    assert!(
        err.contains("line 4") && err.contains("duplicate attribute"),
        "{err}"
    );
    // The same namespace and local name under two prefixes is a duplicate too.
    let err = malformed(&doc(r#"<Property oe:key="a" oe:value="1" o2:value="2"/>"#));
    assert!(err.contains("duplicate attribute o2:value"), "{err}");
    // Prefixed and unprefixed are different attributes (the prefixed one wins).
    let env = parse(doc(r#"<Property oe:key="a" oe:value="1" value="2"/>"#).as_bytes()).unwrap();
    assert_eq!(env.property("a"), Some("1"));
}

#[test]
fn a_less_than_sign_in_a_value_is_refused_unshown() {
    let err = malformed(&doc(r#"<Property oe:key="password" oe:value="hun<ter2"/>"#));
    assert!(err.contains("`<` inside the value of oe:value"), "{err}");
    assert!(!err.contains("hun") && !err.contains("ter2"), "{err}");
}

#[test]
fn a_bad_entity_in_a_password_is_not_echoed() {
    let err = malformed(&doc(
        r#"<Property oe:key="password" oe:value="s3&cr3t;x"/>"#,
    ));
    assert!(
        err.contains("invalid entity or character reference in the value of oe:value"),
        "{err}"
    );
    assert!(!err.contains("cr3t") && !err.contains("s3"), "{err}");
}

#[test]
fn big_documents_are_refused_before_parsing() {
    let big = doc(&format!(
        r#"<Property oe:key="a" oe:value="{}"/>"#,
        "x".repeat(MAX_OVF_ENV_BYTES as usize)
    ));
    let err = parse(big.as_bytes()).unwrap_err();
    assert!(
        matches!(err, EnvError::TooLarge { max: 1048576, .. }),
        "{err}"
    );
    assert!(
        read_env_capped(big.as_bytes()).is_err_and(|e| matches!(e, EnvReadError::TooLarge { .. }))
    );
    assert!(read_env_capped(std::io::repeat(b'x')).is_err());
    assert_eq!(read_env_capped(&b"<x/>"[..]).unwrap(), b"<x/>");
}

#[test]
fn long_names_are_cut_in_messages() {
    let name = "R".repeat(100_000);
    let err = parse(format!("<{name}/>").as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        err.len() < 300 && err.contains("(100000 bytes)"),
        "{}",
        &err[..300]
    );
    let err = malformed(&format!("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"><{name}></x></Environment>"));
    assert!(err.len() < 400, "{}", &err[..400]);
}

#[test]
fn iso_errors_say_whether_the_medium_was_unreadable() {
    let io = IsoError::Io {
        offset: 0,
        source: std::io::Error::other("eio"),
    };
    assert!(io.is_unreadable());
    assert!(!IsoError::Malformed("x".into()).is_unreadable());
    assert!(!IsoError::NotIso("x".into()).is_unreadable());
}
