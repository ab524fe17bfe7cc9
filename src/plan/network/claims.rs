//! Whether a template's configuration file would configure one of our devices without
//! naming it: by a name pattern (netplan `match: name: "en*"`, networkd `Name=en*`) or
//! as a catch-all (a netplan `match: {}`, a networkd `[Match]` that only says
//! `Type=ether`). Such files are the common shape of a template's DHCP configuration,
//! and they win over ours: netplan renders `01-template.yaml` to
//! `10-netplan-<id>.network`, and networkd uses the first `.network` file (by name)
//! that matches a device, so either one sorting before ours keeps the clone on DHCP.
//!
//! A file that matches on something vmcust cannot know offline (a driver, a PCI path)
//! is not claimed. NetworkManager profiles bound to no device are left alone: ours carry
//! a higher `autoconnect-priority` and win (see [`super::networkmanager`]).
//!
//! Reference: systemd.network(5) `[Match]` (`Name=` is a whitespace-separated list of
//! shell globs, the whole list negated by a leading `!`), netplan's YAML reference
//! (`match: name:` is a shell glob).

use std::path::Path;

use serde_norway::Value;

/// Whether the configuration file at `path` with `text` would apply to `device`.
pub(crate) fn claims(path: &Path, text: &str, device: &str) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("/"));
    if dir == Path::new("/etc/netplan") && name.ends_with(".yaml") {
        netplan_claims(text, device)
    } else if dir == Path::new("/etc/systemd/network") && name.ends_with(".network") {
        networkd_claims(text, device)
    } else {
        false
    }
}

/// A netplan file: an `ethernets` entry whose `match` is empty or has a `name` glob
/// matching the device (and no `macaddress` or `driver`, which decide on their own).
fn netplan_claims(text: &str, device: &str) -> bool {
    let Ok(doc) = serde_norway::from_str::<Value>(text) else {
        return false;
    };
    let Some(ethernets) = doc
        .get("network")
        .and_then(|n| n.get("ethernets"))
        .and_then(Value::as_mapping)
    else {
        return false;
    };
    ethernets.values().any(|def| {
        let Some(m) = def.get("match").and_then(Value::as_mapping) else {
            // No match: the entry's id is the device name, which the caller checks.
            return false;
        };
        if m.contains_key("macaddress") || m.contains_key("driver") {
            return false;
        }
        match m.get("name") {
            None => true,
            Some(Value::String(glob)) => glob_matches(glob, device),
            Some(_) => false,
        }
    })
}

/// A networkd `.network` file: its `[Match]` has `Name=` globs matching the device, or
/// restricts nothing but the link type (`Type=ether`).
fn networkd_claims(text: &str, device: &str) -> bool {
    let mut in_match = false;
    let mut names: Vec<&str> = Vec::new();
    let mut other_keys = false;
    let mut type_ether = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.starts_with('[') {
            in_match = line == "[Match]";
            continue;
        }
        if !in_match {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        match key.trim() {
            "Name" => names.push(value.trim()),
            "Type" if value.trim() == "ether" => type_ether = true,
            _ => other_keys = true,
        }
    }
    if other_keys {
        return false;
    }
    // An empty assignment resets the list.
    let lists: Vec<&str> = match names.iter().rposition(|v| v.is_empty()) {
        Some(i) => names[i + 1..].to_vec(),
        None => names,
    };
    if lists.is_empty() {
        // networkd ignores a file whose [Match] says nothing at all.
        return type_ether;
    }
    lists.iter().all(|list| {
        let (negated, list) = match list.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, *list),
        };
        let any = list.split_whitespace().any(|g| glob_matches(g, device));
        any != negated
    })
}

/// Shell glob matching of a whole name: `*`, `?` and `[...]` classes (with `!` or `^`
/// negation and `a-z` ranges); `\` escapes the next character.
pub(crate) fn glob_matches(glob: &str, name: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let n: Vec<char> = name.chars().collect();
    matches_from(&g, &n)
}

fn matches_from(g: &[char], n: &[char]) -> bool {
    match g.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| matches_from(&g[1..], &n[i..])),
        Some('?') => !n.is_empty() && matches_from(&g[1..], &n[1..]),
        Some('[') => match (class_end(g), n.first()) {
            (Some(end), Some(c)) => {
                in_class(&g[1..end], *c) && matches_from(&g[end + 1..], &n[1..])
            }
            (Some(_), None) => false,
            // An unclosed `[` is an ordinary character.
            (None, _) => n.first() == Some(&'[') && matches_from(&g[1..], &n[1..]),
        },
        Some('\\') if g.len() > 1 => n.first() == Some(&g[1]) && matches_from(&g[2..], &n[1..]),
        Some(c) => n.first() == Some(c) && matches_from(&g[1..], &n[1..]),
    }
}

