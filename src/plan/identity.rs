//! Identity files: `/etc/hostname`, `/etc/hosts`, the time zone and `/etc/adjtime`.

use std::path::{Path, PathBuf};

use super::{Action, Contents, PlanError};
use crate::facts::{Facts, ZONEINFO_DIR};
use crate::model::{HardwareClock, Identity};

/// Address Debian maps the machine's own name to (see Debian reference §5.1.1).
const DEBIAN_HOSTNAME_ADDR: &str = "127.0.1.1";

/// What `/etc/hosts` holds on a fresh Debian system, used when the root has none.
const DEFAULT_HOSTS: &str = "127.0.0.1\tlocalhost\n\
::1\tlocalhost ip6-localhost ip6-loopback\n\
ff02::1\tip6-allnodes\n\
ff02::2\tip6-allrouters\n";

/// Plans the identity files for `id`.
pub(crate) fn plan_identity(id: &Identity, facts: &Facts) -> Result<Vec<Action>, PlanError> {
    let mut actions = Vec::new();
    if let Some(host) = &id.host_name {
        actions.push(Action::write_file(
            "/etc/hostname",
            Contents::text(format!("{}\n", host.short())),
            0o644,
            "host name",
        ));
        let fqdn = id.fqdn();
        actions.push(Action::write_file(
            "/etc/hosts",
            Contents::text(hosts_with_name(
                facts.hosts.as_deref(),
                host.short(),
                fqdn.as_deref(),
            )),
            0o644,
            "host name in /etc/hosts",
        ));
    }
    if let Some(zone) = &id.time_zone {
        if !facts.zones_present.contains(zone.as_str()) {
            return Err(PlanError::UnknownTimeZone {
                zone: zone.to_string(),
                dir: ZONEINFO_DIR,
            });
        }
        actions.push(Action::Symlink {
            path: "/etc/localtime".into(),
            target: Path::new(ZONEINFO_DIR).join(zone.as_str()),
            purpose: "time zone",
        });
        if facts.debian_family || facts.has_etc_timezone {
            actions.push(Action::write_file(
                PathBuf::from("/etc/timezone"),
                Contents::text(format!("{zone}\n")),
                0o644,
                "time zone name (Debian)",
            ));
        }
    }
    if let Some(clock) = id.hardware_clock {
        actions.push(Action::write_file(
            "/etc/adjtime",
            Contents::text(adjtime_with(facts.adjtime.as_deref(), clock)),
            0o644,
            "hardware clock mode",
        ));
    }
    Ok(actions)
}

/// `/etc/hosts` with the machine's name mapped the Debian way: a `127.0.1.1 fqdn short`
/// line replaces any earlier `127.0.1.1` line (in place), every other line is kept as is.
/// Without an earlier line, the new one goes right after the last `127.0.0.1` line.
pub(crate) fn hosts_with_name(current: Option<&str>, short: &str, fqdn: Option<&str>) -> String {
    let entry = match fqdn {
        Some(fqdn) => format!("{DEBIAN_HOSTNAME_ADDR}\t{fqdn}\t{short}"),
        None => format!("{DEBIAN_HOSTNAME_ADDR}\t{short}"),
    };
    let current = current.unwrap_or(DEFAULT_HOSTS);
    // Each line with its address field, worked out once.
    let lines: Vec<(&str, Option<&str>)> = current.lines().map(|l| (l, first_field(l))).collect();
    let is_entry = |&(_, addr): &(&str, Option<&str>)| addr == Some(DEBIAN_HOSTNAME_ADDR);
    // With no old entry to replace, the new one goes after the last 127.0.0.1 line, or first.
    let insert_at = match lines.iter().any(is_entry) {
        true => None,
        false => Some(
            lines
                .iter()
                .rposition(|(_, addr)| *addr == Some("127.0.0.1"))
                .map_or(0, |i| i + 1),
        ),
    };
    let mut out = String::with_capacity(current.len() + entry.len() + 2);
    let mut placed = false;
    for (i, line) in lines.iter().enumerate() {
        if insert_at == Some(i) {
            push_line(&mut out, &entry);
        }
        if is_entry(line) {
            if !std::mem::replace(&mut placed, true) {
                push_line(&mut out, &entry);
            }
            continue;
        }
        push_line(&mut out, line.0);
    }
    if insert_at == Some(lines.len()) {
        push_line(&mut out, &entry);
    }
    out
}

fn push_line(out: &mut String, line: &str) {
    out.push_str(line);
    out.push('\n');
}

