//! Facts about the target root that planning needs, gathered in one place so that the
//! planner itself stays a pure function.

pub(crate) mod accounts;
pub(crate) mod network;

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};

pub(crate) use accounts::AccountFacts;
pub use network::NetworkFacts;

use crate::model::Customization;
use crate::root::Root;

/// Directory holding the compiled time zone database.
pub(crate) const ZONEINFO_DIR: &str = "/usr/share/zoneinfo";

/// What the planner may know about the system it customizes.
#[derive(Debug, Clone, Default)]
pub struct RootFacts {
    /// Current `/etc/hosts`, if any.
    pub hosts: Option<String>,
    /// Current `/etc/adjtime`, if any.
    pub adjtime: Option<String>,
    /// Time zones (of those the customization names) that exist in the root's zoneinfo.
    pub zones_present: BTreeSet<String>,
    /// The root is a Debian-family system (it keeps `/etc/timezone`).
    pub debian_family: bool,
    /// `/etc/timezone` exists already.
    pub has_etc_timezone: bool,
    /// What the root's network looks like (devices, stack).
    pub network: NetworkFacts,
    /// Accounts: passwd, shadow, salt and the SSH key user's home (only what `c` needs).
    pub accounts: AccountFacts,
}

impl RootFacts {
    /// Reads the facts `plan` needs for customization `c` from `root`.
    pub fn gather(root: &Root, c: &Customization) -> Result<RootFacts> {
        let text = |p: &str| {
            root.read_text(Path::new(p))
                .with_context(|| format!("reading {p} in {}", root.path().display()))
        };
        let mut zones_present = BTreeSet::new();
        if let Some(zone) = &c.identity.time_zone {
            let zone_file = Path::new(ZONEINFO_DIR).join(zone.as_str());
            if root.is_file(&zone_file) {
                zones_present.insert(zone.to_string());
            }
        }
        Ok(RootFacts {
            hosts: text("/etc/hosts")?,
            adjtime: text("/etc/adjtime")?,
            zones_present,
            debian_family: root.is_file(Path::new("/etc/debian_version")),
            has_etc_timezone: root.is_file(Path::new("/etc/timezone")),
            network: NetworkFacts::gather(root)?,
            accounts: AccountFacts::gather(root, &c.identity)?,
        })
    }
}