/// Index of the `]` closing the class that starts at `g[0]`.
fn class_end(g: &[char]) -> Option<usize> {
    let mut i = 1;
    if matches!(g.get(i), Some('!' | '^')) {
        i += 1;
    }
    // A `]` right after the opening (or the negation) is a member.
    if g.get(i) == Some(&']') {
        i += 1;
    }
    (i..g.len()).find(|&j| g[j] == ']')
}

/// Whether `c` is in the class body (between the brackets).
fn in_class(body: &[char], c: char) -> bool {
    let (negated, body) = match body.first() {
        Some('!' | '^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut found = false;
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == '-' {
            found |= body[i] <= c && c <= body[i + 2];
            i += 3;
        } else {
            found |= body[i] == c;
            i += 1;
        }
    }
    found != negated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let table = [
            ("en*", "ens3", true),
            ("en*", "eth0", false),
            ("ens?", "ens3", true),
            ("ens?", "ens33", false),
            ("ens[0-9]", "ens3", true),
            ("ens[!0-9]", "ens3", false),
            ("e[nt]*", "eth0", true),
            ("*", "ens192", true),
            ("ens192", "ens192", true),
            ("ens19", "ens192", false),
            ("ens\\*", "ens*", true),
            ("ens[", "ens[", true),
        ];
        for (glob, name, want) in table {
            assert_eq!(glob_matches(glob, name), want, "{glob} vs {name}");
        }
    }

    #[test]
    fn networkd_match_sections() {
        let table = [
            ("[Match]\nName=en*\n\n[Network]\nDHCP=ipv4\n", true),
            ("[Match]\nName=eth* en*\n[Network]\nDHCP=yes\n", true),
            ("[Match]\nName=eth*\n[Network]\nDHCP=yes\n", false),
            ("[Match]\nName=!en*\n[Network]\nDHCP=yes\n", false),
            ("[Match]\nName=!eth*\n[Network]\nDHCP=yes\n", true),
            ("[Match]\nType=ether\n[Network]\nDHCP=yes\n", true),
            (
                "[Match]\nName=en*\nDriver=vmxnet3\n[Network]\nDHCP=yes\n",
                false,
            ),
            (
                "[Match]\nMACAddress=00:50:56:00:00:01\n[Network]\nDHCP=yes\n",
                false,
            ),
            // networkd ignores a file with nothing to match on.
            ("[Network]\nDHCP=yes\n", false),
            // Name= in another section is not a match.
            ("[Match]\nType=ether\nName=eth0\n[Link]\nName=en*\n", false),
        ];
        for (text, want) in table {
            assert_eq!(networkd_claims(text, "ens3"), want, "{text}");
        }
    }

    #[test]
    fn netplan_match_entries() {
        let table = [
            ("network:\n  version: 2\n  ethernets:\n    t:\n      match:\n        name: \"en*\"\n      dhcp4: true\n", true),
            ("network:\n  ethernets:\n    t:\n      match: {name: eth*}\n      dhcp4: true\n", false),
            ("network:\n  ethernets:\n    all:\n      match: {}\n      dhcp4: true\n", true),
            ("network:\n  ethernets:\n    t:\n      match: {name: en*, driver: vmxnet3}\n", false),
            ("network:\n  ethernets:\n    ens3:\n      dhcp4: true\n", false),
            ("not: [yaml", false),
        ];
        for (text, want) in table {
            assert_eq!(netplan_claims(text, "ens3"), want, "{text}");
        }
    }

    #[test]
    fn only_files_the_stacks_read() {
        let text = "[Match]\nName=en*\n";
        assert!(claims(
            Path::new("/etc/systemd/network/01-t.network"),
            text,
            "ens3"
        ));
        assert!(!claims(
            Path::new("/etc/systemd/network/01-t.link"),
            text,
            "ens3"
        ));
        assert!(!claims(
            Path::new("/etc/sysconfig/network-scripts/ifcfg-x"),
            text,
            "ens3"
        ));
    }
}
