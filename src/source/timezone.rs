//! Time zone names checked where the sources are read, against the target root's zones,
//! with a suggestion for a misspelt one (`Asia/Tokio` → did you mean `Asia/Tokyo`?).
//!
//! A root with a zoneinfo directory decides by its own files, as the plan does (a zone is
//! known when `/usr/share/zoneinfo/<name>` is a file there); the names suggested come from
//! its `tzdata.zi`, else `zone1970.tab` or `zone.tab`, else the list compiled into vmcust.
//! A root with no zoneinfo at all (a minimal image, or `show` on a machine without tzdata)
//! is checked against the compiled-in list ([`vmcust_imc::ZoneList::builtin`]).

use std::path::Path;

use vmcust_imc::ZoneList;

use crate::facts::ZONEINFO_DIR;
use crate::model::{InvalidValue, Timezone};
use crate::root::Root;

/// Largest zone list file read (Debian's tzdata.zi is about 110 KiB).
const MAX_ZONE_LIST: u64 = 2 * 1024 * 1024;

/// The zone names of `root`: its tzdata.zi, zone1970.tab or zone.tab, the first found
/// and readable; the compiled-in list if none is.
pub(crate) fn zone_list(root: &Root) -> ZoneList {
    let read = |name: &str| {
        let path = Path::new(ZONEINFO_DIR).join(name);
        root.read_text_capped(&path, MAX_ZONE_LIST, "zone list")
            .ok()
            .flatten()
    };
    let found = read("tzdata.zi")
        .map(|t| ZoneList::from_tzdata_zi(&t))
        .or_else(|| read("zone1970.tab").map(|t| ZoneList::from_zone_tab(&t)))
        .or_else(|| read("zone.tab").map(|t| ZoneList::from_zone_tab(&t)));
    found
        .filter(|l| !l.is_empty())
        .unwrap_or_else(ZoneList::builtin)
}

/// Refuses a time zone `root` does not have, naming `place` and the zone meant.
pub(crate) fn check(root: &Root, zone: &Timezone, place: &str) -> Result<(), InvalidValue> {
    let zoneinfo = Path::new(ZONEINFO_DIR);
    let why = if root.is_dir(zoneinfo) {
        if root.is_file(&zoneinfo.join(zone.as_str())) {
            return Ok(());
        }
        let list = zone_list(root);
        // A name the list has but the root lacks the file of: the root's own word counts.
        list.check(zone.as_str()).unwrap_or_else(|| {
            format!("the root's time zone data lacks it (no {ZONEINFO_DIR}/{zone}); install or update tzdata in the template")
        })
    } else {
        match ZoneList::builtin().check(zone.as_str()) {
            None => return Ok(()),
            Some(why) => why,
        }
    };
    Err(InvalidValue::new(
        format!("{place} = {}", crate::model::quote(zone.as_str())),
        why,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch root with these zoneinfo files (`None`: no zoneinfo directory at all).
    fn root_with(files: Files) -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        if let Some(files) = files {
            let zoneinfo = dir.path().join("usr/share/zoneinfo");
            std::fs::create_dir_all(&zoneinfo).unwrap();
            for (name, text) in files {
                let path = zoneinfo.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
        }
        let root = Root::new(dir.path()).unwrap();
        (dir, root)
    }

    /// A root's zoneinfo files (`None`: no zoneinfo directory).
    type Files<'a> = Option<&'a [(&'a str, &'a str)]>;

    #[test]
    fn zones_are_checked_against_the_root() {
        let zi = "Z Asia/Tokyo 9 - JST\nZ Asia/Tomsk 7 - +07\nL Asia/Tokyo Japan\n";
        let full: &[(&str, &str)] = &[("tzdata.zi", zi), ("Asia/Tokyo", "TZif"), ("Japan", "TZif")];
        let tab: &[(&str, &str)] = &[
            ("zone.tab", "JP\t+3539+13944\tAsia/Tokyo\n"),
            ("Asia/Tokyo", "TZif"),
        ];
        let bare: &[(&str, &str)] = &[("Asia/Tokyo", "TZif")];
        // (root's zoneinfo, zone, None = accepted or the words of the refusal)
        let rows: &[(Files, &str, Option<&[&str]>)] = &[
            (Some(full), "Asia/Tokyo", None),
            (Some(full), "Japan", None),
            (
                Some(full),
                "Asia/Tokio",
                Some(&["did you mean Asia/Tokyo?"]),
            ),
            // The root's own list suggests: Asia/Tomsk is nearer in it than in no list.
            (
                Some(full),
                "Asia/Tomks",
                Some(&["did you mean Asia/Tomsk?"]),
            ),
            (Some(tab), "Asia/Tokio", Some(&["did you mean Asia/Tokyo?"])),
            // Without a list in the root, the compiled-in one suggests.
            (
                Some(bare),
                "Europe/Berlni",
                Some(&["did you mean Europe/Berlin?"]),
            ),
            (
                Some(bare),
                "Europe/Berlin",
                Some(&["lacks it", "install or update tzdata"]),
            ),
            // No zoneinfo at all: the compiled-in list decides.
            (None, "Europe/Berlin", None),
            (None, "US/Pacific", None),
            (None, "Asia/Tokio", Some(&["did you mean Asia/Tokyo?"])),
            (
                None,
                "Mars/Olympus",
                Some(&["unknown time zone; use an IANA name"]),
            ),
        ];
        for (files, zone, want) in rows {
            let (_dir, root) = root_with(*files);
            let tz = Timezone::parse(zone).unwrap();
            let got = check(&root, &tz, "cust.cfg: line 7: [DATETIME] TIMEZONE");
            match (got, want) {
                (Ok(()), None) => {}
                (Err(e), Some(words)) => {
                    let e = e.to_string();
                    let place = format!("cust.cfg: line 7: [DATETIME] TIMEZONE = \"{zone}\": ");
                    assert!(e.starts_with(&place), "{e}");
                    for w in *words {
                        assert!(e.contains(w), "{zone}: {w:?} not in {e}");
                    }
                }
                (got, want) => panic!("{zone}: {got:?}, wanted {want:?}"),
            }
        }
    }
}
