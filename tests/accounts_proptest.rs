//! Properties of the accounts door and writer: whatever string user-data holds, a value the
//! request types accept never carries a `:` or a control character into an account file,
//! and the account-file writer either refuses a line or writes exactly the fields it was
//! given, leaving every other line as it was.

use proptest::prelude::*;

use vmcust::test_api::dbfile::DbEdit;
use vmcust::test_api::request::{AbsPath, Gecos, GroupName, PasswordHash, SudoRule};

fn breaks_a_line(s: &str) -> bool {
    s.chars().any(|c| c.is_control())
}

proptest! {
    #[test]
    fn accepted_values_cannot_break_the_files(s in "\\PC*|[a-z:/\\n\\t\\x00 ,.$!*-]{0,40}") {
        if let Ok(v) = Gecos::parse(&s) {
            prop_assert!(!v.as_str().contains(':') && !breaks_a_line(v.as_str()));
        }
        if let Ok(v) = AbsPath::parse(&s, "shell") {
            prop_assert!(v.as_str().starts_with('/') && !v.as_str().contains(':'));
            prop_assert!(!breaks_a_line(v.as_str()));
        }
        if let Ok(v) = GroupName::parse(&s) {
            prop_assert!(v.as_str().bytes().all(|b| b.is_ascii_alphanumeric() || b"._-$".contains(&b)));
        }
        if let Ok(v) = SudoRule::parse(&s) {
            prop_assert!(!breaks_a_line(v.as_str()) && !v.as_str().ends_with('\\'));
        }
        if let Ok(v) = PasswordHash::parse(s.clone()) {
            prop_assert!(!v.expose().contains(':') && !breaks_a_line(v.expose()));
        }
    }

    #[test]
    fn the_writer_appends_exactly_or_refuses(
        existing in proptest::collection::vec("[a-z]{1,8}:[x!*]:[0-9]{1,4}:[a-z,]{0,12}", 0..6),
        fields in proptest::collection::vec("\\PC{0,12}|[a-z:\\n]{0,6}", 1..8),
    ) {
        let before = existing.join("\n") + if existing.is_empty() { "" } else { "\n" };
        let mut e = DbEdit::new("/etc/group", before.as_bytes());
        let refs: Vec<&str> = fields.iter().map(String::as_str).collect();
        match e.append(&refs) {
            Err(_) => {
                prop_assert!(fields.iter().any(|f| f.contains(':') || breaks_a_line(f)));
                prop_assert_eq!(e.bytes(), before.as_bytes());
            }
            Ok(()) => {
                let after = String::from_utf8(e.bytes()).unwrap();
                prop_assert!(after.starts_with(&before));
                let added = &after[before.len()..];
                prop_assert_eq!(added.strip_suffix('\n').unwrap().split(':').collect::<Vec<_>>(), refs);
            }
        }
    }
}
