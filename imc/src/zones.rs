//! Which time zone names exist: the IANA list compiled in, or one read from a root's tzdata.
//!
//! The crate does no I/O: a caller that knows the target root reads its
//! `/usr/share/zoneinfo/tzdata.zi` (or `zone1970.tab`, `zone.tab`) and hands the text to
//! [`ZoneList::from_tzdata_zi`] or [`ZoneList::from_zone_tab`]; without a root,
//! [`ZoneList::builtin`] is the list of the tzdata release named in `zones.txt`.

use std::collections::BTreeSet;

use crate::suggest::closest;

/// The compiled-in names: every zone and link of one tzdata release, one a line.
const BUILTIN: &str = include_str!("zones.txt");

/// A set of time zone names, for checking a name and suggesting the one meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneList {
    names: BTreeSet<String>,
}

impl ZoneList {
    /// The IANA names compiled into vmcust (zones and their links, such as `US/Pacific`).
    pub fn builtin() -> ZoneList {
        ZoneList::from_names(BUILTIN.lines().filter(|l| !l.starts_with('#')))
    }

    /// The tzdata release the compiled-in list is from, such as `2025b`.
    pub fn builtin_version() -> &'static str {
        BUILTIN
            .lines()
            .next()
            .and_then(|l| l.split(" of tzdata ").nth(1))
            .and_then(|l| l.split(',').next())
            .unwrap_or("unknown")
    }

    /// The zones (`Z name ...`) and link names (`L target name`) of a `tzdata.zi` file.
    pub fn from_tzdata_zi(text: &str) -> ZoneList {
        ZoneList::from_names(text.lines().filter_map(|l| {
            let mut words = l.split_whitespace();
            match words.next()? {
                "Z" => words.next(),
                "L" => words.nth(1),
                _ => None,
            }
        }))
    }

    /// The zone names (third column) of a `zone1970.tab` or `zone.tab` file. These list no
    /// links and no `Etc/` zones, so `UTC` and `Etc/UTC` are added.
    pub fn from_zone_tab(text: &str) -> ZoneList {
        let names = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split('\t').nth(2));
        ZoneList::from_names(names.chain(["UTC", "Etc/UTC"]))
    }

    fn from_names<'a>(names: impl Iterator<Item = &'a str>) -> ZoneList {
        ZoneList {
            names: names
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    }

    /// Whether `name` is in the list.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// How many names the list has.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the list is empty (a tzdata file that holds no zone).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// All names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// The listed name `name` most likely meant (`Asia/Tokio` → `Asia/Tokyo`), by the same
    /// rule as the spec's did-you-mean for keys and sections.
    pub fn suggest(&self, name: &str) -> Option<&str> {
        closest(name, self.names())
    }

    /// Why `name` is not a zone of this list, with a suggestion; `None` if it is.
    pub fn check(&self, name: &str) -> Option<String> {
        if self.contains(name) {
            return None;
        }
        let hint = match self.suggest(name) {
            Some(meant) => format!("did you mean {meant}? "),
            None => String::new(),
        };
        Some(format!(
            "unknown time zone; {hint}use an IANA name such as Europe/Berlin or UTC (the list is in /usr/share/zoneinfo/tzdata.zi)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let zones = ZoneList::builtin();
        let rows = [
            ("Asia/Tokio", Some("Asia/Tokyo")),
            ("europe/berlin", Some("Europe/Berlin")),
            ("America/New_Yrok", Some("America/New_York")),
            ("Etc/UTC", None),
            ("Mars/Olympus_Mons", None),
        ];
        for (name, want) in rows {
            let got = if zones.contains(name) {
                None
            } else {
                zones.suggest(name)
            };
            assert_eq!(got, want, "{name}");
        }
        assert!(zones.contains("US/Pacific") && zones.contains("UTC"));
    }

    #[test]
    fn reads_tzdata_files() {
        let zi = ZoneList::from_tzdata_zi(
            "# version 2099a\nZ Asia/Tokyo 9:18:59 - LMT 1887 D 31 15u\nR x 1 2 - J 1 0 0 -\nL Asia/Tokyo Japan\n",
        );
        assert_eq!(zi.names().collect::<Vec<_>>(), ["Asia/Tokyo", "Japan"]);
        let tab = ZoneList::from_zone_tab("# comment\nJP\t+353916+1394441\tAsia/Tokyo\n");
        assert_eq!(
            tab.names().collect::<Vec<_>>(),
            ["Asia/Tokyo", "Etc/UTC", "UTC"]
        );
        assert!(ZoneList::builtin().len() > 500);
        assert_ne!(ZoneList::builtin_version(), "unknown");
    }
}
