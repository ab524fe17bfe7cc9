//! Property tests for the interface-name globs of network `match` entries: the matcher
//! agrees with a naive recursive matcher on random globs and names, names always match
//! the globs made from them, and parsing arbitrary text never panics.

use proptest::prelude::*;

use vmcust::test_api::model::Glob;

/// A glob piece as the naive matcher sees it.
#[derive(Debug, Clone)]
enum Piece {
    Lit(char),
    One,
    Star,
    Class(bool, char, char),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => proptest::char::range('a', 'e').prop_map(Piece::Lit),
        1 => Just(Piece::One),
        1 => Just(Piece::Star),
        1 => (any::<bool>(), proptest::char::range('a', 'c'), proptest::char::range('c', 'e'))
            .prop_map(|(n, lo, hi)| Piece::Class(n, lo, hi)),
    ]
}

fn text(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Lit(c) => c.to_string(),
            Piece::One => "?".into(),
            Piece::Star => "*".into(),
            Piece::Class(neg, lo, hi) => format!("[{}{lo}-{hi}]", if *neg { "!" } else { "" }),
        })
        .collect()
}

/// The obvious exponential definition of matching.
fn naive(p: &[Piece], n: &[char]) -> bool {
    match p.split_first() {
        None => n.is_empty(),
        Some((Piece::Star, rest)) => (0..=n.len()).any(|k| naive(rest, &n[k..])),
        Some((first, rest)) => match n.split_first() {
            None => false,
            Some((c, tail)) => {
                let ok = match first {
                    Piece::Lit(l) => l == c,
                    Piece::One => true,
                    Piece::Class(neg, lo, hi) => (lo..=hi).contains(&c) != *neg,
                    Piece::Star => unreachable!(),
                };
                ok && naive(rest, tail)
            }
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn agrees_with_the_naive_matcher(
        pieces in proptest::collection::vec(piece(), 1..8),
        name in "[a-e]{0,10}",
    ) {
        let glob = text(&pieces);
        let g = Glob::parse(&glob).unwrap();
        let n: Vec<char> = name.chars().collect();
        prop_assert_eq!(g.matches(&name), naive(&pieces, &n), "{} vs {}", glob, name);
    }

    #[test]
    fn names_match_the_globs_made_from_them(
        name in "[a-z0-9]{1,15}",
        at in 0usize..15,
        len in 0usize..15,
    ) {
        let at = at % name.len();
        let end = (at + len).min(name.len());
        // A run replaced by `*`, one character by `?`, and the name escaped as a literal.
        let star = format!("{}*{}", &name[..at], &name[end..]);
        let one = format!("{}?{}", &name[..at], &name[at + 1..]);
        prop_assert!(Glob::parse(&star).unwrap().matches(&name), "{}", star);
        prop_assert!(Glob::parse(&one).unwrap().matches(&name), "{}", one);
        prop_assert!(Glob::literal(&name).unwrap().matches(&name));
        let longer = format!("{name}x");
        prop_assert!(!Glob::literal(&name).unwrap().matches(&longer));
    }

    #[test]
    fn parsing_anything_never_panics(s in "\\PC{0,40}", name in "\\PC{0,20}") {
        if let Ok(g) = Glob::parse(&s) {
            let _ = g.matches(&name);
            prop_assert_eq!(g.as_str(), s.as_str());
        }
    }
}
