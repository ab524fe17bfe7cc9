//! Typos caught at the door: misspelt section names and an FQDN too long as a whole.

use vmcust_imc::{Spec, SpecError};

/// What reading a spec should give: an error naming these words, or success with warnings
/// naming them (empty: no warning at all).
enum Want {
    Error(&'static [&'static str]),
    Warn(&'static [&'static str]),
}

fn check(name: &str, text: &str, want: Want) {
    let result = Spec::parse(text.as_bytes());
    match (result, want) {
        (Err(SpecError::Invalid(problems)), Want::Error(words)) => {
            let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
            assert_eq!(shown.len(), 1, "{name}: {shown:?}");
            for w in words {
                assert!(shown[0].contains(w), "{name}: {w:?} not in {:?}", shown[0]);
            }
        }
        (Ok(parsed), Want::Warn(words)) => {
            let shown: Vec<String> = parsed.warnings.iter().map(ToString::to_string).collect();
            if words.is_empty() {
                assert!(shown.is_empty(), "{name}: {shown:?}");
            }
            for w in words {
                assert!(
                    shown.iter().filter(|s| s.contains(w)).count() == 1,
                    "{name}: {w:?} not once in {shown:?}"
                );
            }
        }
        (Err(e), _) => panic!("{name}: refused: {e}"),
        (Ok(p), Want::Error(_)) => panic!("{name}: accepted: {:?}", p.warnings),
    }
}

#[test]
fn misspelt_sections() {
    let rows: &[(&str, &str, Want)] = &[
        (
            "dns typo hides the dns",
            "[NETWORK]\nHOSTNAME = web\n[DSN]\nNAMESERVER|1 = 10.0.0.1\n",
            Want::Error(&["line 3: [DSN]", "did you mean [DNS]?", "no [DNS]"]),
        ),
        (
            "datetime typo hides the time zone",
            "[DATETIM]\nTIMEZONE = Asia/Tokyo\n",
            Want::Error(&["line 1: [DATETIM]", "did you mean [DATETIME]?"]),
        ),
        (
            "wrong case is a typo too",
            "[password]\n-PASS = c2VjcmV0\n",
            Want::Error(&["line 1: [password]", "did you mean [PASSWORD]?"]),
        ),
        (
            "swapped letters",
            "[MSIC]\nMARKER-ID = m1\n",
            Want::Error(&["[MSIC]", "did you mean [MISC]?"]),
        ),
        (
            "typo beside the real section is a warning",
            "[DNS]\nNAMESERVER|1 = 10.0.0.1\n[DSN]\nSUFFIX|1 = example.com\n",
            Want::Warn(&[
                "line 3: [DSN]: unknown section; kept but not used; did you mean [DNS]? (there is a [DNS] too, at line 1)",
            ]),
        ),
        (
            "far from every known section",
            "[NETWORK]\nHOSTNAME = web\n[VENDOR-EXTRA]\nX = 1\n",
            Want::Warn(&["line 3: [VENDOR-EXTRA]: unknown section; kept but not used"]),
        ),
        (
            "an unlisted nic section keeps its own warning",
            "[NETWORK]\nHOSTNAME = web\n[NIC7]\nMACADDR = 00:50:56:00:00:01\n",
            Want::Warn(&["[NIC7]: nic section not listed"]),
        ),
        (
            "known sections only",
            "[NETWORK]\nHOSTNAME = web\n[DNS]\nNAMESERVER|1 = 10.0.0.1\n",
            Want::Warn(&[]),
        ),
    ];
    for (name, text, want) in rows {
        let want = match want {
            Want::Error(w) => Want::Error(w),
            Want::Warn(w) => Want::Warn(w),
        };
        check(name, text, want);
    }
}

#[test]
fn the_whole_fqdn_fits_in_253_characters() {
    let label = |c: char, n: usize| c.to_string().repeat(n);
    // A domain of 63 + 1 + 63 + 1 + 63 + 1 + n characters.
    let domain = |n: usize| {
        [
            label('b', 63),
            label('c', 63),
            label('d', 63),
            label('e', n),
        ]
        .join(".")
    };
    let spec =
        |host: &str, domain: &str| format!("[NETWORK]\nHOSTNAME = {host}\nDOMAINNAME = {domain}\n");
    let rows = [
        // (host, domain's last label, whole length, accepted)
        (label('a', 57), 3, 253, true),
        (label('a', 58), 3, 254, false),
        (label('a', 63), 61, 317, false),
        // An FQDN as HOSTNAME: only its first label joins DOMAINNAME.
        (format!("{}.long.example.com", label('a', 57)), 3, 253, true),
    ];
    for (host, last, length, accepted) in rows {
        let text = spec(&host, &domain(last));
        let short = host.split('.').next().unwrap();
        assert_eq!(short.len() + 1 + domain(last).len(), length);
        let want = if accepted {
            Want::Warn(&[])
        } else {
            Want::Error(&["line 3: [NETWORK] DOMAINNAME", "more than the 253"])
        };
        check(&format!("fqdn of {length}"), &text, want);
    }
}

#[test]
fn a_misspelt_nic_section_is_named() {
    let text = "[NIC-CONFIG]\nNICS = NIC1\n[NCI1]\nMACADDR = 00:50:56:a6:8c:08\n";
    check(
        "nic section typo",
        text,
        Want::Error(&[
            "line 2: [NIC-CONFIG] NICS: nic NIC1 is listed but there is no [NIC1] section; did you mean [NCI1] (line 3)?",
        ]),
    );
}