/// The address field of a hosts line; `None` for comments and blank lines.
fn first_field(line: &str) -> Option<&str> {
    let line = line.split('#').next().unwrap_or("");
    line.split_whitespace().next()
}

/// `/etc/adjtime` with its third line (the clock mode) set; the drift and calibration
/// lines of an existing file are kept, because hwclock maintains them.
pub(crate) fn adjtime_with(current: Option<&str>, clock: HardwareClock) -> String {
    let mode = match clock {
        HardwareClock::Utc => "UTC",
        HardwareClock::Local => "LOCAL",
    };
    let mut lines: Vec<&str> = current.map(|c| c.lines().collect()).unwrap_or_default();
    if lines.len() < 2 {
        lines = vec!["0.0 0 0.0", "0"];
    }
    lines.truncate(2);
    format!("{}\n{}\n{mode}\n", lines[0], lines[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (case, current /etc/hosts, short name, fqdn, expected /etc/hosts)
    type HostsCase<'a> = (&'a str, Option<&'a str>, &'a str, Option<&'a str>, &'a str);

    #[test]
    fn hosts_cases() {
        let cases: &[HostsCase] = &[
            (
                "no file yet",
                None,
                "web",
                Some("web.example.com"),
                "127.0.0.1\tlocalhost\n127.0.1.1\tweb.example.com\tweb\n::1\tlocalhost ip6-localhost ip6-loopback\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n",
            ),
            (
                "replaces the old name in place, keeps the rest",
                Some("127.0.0.1 localhost\n127.0.1.1 template.local template\n# comment\n10.0.0.5 db\n"),
                "web",
                None,
                "127.0.0.1 localhost\n127.0.1.1\tweb\n# comment\n10.0.0.5 db\n",
            ),
            (
                "drops duplicate 127.0.1.1 lines",
                Some("127.0.1.1 a\n127.0.0.1 localhost\n127.0.1.1 b\n"),
                "web",
                None,
                "127.0.1.1\tweb\n127.0.0.1 localhost\n",
            ),
            (
                "no localhost line: goes first",
                Some("10.0.0.5 db\n"),
                "web",
                None,
                "127.0.1.1\tweb\n10.0.0.5 db\n",
            ),
            (
                "commented 127.0.1.1 is not an entry",
                Some("127.0.0.1 localhost\n#127.0.1.1 old\n"),
                "web",
                None,
                "127.0.0.1 localhost\n127.0.1.1\tweb\n#127.0.1.1 old\n",
            ),
        ];
        for (name, current, short, fqdn, want) in cases {
            assert_eq!(
                hosts_with_name(*current, short, *fqdn),
                *want,
                "case: {name}"
            );
        }
    }

    #[test]
    fn hosts_is_idempotent() {
        let once = hosts_with_name(Some("127.0.0.1 localhost\n"), "a", Some("a.b"));
        assert_eq!(hosts_with_name(Some(&once), "a", Some("a.b")), once);
    }

    #[test]
    fn adjtime_keeps_drift_lines() {
        assert_eq!(
            adjtime_with(None, HardwareClock::Utc),
            "0.0 0 0.0\n0\nUTC\n"
        );
        assert_eq!(
            adjtime_with(
                Some("0.01 1700000000 0.0\n1700000000\nUTC\n"),
                HardwareClock::Local
            ),
            "0.01 1700000000 0.0\n1700000000\nLOCAL\n"
        );
        assert_eq!(
            adjtime_with(Some("garbage"), HardwareClock::Local),
            "0.0 0 0.0\n0\nLOCAL\n"
        );
    }

    #[test]
    fn unknown_zone_is_an_error_not_a_dangling_link() {
        let id = Identity {
            time_zone: Some(crate::model::Timezone::parse("Mars/Olympus").unwrap()),
            ..Default::default()
        };
        let err = plan_identity(&id, &Facts::default()).unwrap_err();
        assert!(err.to_string().contains("Mars/Olympus"), "{err}");
    }

    #[test]
    fn timezone_file_only_on_debian_family() {
        let id = Identity {
            time_zone: Some(crate::model::Timezone::parse("UTC").unwrap()),
            ..Default::default()
        };
        let mut facts = Facts::default();
        facts.zones_present.insert("UTC".into());
        assert_eq!(plan_identity(&id, &facts).unwrap().len(), 1);
        facts.debian_family = true;
        assert_eq!(plan_identity(&id, &facts).unwrap().len(), 2);
    }
}
