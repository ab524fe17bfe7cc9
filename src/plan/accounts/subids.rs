//! `/etc/subuid` and `/etc/subgid` as shadow's `useradd` (4.13) fills them for a new user:
//! when the file exists, `SUB_?ID_COUNT` is above zero, the user is not a system user and
//! its uid (when given) is in `UID_MIN..UID_MAX`, the lowest free block of `COUNT` ids in
//! `SUB_?ID_MIN..SUB_?ID_MAX` is appended as `name:start:count`. useradd sorts the file's
//! entries by range before it looks for a hole and writes them back in that order, so the
//! rewrite does the same (lines it cannot read go after the sorted ones, in the order
//! glibc's merge sort leaves them). An absent file is left absent, as useradd leaves it.

use super::AccountsError;
use crate::facts::accounts::{DbFile, LoginDefs, SubIdRange, SUBGID, SUBUID};

/// Lines longer than this are not entries for shadow (its parse buffer is 1024 bytes).
const MAX_ENTRY_LINE: usize = 1023;

/// One of the two files, as edited by the plan.
#[derive(Debug, Clone)]
pub(crate) struct SubIdFile {
    path: &'static str,
    /// `uid` or `gid`, for messages.
    what: &'static str,
    mode: u32,
    lines: Vec<String>,
    changed: bool,
}

/// A line read as shadow's `subordinate_parse` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry<'a> {
    owner: &'a str,
    start: u64,
    count: u64,
}

/// `strtoull(s, _, 0)` that must take the whole field (shadow's `getulong`).
fn c_ulong(s: &str) -> Option<u64> {
    let s = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let s = s.strip_prefix('+').unwrap_or(s);
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or(s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

fn parse(line: &str) -> Option<Entry<'_>> {
    if line.len() > MAX_ENTRY_LINE {
        return None;
    }
    let mut fields = line.splitn(4, ':');
    let (owner, start, count) = (fields.next()?, fields.next()?, fields.next()?);
    if owner.is_empty() || start.is_empty() || count.is_empty() {
        return None;
    }
    Some(Entry {
        owner,
        start: c_ulong(start)?,
        count: c_ulong(count)?,
    })
}

/// shadow's `subordinate_range_cmp`: by start, count, owner; unreadable lines "greater"
/// than anything (also than each other, which decides their order after the sort).
fn cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (parse(a), parse(b)) {
        (None, _) => Greater,
        (_, None) => Less,
        (Some(a), Some(b)) => (a.start, a.count, a.owner).cmp(&(b.start, b.count, b.owner)),
    }
}

/// glibc's `qsort` for small arrays: a top-down merge sort taking the left element unless
/// the comparison says it is greater.
fn glibc_msort(v: &mut Vec<String>) {
    if v.len() <= 1 {
        return;
    }
    let mut right = v.split_off(v.len() / 2);
    glibc_msort(v);
    glibc_msort(&mut right);
    let left = std::mem::take(v);
    let (mut l, mut r) = (left.into_iter().peekable(), right.into_iter().peekable());
    while let (Some(a), Some(b)) = (l.peek(), r.peek()) {
        let take_left = cmp(a, b) != std::cmp::Ordering::Greater;
        v.extend(if take_left { l.next() } else { r.next() });
    }
    v.extend(l);
    v.extend(r);
}

impl SubIdFile {
    /// The file of `which` (`uid`: `/etc/subuid`, else `/etc/subgid`) from its facts.
    pub(crate) fn load(what: &'static str, f: &DbFile) -> SubIdFile {
        let text = String::from_utf8_lossy(&f.contents);
        SubIdFile {
            path: if what == "uid" { SUBUID } else { SUBGID },
            what,
            mode: f.mode,
            lines: text.lines().map(str::to_string).collect(),
            changed: false,
        }
    }

    /// The path inside the root.
    pub(crate) fn path(&self) -> &'static str {
        self.path
    }

    /// Its permission bits (kept on rewrite).
    pub(crate) fn mode(&self) -> u32 {
        self.mode
    }

    /// Whether a range was added.
    pub(crate) fn changed(&self) -> bool {
        self.changed
    }

    /// The file as it is to be written.
    pub(crate) fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// `find_new_sub_?ids` then `sub_?id_add`: the lowest free block for `user`, appended
    /// after the entries are sorted; returns its start.
    pub(crate) fn allocate(&mut self, user: &str, r: SubIdRange) -> Result<u64, AccountsError> {
        let kind = self.what.to_ascii_uppercase();
        if r.min > r.max
            || r.count >= r.max
            || r.min.saturating_add(r.count).saturating_sub(1) > r.max
        {
            return Err(AccountsError::SubIdConfig {
                user: user.into(),
                kind,
                min: r.min,
                max: r.max,
                count: r.count,
            });
        }
        glibc_msort(&mut self.lines);
        let start = find_free_range(&self.lines, r).ok_or(AccountsError::NoSubIds {
            user: user.into(),
            path: self.path,
            count: r.count,
            min: r.min,
            max: r.max,
        })?;
        self.lines.push(format!("{user}:{start}:{}", r.count));
        self.changed = true;
        Ok(start)
    }
}

