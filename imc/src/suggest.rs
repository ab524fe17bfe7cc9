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
    let word = word.to_ascii_uppercase();
    let limit = if word.len() <= 4 { 1 } else { 2 };
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        // A candidate much longer or shorter than the word cannot be within the limit.
        if candidate.len().abs_diff(word.len()) > limit || candidate.len() > MAX_COMPARED {
            continue;
        }
        let d = distance(&word, &candidate.to_ascii_uppercase());
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over bytes, with transpositions counting as one edit
/// (optimal string alignment), since swapped letters (`NETMAKS`) are the commonest typo.
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for (i, row) in d.chunks_mut(width).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[..width].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
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
