//! A policy's file contexts (`file_contexts`, `.homedirs`, `.local`, `.subs`, `.subs_dist`)
//! parsed and matched with libselinux's `selabel_lookup` rules.
//!
//! The rules, as libselinux's `label_file.c` has them:
//! - each line is `regex [type] context` (`#` starts a comment line); the regex is
//!   anchored as `^` + regex + `$` (not grouped, so a top-level `|` binds as it does
//!   there) and matched byte-wise with `.` matching every byte (PCRE2 with `DOTALL`);
//! - the type, when present, limits the line to one kind of file (`--` regular file,
//!   `-d` directory, `-l` symlink, `-c`, `-b`, `-s`, `-p`);
//! - a line whose regex has no meta characters is a literal: any literal that matches
//!   beats every regex; among literals, and among regexes, the last line wins (files in
//!   the order base, `.homedirs`, `.local`; lines in file order);
//! - a regex is only tried on paths under its stem, the literal directories it starts
//!   with (at most 3, libselinux 3.8's spec tree; 3.4 keeps only the first, which differs
//!   only for a top-level `|`): `/srv/a|/srv/b` never matches `/x/srv/b`;
//! - a winning context of `<<none>>` means the path gets no label;
//! - the path is first cleaned (`//` folded, a trailing `/` dropped), then rewritten by
//!   the first matching local substitution (`.subs`), then by the first matching
//!   distribution one (`.subs_dist`); substitutions are tried last line first, and a
//!   source matches only whole leading components.

use std::fmt;
use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder};

/// Lines read from all the inputs together, at most.
pub(crate) const MAX_SPECS: usize = 200_000;
/// A regex longer than this is refused (as libselinux does, to bound compile time).
const MAX_REGEX_LEN: usize = 4095;
/// A context longer than this is refused.
pub(crate) const MAX_CONTEXT_LEN: usize = 1024;
/// Compiled size limit of one regex (the `regex` crate's own limit, made explicit).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Which kind of file a specification applies to, or which kind is being labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Any kind (a line without a type).
    Any,
    /// A regular file (`--`).
    File,
    /// A directory (`-d`).
    Dir,
    /// A symbolic link (`-l`).
    Symlink,
    /// A character device (`-c`).
    Char,
    /// A block device (`-b`).
    Block,
    /// A socket (`-s`).
    Socket,
    /// A named pipe (`-p`).
    Fifo,
}

impl Kind {
    fn parse(field: &str) -> Option<Kind> {
        Some(match field {
            "--" => Kind::File,
            "-d" => Kind::Dir,
            "-l" => Kind::Symlink,
            "-c" => Kind::Char,
            "-b" => Kind::Block,
            "-s" => Kind::Socket,
            "-p" => Kind::Fifo,
            _ => return None,
        })
    }

    fn admits(self, wanted: Kind) -> bool {
        self == Kind::Any || wanted == Kind::Any || self == wanted
    }
}

/// A security context as a policy writes it (`system_u:object_r:etc_t:s0`): printable
/// ASCII without spaces, with at least `user:role:type`, bounded in length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context(String);

impl Context {
    /// Checks `text` is shaped like a context.
    pub fn new(text: &str) -> Option<Context> {
        let ok = !text.is_empty()
            && text.len() <= MAX_CONTEXT_LEN
            && text.bytes().all(|b| b.is_ascii_graphic())
            && text.split(':').count() >= 3
            && text.split(':').take(3).all(|p| !p.is_empty());
        ok.then(|| Context(text.to_owned()))
    }

