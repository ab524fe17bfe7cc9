//! The compiled-in zone list is kept current: every zone and link of this machine's tzdata
//! is in it (a newer tzdata with a new zone fails here: refresh `imc/src/zones.txt` as
//! docs/imc-reader.md says), and the root-file readers agree with it.

use std::path::Path;

use vmcust_imc::ZoneList;

#[test]
fn builtin_list_holds_the_hosts_tzdata() {
    let dir = Path::new("/usr/share/zoneinfo");
    let Ok(zi) = std::fs::read_to_string(dir.join("tzdata.zi")) else {
        eprintln!("no tzdata.zi on this machine; the compiled-in list is not compared");
        return;
    };
    let host = ZoneList::from_tzdata_zi(&zi);
    assert!(host.len() > 300, "{} zones in tzdata.zi", host.len());
    let builtin = ZoneList::builtin();
    let missing: Vec<&str> = host.names().filter(|n| !builtin.contains(n)).collect();
    assert!(
        missing.is_empty(),
        "the host's tzdata ({}) has zones the compiled-in list ({}) lacks: {missing:?}",
        zi.lines().next().unwrap_or_default(),
        ZoneList::builtin_version()
    );
    // Every name of zone1970.tab and zone.tab is a zone of tzdata.zi too.
    for tab in ["zone1970.tab", "zone.tab"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(tab)) {
            let tab_list = ZoneList::from_zone_tab(&text);
            assert!(tab_list.len() > 100, "{tab}");
            let odd: Vec<&str> = tab_list.names().filter(|n| !builtin.contains(n)).collect();
            assert!(odd.is_empty(), "{tab}: {odd:?}");
        }
    }
    // And each listed name has its zoneinfo file on the host.
    let absent: Vec<&str> = builtin
        .names()
        .filter(|n| host.contains(n) && !dir.join(n).is_file())
        .collect();
    assert!(absent.is_empty(), "{absent:?}");
}