/// shadow's `find_free_range` over sorted `lines`, in its 32-bit id arithmetic.
fn find_free_range(lines: &[String], r: SubIdRange) -> Option<u64> {
    // id_t is 32 bits: the bounds are cut to it as useradd cuts them.
    let (min, max, count) = (r.min as u32, r.max as u32, r.count);
    if count == 0 || max < min {
        return None;
    }
    let mut low = min;
    for e in lines.iter().filter_map(|l| parse(l)) {
        let first = e.start as u32;
        let last = (u64::from(first) + e.count).wrapping_sub(1) as u32;
        // Do not hand out ids above max (u32 arithmetic, as in shadow).
        let high = if first > max.wrapping_add(1) {
            max.wrapping_add(1)
        } else {
            first
        };
        if high > low && u64::from(high - low) >= count {
            return Some(u64::from(low));
        }
        if low < last.wrapping_add(1) {
            low = last.wrapping_add(1);
        }
        if low > max {
            return None;
        }
    }
    (u64::from(max.wrapping_sub(low).wrapping_add(1)) >= count).then_some(u64::from(low))
}

/// Whether useradd gives `uid` (the one asked for, if any) of a user ranges at all.
pub(crate) fn wanted(defs: &LoginDefs, system: bool, uid: Option<u32>) -> bool {
    !system && uid.is_none_or(|u| u == 0 || (defs.uid.0..=defs.uid.1).contains(&u))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> SubIdFile {
        SubIdFile::load(
            "uid",
            &DbFile {
                contents: text.as_bytes().to_vec(),
                mode: 0o644,
            },
        )
    }

    const DEFAULT: SubIdRange = SubIdRange {
        min: 100_000,
        max: 600_100_000,
        count: 65_536,
    };

    #[test]
    fn ranges_as_useradd_allocates_them() {
        // (file before, range settings, start given, file after)
        let table: &[(&str, SubIdRange, u64, &str)] = &[
            ("", DEFAULT, 100_000, "u:100000:65536\n"),
            (
                "a:100000:65536\n",
                DEFAULT,
                165_536,
                "a:100000:65536\nu:165536:65536\n",
            ),
            // A hole below the first range that is big enough is taken; the entries are
            // sorted by start first.
            (
                "b:300000:10\na:100000:10",
                SubIdRange {
                    min: 100_000,
                    max: 1_000_000,
                    count: 1000,
                },
                100_010,
                "a:100000:10\nb:300000:10\nu:100010:1000\n",
            ),
            // Unreadable lines go after the sorted entries, reversed as glibc's merge sort
            // leaves them (checked against useradd 4.13); a hex start counts.
            (
                "# c1\nb:300000:10\n\na:100000:65536\n# c2\nzz\nc:0x30000:5\nd:200000:0",
                DEFAULT,
                200_000,
                "a:100000:65536\nc:0x30000:5\nd:200000:0\nb:300000:10\nzz\n# c2\n\n# c1\nu:200000:65536\n",
            ),
            // Ranges below SUB_UID_MIN do not matter.
            ("x:0:5000\n", DEFAULT, 100_000, "x:0:5000\nu:100000:65536\n"),
        ];
        for (before, r, start, after) in table {
            let mut f = file(before);
            assert_eq!(f.allocate("u", *r).unwrap(), *start, "{before:?}");
            assert_eq!(f.text(), *after, "{before:?}");
            assert!(f.changed());
        }
    }

    #[test]
    fn full_and_invalid_settings_are_refused() {
        let small = SubIdRange {
            min: 100,
            max: 200,
            count: 60,
        };
        let mut f = file("a:100:60\n");
        assert!(matches!(
            f.allocate("u", small),
            Err(AccountsError::NoSubIds { .. })
        ));
        for bad in [
            SubIdRange {
                min: 300,
                max: 200,
                count: 1,
            },
            SubIdRange {
                min: 1,
                max: 200,
                count: 200,
            },
            SubIdRange {
                min: 150,
                max: 200,
                count: 60,
            },
        ] {
            let e = file("").allocate("u", bad).unwrap_err();
            assert!(matches!(e, AccountsError::SubIdConfig { .. }), "{bad:?}");
            assert!(e.to_string().contains("SUB_UID_MIN"), "{e}");
        }
    }

    #[test]
    fn who_gets_ranges() {
        let defs = LoginDefs::parse("UID_MIN 1000\nUID_MAX 60000\n");
        let table = [
            (false, None, true),
            (true, None, false),
            (false, Some(1500), true),
            (false, Some(500), false),
            (false, Some(61000), false),
            (false, Some(0), true),
        ];
        for (system, uid, want) in table {
            assert_eq!(wanted(&defs, system, uid), want, "{system} {uid:?}");
        }
    }
}
