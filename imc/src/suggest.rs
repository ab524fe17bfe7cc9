//! "Did you mean": the known key closest to an unknown one, by case-insensitive edit distance.

/// Keys each known section reads. Indexed keys (`NAMESERVER|n`) are listed by their prefix.
const KNOWN_KEYS: &[(&str, &[&str])] = &[
    (
        "NETWORK",
        &["HOSTNAME", "DOMAINNAME", "NETWORKING", "BOOTPROTO"],
    ),
    ("NIC-CONFIG", &["NICS"]),
    ("DNS", &["DNSFROMDHCP", "SUFFIX", "NAMESERVER"]),
    ("DATETIME", &["TIMEZONE", "UTC"]),
    ("PASSWORD", &["-PASS", "RESET"]),
    (
        "MISC",
        &[
            "MARKER-ID",
            "INSTANCE-ID",
            "POST-GC-STATUS",
            "DEFAULT-RUN-POST-CUST-SCRIPT",
        ],
    ),
    ("CUSTOM-SCRIPT", &["SCRIPT-NAME"]),
    ("CLOUDINIT", &["METADATA", "USERDATA"]),
    ("CUSTOM-SOURCE", &["CUSTOMIZATION_SOURCE"]),
    ("GOSC", &["COMPATIBILITY"]),
];

/// Keys of a listed `[NICn]` section.
const NIC_KEYS: &[&str] = &[
    "MACADDR",
    "ONBOOT",
    "PRIMARY",
    "IPv4_MODE",
    "BOOTPROTO",
    "IPADDR",
    "NETMASK",
    "GATEWAY",
    "IPv6ADDR",
    "IPv6NETMASK",
    "IPv6GATEWAY",
];

/// Words longer than this are not compared: no known key, section or zone is near them, and
/// the distance is quadratic in the length.
const MAX_COMPARED: usize = 40;

/// The known key of `section` (a NIC section when `is_nic`) that `key` most likely meant:
/// the same ignoring case, or at most two edits away (one for keys of up to four characters).
pub(crate) fn did_you_mean(section: &str, is_nic: bool, key: &str) -> Option<&'static str> {
    let keys: &[&str] = if is_nic {
        NIC_KEYS
    } else {
        KNOWN_KEYS.iter().find(|(s, _)| *s == section)?.1
    };
    // `IPv6ADRR|1` is compared as `IPv6ADRR`; the index is checked elsewhere.
    let (stem, _) = key.split_once('|').unwrap_or((key, ""));
    closest(stem, keys.iter().copied())
}

/// The candidate `word` most likely meant: the same ignoring case, or at most two edits away
/// (one for words of up to four characters); the nearest wins, the first of equals. This is
/// the one "did you mean" of the project: keys, sections and time zone names use it.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if word.len() > MAX_COMPARED {
        return None;
    }
    let limit = if word.len() <= 4 { 1 } else { 2 };
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        // Cheap rejections first: this runs for every unknown section of a big file.
        if candidate.len().abs_diff(word.len()) > limit || candidate.len() > MAX_COMPARED {
            continue;
        }
        let within = best.map_or(limit, |(b, _)| b.saturating_sub(1));
        if let Some(d) = distance_within(word.as_bytes(), candidate.as_bytes(), within) {
            if best.is_none_or(|(b, _)| d < b) {
                best = Some((d, candidate));
            }
        }
    }
    best.map(|(_, c)| c)
}

/// [`distance`] ignoring ASCII case, if it is at most `limit`; `None` as soon as every
/// alignment costs more. Both words are at most [`MAX_COMPARED`] bytes, so the table
/// fits on the stack and nothing is allocated.
fn distance_within(a: &[u8], b: &[u8], limit: usize) -> Option<usize> {
    const W: usize = MAX_COMPARED + 1;
    debug_assert!(a.len() < W && b.len() < W);
    let mut d = [[0u8; W]; W];
    for (i, row) in d.iter_mut().enumerate().take(a.len() + 1) {
        row[0] = i as u8;
    }
    for (j, cell) in d[0].iter_mut().enumerate().take(b.len() + 1) {
        *cell = j as u8;
    }
    let same = |x: u8, y: u8| x.eq_ignore_ascii_case(&y);
    for i in 1..=a.len() {
        let mut row_min = i as u8;
        for j in 1..=b.len() {
            let cost = u8::from(!same(a[i - 1], b[j - 1]));
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
            row_min = row_min.min(best);
        }
        // Every later cell costs at least the smallest of this row (or the one before
        // it, through a transposition).
        let before = if i > 1 {
            d[i - 1][..=b.len()].iter().copied().min().unwrap_or(0)
        } else {
            0
        };
        if usize::from(row_min.min(before)) > limit {
            return None;
        }
    }
    let total = usize::from(d[a.len()][b.len()]);
    (total <= limit).then_some(total)
}

/// Levenshtein distance over bytes, with transpositions counting as one edit
/// (optimal string alignment), since swapped letters (`NETMAKS`) are the commonest typo.
#[cfg(test)]
fn distance(a: &str, b: &str) -> usize {
    distance_within(a.as_bytes(), b.as_bytes(), usize::MAX).expect("no limit")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let rows = [
            ("NIC1", true, "NETMAKS", Some("NETMASK")),
            ("NIC1", true, "ipaddr", Some("IPADDR")),
            ("NIC1", true, "IPv6ADRR|1", Some("IPv6ADDR")),
            ("NIC1", true, "GATWAY", Some("GATEWAY")),
            ("NIC1", true, "COLOUR", None),
            ("NETWORK", false, "HOSTMANE", Some("HOSTNAME")),
            ("DNS", false, "nameserver|1", Some("NAMESERVER")),
            ("DATETIME", false, "UCT", Some("UTC")),
            ("DATETIME", false, "X", None),
            ("OTHER", false, "HOSTNAME", None),
        ];
        for (section, is_nic, key, want) in rows {
            assert_eq!(did_you_mean(section, is_nic, key), want, "{key}");
        }
        assert_eq!(did_you_mean("NIC1", true, &"A".repeat(1 << 16)), None);
    }

    #[test]
    fn distances() {
        assert_eq!(distance("NETMAKS", "NETMASK"), 1);
        assert_eq!(distance("", "ABC"), 3);
        assert_eq!(distance("KITTEN", "SITTING"), 3);
    }
}
