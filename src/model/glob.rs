//! Shell-style globs as netplan and systemd-networkd match interface names and drivers
//! (`*`, `?`, `[...]` with `!`/`^` negation and ranges, `\` escapes), checked when read.
//!
//! networkd hands `Name=`/`Driver=` globs to `fnmatch(3)` without flags, so `*` also
//! matches `/` and a leading `.`; this does the same. Where `fnmatch` would quietly take
//! a broken pattern literally (an unclosed `[`), [`Glob::parse`] refuses it: a typo in a
//! match must not turn into "matches nothing".

use std::fmt;

use serde::Serialize;

/// Longest glob accepted, in bytes: interface names are at most 15 bytes and driver
/// names short, so anything longer is a mistake (or hostile).
pub(crate) const MAX_GLOB_LEN: usize = 128;

/// One piece of a compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// `*`: any run of characters, the empty one included.
    Star,
    /// `?`: exactly one character.
    One,
    /// A character that must be there as is.
    Literal(char),
    /// `[...]`: one character in (or, negated, not in) these inclusive ranges.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// A validated shell-style glob, kept with its text for messages and output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    text: String,
    tokens: Vec<Token>,
}

impl Glob {
    /// Parses a glob. Refused: the empty glob, more than [`MAX_GLOB_LEN`] bytes, spaces,
    /// control or non-ASCII characters (networkd splits its lists on spaces; names are
    /// ASCII), a trailing lone `\`, an unclosed or empty `[...]`, a reversed range
    /// (`[z-a]`) and POSIX classes (`[[:digit:]]`, which netplan's other back end does
    /// not share). The message says what to write instead.
    pub fn parse(text: &str) -> Result<Glob, String> {
        if text.is_empty() {
            return Err(
                "the glob is empty; write a name such as ens192 or a pattern such as ens*".into(),
            );
        }
        if text.len() > MAX_GLOB_LEN {
            return Err(format!(
                "the glob is {} bytes long; at most {MAX_GLOB_LEN} are accepted",
                text.len()
            ));
        }
        if let Some(c) = text.chars().find(|c| !c.is_ascii_graphic()) {
            return Err(format!(
                "{} holds {c:?}; a glob is printable ASCII without spaces",
                super::quote(text)
            ));
        }
        let chars: Vec<char> = text.chars().collect();
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            i += 1;
            match c {
                '*' => {
                    // `**` means the same as `*`; one token keeps matching linear.
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                }
                '?' => tokens.push(Token::One),
                '\\' => {
                    let Some(&next) = chars.get(i) else {
                        return Err(format!(
                            "{} ends with a lone backslash; write \\\\ for a backslash",
                            super::quote(text)
                        ));
                    };
                    tokens.push(Token::Literal(next));
                    i += 1;
                }
                '[' => {
                    let (token, next) = class(&chars, i - 1)
                        .map_err(|why| format!("{}: {why}", super::quote(text)))?;
                    tokens.push(token);
                    i = next;
                }
                c => tokens.push(Token::Literal(c)),
            }
        }
        Ok(Glob {
            text: text.to_string(),
            tokens,
        })
    }

    /// A glob that matches exactly `name` (its special characters escaped), for entries
    /// that name their interface outright.
    pub fn literal(name: &str) -> Result<Glob, String> {
        let mut escaped = String::with_capacity(name.len() * 2);
        for c in name.chars() {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        let mut g = Glob::parse(&escaped)?;
        g.text = name.to_string();
        Ok(g)
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the glob has no wildcard, so it can match one name only.
    pub fn is_literal(&self) -> bool {
        self.tokens.iter().all(|t| matches!(t, Token::Literal(_)))
    }

    /// Whether the whole of `name` matches. Linear in practice: on a mismatch only the
    /// last `*` is retried one character further, which is enough for globs whose only
    /// variable-length token is `*`.
    pub fn matches(&self, name: &str) -> bool {
        let n: Vec<char> = name.chars().collect();
        let g = &self.tokens;
        let (mut gi, mut ni) = (0, 0);
        // Where the last `*` was, and how far into the name it has swallowed.
        let mut star: Option<(usize, usize)> = None;
        while ni < n.len() {
            match g.get(gi) {
                Some(Token::Star) => {
                    star = Some((gi, ni));
                    gi += 1;
                    continue;
                }
                Some(t) if one_char(t, n[ni]) => {
                    gi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
            match star {
                Some((sg, sn)) => {
                    star = Some((sg, sn + 1));
                    gi = sg + 1;
                    ni = sn + 1;
                }
                None => return false,
            }
        }
        g[gi..].iter().all(|t| *t == Token::Star)
    }
}

/// Whether a single-character token takes `c`.
fn one_char(t: &Token, c: char) -> bool {
    match t {
        Token::Star => false,
        Token::One => true,
        Token::Literal(l) => *l == c,
        Token::Class { negated, ranges } => {
            ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
        }
    }
}

/// Parses the class starting at `chars[open]` (a `[`): its token and the index after
/// its closing `]`. A `]` right after the `[` (or `[!`) is a member, as in `fnmatch`.
fn class(chars: &[char], open: usize) -> Result<(Token, usize), String> {
    let mut i = open + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let first = i;
    let mut ranges = Vec::new();
    loop {
        let Some(&c) = chars.get(i) else {
            return Err(format!(
                "the [ at position {} is never closed; close it with ] or write \\[ for a bracket",
                open + 1
            ));
        };
        if c == ']' && i > first {
            break;
        }
        if c == '[' && chars.get(i + 1) == Some(&':') {
            return Err(
                "character classes such as [:digit:] are not supported; list the characters, as in [0-9]"
                    .into(),
            );
        }
        let (lo, after) = member(chars, i)?;
        i = after;
        // `a-z` is a range unless the `-` is last before `]`.
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&c| c != ']') {
            let (hi, after) = member(chars, i + 1)?;
            if hi < lo {
                return Err(format!("the range {lo}-{hi} is reversed; write {hi}-{lo}"));
            }
            ranges.push((lo, hi));
            i = after;
        } else {
            ranges.push((lo, lo));
        }
    }
    Ok((Token::Class { negated, ranges }, i + 1))
}

/// One class member at `chars[i]` (a `\` escapes the next character): it and the index
/// after it.
fn member(chars: &[char], i: usize) -> Result<(char, usize), String> {
    match (chars.get(i), chars.get(i + 1)) {
        (Some('\\'), Some(&c)) => Ok((c, i + 2)),
        (Some('\\'), None) | (None, _) => Err("a [...] class is never closed".into()),
        (Some(&c), _) => Ok((c, i + 1)),
    }
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Glob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_table() {
        let table: &[(&str, &str, bool)] = &[
            ("ens*", "ens192", true),
            ("ens*", "ens", true),
            ("ens*", "eth0", false),
            ("en*", "ens192", true),
            ("*", "anything", true),
            ("*", "", true),
            ("eth?", "eth1", true),
            ("eth?", "eth10", false),
            ("eth?", "eth", false),
            ("eth[0-3]", "eth2", true),
            ("eth[0-3]", "eth4", false),
            ("eth[!0-3]", "eth4", true),
            ("eth[^0-3]", "eth1", false),
            ("eth[]x]", "eth]", true),
            ("eth[!]]", "eth]", false),
            ("eth[a-]", "eth-", true),
            ("ens\\*", "ens*", true),
            ("ens\\*", "ens1", false),
            ("*192", "ens192", true),
            ("e*1*2", "ens192", true),
            ("e*1*3", "ens192", false),
            ("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
            ("**", "x", true),
            ("vmxnet?", "vmxnet3", true),
            ("e1000*", "e1000e", true),
            ("ens192", "ens192", true),
            ("ens192", "ens1920", false),
            ("ens192", "ens19", false),
        ];
        for (glob, name, want) in table {
            let g = Glob::parse(glob).unwrap_or_else(|e| panic!("{glob}: {e}"));
            assert_eq!(g.matches(name), *want, "{glob} vs {name}");
        }
    }

    #[test]
    fn bad_globs_are_refused_with_the_reason() {
        let table: &[(&str, &str)] = &[
            ("", "empty"),
            ("ens[0-9", "never closed"),
            ("ens[", "never closed"),
            ("ens[!", "never closed"),
            ("ens[]", "never closed"),
            ("ens\\", "lone backslash"),
            ("ens[9-0]", "reversed"),
            ("ens[[:digit:]]", "character classes"),
            ("ens 192", "without spaces"),
            ("ens\n", "without spaces"),
            ("ensé", "printable ASCII"),
        ];
        for (glob, want) in table {
            let e = Glob::parse(glob).unwrap_err();
            assert!(e.contains(want), "{glob:?}: {e}");
        }
        let long = "e".repeat(MAX_GLOB_LEN + 1);
        assert!(Glob::parse(&long).unwrap_err().contains("at most"));
        assert!(Glob::parse(&"e".repeat(MAX_GLOB_LEN)).is_ok());
    }

    #[test]
    fn literals_match_only_themselves() {
        for name in ["eth0", "ens*", "a[1]", "x?y"] {
            let g = Glob::literal(name).unwrap();
            assert!(g.is_literal(), "{name}");
            assert!(g.matches(name), "{name}");
            assert_eq!(g.as_str(), name);
        }
        assert!(!Glob::literal("ens*").unwrap().matches("ens192"));
        assert!(!Glob::parse("ens*").unwrap().is_literal());
        assert!(Glob::parse("ens192").unwrap().is_literal());
    }
}
