//! Interface-name globs (`match: name`/`driver`): `GLOB\0NAME` parsed and matched. Parsing
//! never panics; a parsed glob matches without panicking, and an escaped literal of a
//! name always matches that name exactly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcust::test_api::model::Glob;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (glob, name) = text.split_once('\0').unwrap_or((text, ""));
    if let Ok(g) = Glob::parse(glob) {
        let _ = g.matches(name);
        assert_eq!(g.as_str(), glob);
        // A glob without wildcards matches only the name it spells (its escapes undone).
        if g.is_literal() && !glob.contains('\\') {
            assert!(g.matches(glob));
            assert!(!g.matches(&format!("{glob}x")));
        }
    }
    if let Ok(l) = Glob::literal(name) {
        assert!(l.matches(name), "literal {name:?}");
        assert!(l.is_literal());
    }
});
