//! The password never shows up: not in Debug, Display, JSON, warnings or errors, valid or not.

use vmcust_imc::{RawSpec, Spec};

const PLAIN: &str = "Tr0ub4dor&3";
const B64: &str = "VHIwdWI0ZG9yJjM="; // base64 of PLAIN

fn assert_hidden(text: &str, secrets: &[&str]) {
    for s in secrets {
        assert!(!text.contains(s), "{s:?} leaked in:\n{text}");
    }
}

#[test]
fn valid_password_is_redacted_everywhere() {
    let cfg = format!("[PASSWORD]\n-PASS = {B64}\nRESET = no\n[X]\nY|-Z = {B64}\n");
    let raw = RawSpec::parse(cfg.as_bytes()).unwrap();
    assert_hidden(&format!("{raw:?}"), &[PLAIN, B64]);
    let parsed = Spec::parse(cfg.as_bytes()).unwrap();
    let secret = parsed.spec.password.root.as_ref().unwrap();
    assert_eq!(secret.expose(), PLAIN);
    let all = format!(
        "{:?} {secret} {secret:?} {} {:?}",
        parsed,
        serde_json::to_string(&parsed).unwrap(),
        parsed
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
    assert_hidden(&all, &[PLAIN, B64]);
    assert!(all.contains("<redacted>"));
}

#[test]
fn invalid_passwords_are_not_echoed() {
    for (value, hidden) in [
        ("VHIwdWI0ZG9yJjM", "VHIwdWI0ZG9yJjM"), // bad padding
        ("Tr0ub4dor&3", "Tr0ub4dor&3"),         // not base64
        ("/w==", "/w=="),                       // not UTF-8 after decoding
        ("VHIw dWI0", "VHIw"),                  // inner space
    ] {
        // Make the spec invalid in another place too, so the error lists several problems.
        let cfg = format!("[PASSWORD]\n-PASS = {value}\n[DATETIME]\nUTC = maybe\n");
        let err = Spec::parse(cfg.as_bytes()).unwrap_err();
        let text = format!("{err}\n{err:?}");
        assert!(
            text.starts_with("line 2: [PASSWORD] -PASS = <redacted>: "),
            "{text}"
        );
        assert!(text.contains("line 4: [DATETIME] UTC"), "{text}");
        assert_hidden(&text, &[hidden]);
    }
}

#[test]
fn secret_values_in_read_errors_are_not_echoed() {
    // A continuation line glued to the password, and a password line without a delimiter.
    for cfg in [
        format!("[PASSWORD]\n-PASS = {B64}\n  {PLAIN}\n"),
        format!("[PASSWORD]\n-PASS {B64}\n"),
    ] {
        let err = Spec::parse(cfg.as_bytes()).unwrap_err();
        assert_hidden(&format!("{err} {err:?}"), &[PLAIN, B64]);
    }
}

/// Every key of the [PASSWORD] section is a secret, a misspelt one (`PASSWORD = ...` for
/// `-PASS`) too: kept for `show`, but never printed in clear.
#[test]
fn unknown_keys_in_the_password_section_are_redacted() {
    // (cust.cfg, whether the value is kept, shown as <redacted>)
    for (cfg, kept) in [
        (format!("[PASSWORD]\nPASSWORD = {PLAIN}\n"), true),
        (format!("[PASSWORD]\n-PASS = {B64}\nPASS = {PLAIN}\n"), true),
        // Not the section (names are case-sensitive: refused), and still not echoed.
        (format!("[password]\nsecret = {PLAIN}\n"), false),
    ] {
        let raw = RawSpec::parse(cfg.as_bytes()).unwrap();
        assert_hidden(&format!("{raw:?}"), &[PLAIN]);
        let text = match Spec::parse(cfg.as_bytes()) {
            Ok(parsed) => format!(
                "{parsed:?} {} {:?}",
                serde_json::to_string(&parsed).unwrap(),
                parsed
                    .warnings
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
            ),
            Err(e) => format!("{e}\n{e:?}"),
        };
        assert_hidden(&text, &[PLAIN]);
        assert_eq!(text.contains("<redacted>"), kept, "{cfg}: {text}");
    }
}
