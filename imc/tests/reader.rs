//! Table tests for the strict INI reader (`RawSpec::parse`).

use vmcust_imc::{RawSpec, ReadError};

/// Parses and returns `(flat key, value, line)` for every entry.
fn entries(input: &[u8]) -> Vec<(String, String, usize)> {
    let raw = RawSpec::parse(input).unwrap_or_else(|e| panic!("{e}"));
    raw.entries()
        .map(|e| (e.flat_key(), e.value.clone(), e.line))
        .collect()
}

/// One row: name, input, expected `(flat key, value, line)` entries.
type Row<'a> = (&'a str, &'a [u8], &'a [(&'a str, &'a str, usize)]);

fn owned(rows: &[(&str, &str, usize)]) -> Vec<(String, String, usize)> {
    rows.iter()
        .map(|(k, v, l)| (k.to_string(), v.to_string(), *l))
        .collect()
}

#[test]
fn accepted_inputs() {
    let table: &[Row] = &[
        ("plain", b"[A]\nk = v\n", &[("A|k", "v", 2)]),
        ("bom", b"\xEF\xBB\xBF[A]\nk=v", &[("A|k", "v", 2)]),
        (
            "crlf",
            b"[A]\r\nk = v\r\nj = w\r\n",
            &[("A|k", "v", 2), ("A|j", "w", 3)],
        ),
        ("colon delimiter", b"[A]\nk: v\n", &[("A|k", "v", 2)]),
        (
            "first delimiter splits",
            b"[NIC1]\nMACADDR = 00:50:56:a6:8c:08\n",
            &[("NIC1|MACADDR", "00:50:56:a6:8c:08", 2)],
        ),
        (
            "colon before equals",
            b"[A]\nk: a=b\n",
            &[("A|k", "a=b", 2)],
        ),
        (
            "base64 padding kept",
            b"[PASSWORD]\n-PASS = c2VjcmV0Cg==\n",
            &[("PASSWORD|-PASS", "c2VjcmV0Cg==", 2)],
        ),
        (
            "comments",
            b"# top\n; top\n[A]\n# c\n  ; indented comment\nk = v\n",
            &[("A|k", "v", 6)],
        ),
        (
            "blank lines",
            b"\n\n[A]\n\n   \nk = v\n\n",
            &[("A|k", "v", 6)],
        ),
        (
            "whitespace trimmed",
            b"[ A ]\nk   =   v \t\n",
            &[("A|k", "v", 2)],
        ),
        (
            "empty value",
            b"[NETWORK]\nDOMAINNAME =\n",
            &[("NETWORK|DOMAINNAME", "", 2)],
        ),
        (
            "percent literal",
            b"[A]\nk = 100%s %(x)s %\n",
            &[("A|k", "100%s %(x)s %", 2)],
        ),
        (
            "inline semicolon kept",
            b"[A]\nk = v ; c # d\n",
            &[("A|k", "v ; c # d", 2)],
        ),
        (
            "case-sensitive",
            b"[A]\nk = 1\nK = 2\n[a]\nk = 3\n",
            &[("A|k", "1", 2), ("A|K", "2", 3), ("a|k", "3", 5)],
        ),
        (
            "pipe in option",
            b"[DNS]\nNAMESERVER|1 = 10.0.0.1\n",
            &[("DNS|NAMESERVER|1", "10.0.0.1", 2)],
        ),
        (
            "default is ordinary",
            b"[DEFAULT]\nk = v\n[A]\n",
            &[("DEFAULT|k", "v", 2)],
        ),
        ("no trailing newline", b"[A]\nk = v", &[("A|k", "v", 2)]),
    ];
    for (name, input, want) in table {
        assert_eq!(entries(input), owned(want), "{name}");
    }
}

#[test]
fn section_headers_are_trimmed_and_listed_in_order() {
    let raw = RawSpec::parse(b"[ B ]\n[A]\nk = v\n").unwrap();
    let names: Vec<(&str, usize)> = raw
        .sections()
        .iter()
        .map(|s| (s.name.as_str(), s.line))
        .collect();
    assert_eq!(names, [("B", 1), ("A", 2)]);
    assert!(raw.section("B").is_some());
    assert_eq!(raw.section_entries("A").count(), 1);
    assert!(raw.get("A|missing").is_none());
}

#[test]
fn rejected_inputs() {
    use ReadError::*;
    let dup_key = |first_line, line| DuplicateKey {
        section: "A".into(),
        key: "k".into(),
        first_line,
        line,
    };
    let table: &[(&str, &[u8], ReadError)] = &[
        (
            "duplicate section",
            b"[A]\nk = v\n\n[A]\n",
            DuplicateSection {
                section: "A".into(),
                first_line: 1,
                line: 4,
            },
        ),
        (
            "duplicate key",
            b"[A]\nk = v\nj = w\nk = x\n",
            dup_key(2, 4),
        ),
        (
            "duplicate key, other delimiter",
            b"[A]\nk = v\nk: x\n",
            dup_key(2, 3),
        ),
        (
            "flat key collision",
            b"[A]\nB|k = 1\n[A|B]\nk = 2\n",
            DuplicateKey {
                section: "A|B".into(),
                key: "k".into(),
                first_line: 2,
                line: 4,
            },
        ),
        (
            "text before first section",
            b"# c\nk = v\n[A]\n",
            BeforeFirstSection { line: 2 },
        ),
        (
            "garbage line",
            b"[A]\nk = v\njust words\n",
            Malformed { line: 3 },
        ),
        ("empty key", b"[A]\n= v\n", Malformed { line: 2 }),
        (
            "space in key",
            b"[PASSWORD]\n-PASS c2VjcmV0Cg==\n",
            Malformed { line: 2 },
        ),
        ("empty header", b"[]\n", Malformed { line: 1 }),
        ("unclosed header", b"[A\n", Malformed { line: 1 }),
        ("junk after header", b"[A] x\n", Malformed { line: 1 }),
        (
            "non-utf8",
            b"[A]\nk = v\nj = \xff\xfe\n",
            NotUtf8 { line: 3 },
        ),
        ("non-utf8 crlf", b"[A]\r\n\xc3\r\n", NotUtf8 { line: 2 }),
        (
            "continuation",
            b"[A]\nk = v\n  more\n",
            Continuation { line: 3 },
        ),
        (
            "tab continuation",
            b"[A]\nk = v\n\tj = w\n",
            Continuation { line: 3 },
        ),
        ("indented header", b" [A]\n", Continuation { line: 1 }),
        // Even right after a header, where ConfigParser would take it as an option.
        (
            "indented option",
            b"[A]\n k = v\n",
            Continuation { line: 2 },
        ),
    ];
    for (name, input, want) in table {
        assert_eq!(&RawSpec::parse(input).unwrap_err(), want, "{name}");
    }
}

#[test]
fn read_errors_name_the_lines_but_not_the_text() {
    let e = RawSpec::parse(b"[A]\nk = v\nk = secret\n")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "line 3: duplicate key k in [A] (first at line 2)");
    let e = RawSpec::parse(b"[A]\n-PASS = x\n  hunter2\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("line 3: indented line; continuation lines are not supported"),
        "{e}"
    );
    assert!(!e.contains("hunter2"));
    let e = RawSpec::parse(b"[A]\nhunter2\n").unwrap_err().to_string();
    assert!(e.starts_with("line 2: not a [SECTION] header"), "{e}");
    assert!(!e.contains("hunter2"));
}