    /// The context as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The bytes of the `security.selinux` attribute for it (NUL-terminated, as
    /// libselinux's `setfilecon` writes it).
    pub fn xattr_value(&self) -> Vec<u8> {
        let mut v = self.0.as_bytes().to_vec();
        v.push(0);
        v
    }
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A line of a file-contexts input that cannot be used, or a regex that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("{file} line {line}: {message}")]
pub struct SpecError {
    /// The input file (its path inside the root).
    pub file: String,
    /// The line number, from 1.
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// One line of `file_contexts`.
#[derive(Debug)]
struct Spec {
    /// The regex as written.
    pattern: String,
    /// The path it stands for, when the regex has no meta characters.
    literal: Option<Vec<u8>>,
    /// Bytes every match starts with (empty if unknown): checked before compiling.
    prefix: Vec<u8>,
    /// The literal directories the regex starts with (`/srv` for `/srv/a|/srv/b`): the
    /// regex is only tried on paths below them.
    stem: Vec<u8>,
    kind: Kind,
    /// `None` for `<<none>>`.
    context: Option<Context>,
    /// Index of the input it came from and its line number there.
    input: usize,
    line: usize,
    regex: OnceLock<Result<Regex, String>>,
}

impl Spec {
    fn regex(&self) -> Result<&Regex, String> {
        self.regex
            .get_or_init(|| {
                RegexBuilder::new(&format!("^{}$", self.pattern))
                    .unicode(false)
                    .dot_matches_new_line(true)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// One input to [`FileContexts::parse`].
pub struct Input<'a> {
    /// Its path inside the root, for messages.
    pub name: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// The file contexts of one policy, ready for lookups.
#[derive(Debug, Default)]
pub struct FileContexts {
    specs: Vec<Spec>,
    names: Vec<String>,
    local_subs: Vec<(String, String)>,
    dist_subs: Vec<(String, String)>,
}

impl FileContexts {
    /// Parses the spec inputs (base first, then `.homedirs`, then `.local`: later wins)
    /// and the substitution files. Regexes are compiled on first use, not here.
    pub fn parse(
        specs: &[Input<'_>],
        local_subs: Option<&str>,
        dist_subs: Option<&str>,
    ) -> Result<FileContexts, SpecError> {
        let mut fc = FileContexts {
            local_subs: local_subs.map(parse_subs).unwrap_or_default(),
            dist_subs: dist_subs.map(parse_subs).unwrap_or_default(),
            ..FileContexts::default()
        };
        for (input, source) in specs.iter().enumerate() {
            fc.names.push(source.name.to_owned());
            for (n, raw) in source.text.lines().enumerate() {
                let line = raw.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let err = |message: String| SpecError {
                    file: source.name.to_owned(),
                    line: n + 1,
                    message,
                };
                if fc.specs.len() >= MAX_SPECS {
                    return Err(err(format!("more than {MAX_SPECS} specifications")));
                }
                fc.specs.push(parse_line(line, input, n + 1).map_err(err)?);
            }
        }
        Ok(fc)
    }

    /// How many specification lines there are.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The context the policy gives `path` (absolute, inside the root) as a `kind`;
    /// `None` if no line matches or the winning line says `<<none>>`.
    pub fn lookup(&self, path: &[u8], kind: Kind) -> Result<Option<&Context>, SpecError> {
        let key = self.substitute(&clean(path));
        let mut best_literal: Option<&Spec> = None;
        let mut best_regex: Option<&Spec> = None;
        // Later lines win: walk from the end and stop at the first of each sort.
        for spec in self.specs.iter().rev() {
            if !spec.kind.admits(kind) {
                continue;
            }
            match &spec.literal {
                Some(lit) => {
                    if best_literal.is_none() && *lit == key {
                        best_literal = Some(spec);
                        break; // a literal beats every regex
                    }
                }
                None => {
                    if best_regex.is_some()
                        || !key.starts_with(&spec.prefix)
                        || !is_below(&key, &spec.stem)
                    {
                        continue;
                    }
                    let regex = spec.regex().map_err(|e| SpecError {
                        file: self.names[spec.input].clone(),
                        line: spec.line,
                        message: format!("regular expression {:?}: {e}", spec.pattern),
                    })?;
                    if regex.is_match(&key) {
                        best_regex = Some(spec);
                    }
                }
            }
        }
        Ok(best_literal.or(best_regex).and_then(|s| s.context.as_ref()))
    }

    fn substitute(&self, key: &[u8]) -> Vec<u8> {
        match apply_subs(&self.local_subs, key) {
            Some(local) => apply_subs(&self.dist_subs, &local).unwrap_or(local),
            None => apply_subs(&self.dist_subs, key).unwrap_or_else(|| key.to_vec()),
        }
    }
}

fn parse_line(line: &str, input: usize, line_no: usize) -> Result<Spec, String> {
    let fields: Vec<&str> = line.split_ascii_whitespace().collect();
    let (pattern, kind, context) = match fields.as_slice() {
        [p, c] => (*p, Kind::Any, *c),
        [p, k, c] => (
            *p,
            Kind::parse(k).ok_or_else(|| {
                format!("file type {k:?} is not one of --, -d, -l, -c, -b, -s, -p")
            })?,
            *c,
        ),
        _ => return Err("expected `regex [type] context`".to_owned()),
    };
    if pattern.len() > MAX_REGEX_LEN {
        return Err(format!("regex longer than {MAX_REGEX_LEN} bytes"));
    }
    let context =
        match context {
            "<<none>>" => None,
            c => Some(Context::new(c).ok_or_else(|| {
                format!("{c:?} is not a security context (user:role:type[:range])")
            })?),
        };
    let (literal, prefix) = literal_and_prefix(pattern);
    let stem = stem_of(&prefix);
    // With a top-level `|` only the stem is sure, not the whole prefix.
    let prefix = if pattern.contains('|') {
        Vec::new()
    } else {
        prefix
    };
    Ok(Spec {
        pattern: pattern.to_owned(),
        literal,
        prefix,
        stem,
        kind,
        context,
        input,
        line: line_no,
        regex: OnceLock::new(),
    })
}

/// The path a regex stands for when it has no meta characters (libselinux's literal
/// specs; `\` before punctuation is a literal), and otherwise the literal bytes every
/// match must start with.
fn literal_and_prefix(pattern: &str) -> (Option<Vec<u8>>, Vec<u8>) {
    let bytes = pattern.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\\' => match bytes.get(i + 1) {
                Some(&next) if next.is_ascii_punctuation() => {
                    out.push(next);
                    i += 2;
                }
                // `\d`, `\w`, a trailing `\`: a class or an error, not a literal.
                _ => return (None, out),
            },
            b'.' | b'^' | b'$' | b'?' | b'*' | b'+' | b'|' | b'[' | b'(' | b'{' => {
                // A quantifier makes the byte before it optional.
                if matches!(b, b'?' | b'*' | b'{') {
                    out.pop();
                }
                return (None, out);
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    (Some(out.clone()), out)
}

/// Up to 3 whole leading directories of a literal prefix: `/srv/x` for `/srv/x/a`.
fn stem_of(prefix: &[u8]) -> Vec<u8> {
    let ends: Vec<usize> = prefix
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, b)| **b == b'/')
        .map(|(i, _)| i)
        .take(3)
        .collect();
    ends.last()
        .map(|&end| prefix[..end].to_vec())
        .unwrap_or_default()
}

/// Whether `key` is below the directory `stem` (always, for an empty stem).
fn is_below(key: &[u8], stem: &[u8]) -> bool {
    stem.is_empty() || (key.starts_with(stem) && key.get(stem.len()) == Some(&b'/'))
}

/// `//` folded into `/` and a trailing `/` dropped, as libselinux cleans a key.
fn clean(path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len());
    for &b in path {
        if b == b'/' && out.last() == Some(&b'/') {
            continue;
        }
        out.push(b);
    }
    if out.len() > 1 && out.last() == Some(&b'/') {
        out.pop();
    }
    out
}

/// `src dst` pairs, one a line, the last line first (libselinux keeps them LIFO).
fn parse_subs(text: &str) -> Vec<(String, String)> {
    let mut subs: Vec<(String, String)> = text
        .lines()
        .map(str::trim_start)
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_ascii_whitespace();
            Some((f.next()?.to_owned(), f.next()?.to_owned()))
        })
        .collect();
    subs.reverse();
    subs
}

/// The key with the first matching substitution's source replaced by its destination.
fn apply_subs(subs: &[(String, String)], key: &[u8]) -> Option<Vec<u8>> {
    subs.iter().find_map(|(src, dst)| {
        let rest = key.strip_prefix(src.as_bytes())?;
        if !(rest.is_empty() || rest[0] == b'/') {
            return None;
        }
        // `/x /`: `/x/y` becomes `/y`, not `//y`.
        let rest = if dst == "/" && !rest.is_empty() {
            &rest[1..]
        } else {
            rest
        };
        let mut out = dst.as_bytes().to_vec();
        out.extend_from_slice(rest);
        Some(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_prefixes() {
        let cases: &[(&str, Option<&str>, &str)] = &[
            ("/etc/shadow", Some("/etc/shadow"), "/etc/shadow"),
            (
                r"/etc/shadow\.bak",
                Some("/etc/shadow.bak"),
                "/etc/shadow.bak",
            ),
            ("/etc/shadow.*", None, "/etc/shadow"),
            ("/etc/shadow-?", None, "/etc/shadow"),
            ("/root/\\.ssh(/.*)?", None, "/root/.ssh"),
            (r"/usr/lib\d", None, "/usr/lib"),
            ("/a|/b", None, "/a"),
            ("/etc/x{1,2}", None, "/etc/"),
        ];
        for (pattern, literal, prefix) in cases {
            let (l, p) = literal_and_prefix(pattern);
            assert_eq!(l.as_deref(), literal.map(str::as_bytes), "{pattern}");
            assert_eq!(p, prefix.as_bytes(), "{pattern}");
        }
    }

    #[test]
    fn stems_are_whole_leading_directories() {
        let cases = [
            ("/srv/a", "/srv"),
            ("/srv/x/a", "/srv/x"),
            ("/a/b/c/d/e", "/a/b/c"),
            ("/etc", ""),
            ("", ""),
        ];
        for (prefix, stem) in cases {
            assert_eq!(stem_of(prefix.as_bytes()), stem.as_bytes(), "{prefix}");
        }
        assert!(is_below(b"/srv/b", b"/srv"));
        assert!(!is_below(b"/srv", b"/srv"));
        assert!(!is_below(b"/srvx/b", b"/srv"));
        assert!(is_below(b"/x", b""));
    }

    #[test]
    fn substitutions_match_whole_components() {
        let subs = parse_subs("# c\n/export/home /home\n/srv/root /\n");
        let cases = [
            ("/export/home/al", Some("/home/al")),
            ("/export/home", Some("/home")),
            ("/export/homes/al", None),
            ("/srv/root/etc", Some("/etc")),
            ("/srv/root", Some("/")),
        ];
        for (key, want) in cases {
            let got = apply_subs(&subs, key.as_bytes());
            assert_eq!(got.as_deref(), want.map(str::as_bytes), "{key}");
        }
    }

    #[test]
    fn keys_are_cleaned() {
        assert_eq!(clean(b"//etc///ssh/"), b"/etc/ssh");
        assert_eq!(clean(b"/"), b"/");
    }

    #[test]
    fn contexts_are_checked() {
        assert!(Context::new("system_u:object_r:etc_t:s0").is_some());
        assert!(Context::new("u:r:t").is_some());
        for bad in ["", "etc_t", "a::b", "a:b:c d", "a:b:\u{7}"] {
            assert!(Context::new(bad).is_none(), "{bad:?}");
        }
    }
}
