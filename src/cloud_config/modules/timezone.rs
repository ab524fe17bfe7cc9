//! `timezone`: checked against the compiled-in zone list when read; the root's own zones
//! at plan time (`src/source/timezone.rs`).
//!
//! `timezone` (cloud-init's `cc_timezone`), set as the engine sets a time zone: the
//! engine's identity planner links `/etc/localtime` into the root's zoneinfo and writes
//! `/etc/timezone` on Debian; a zone the root lacks is an error, not a dangling link.

use crate::cloud_config::apply::driver::{absent, failed, ModuleOutcome, Step};
use crate::cloud_config::apply::error::ModuleError;
use crate::cloud_config::apply::preview::{actions, Look};
use crate::cloud_config::node::Node;
use crate::cloud_config::read::Reader;
use crate::cloud_config::CloudConfig;
use crate::facts::{Facts, Wanted};
use crate::model::Identity;
use crate::model::{quote, Timezone};
use crate::plan::identity::plan_identity;
use crate::plan::Action;

/// `timezone`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(s) = r.line(node, key, 128) else {
        return;
    };
    match Timezone::parse(&s) {
        Err(why) => r.error(node, key, format!("{}: {why}", quote(&s))),
        Ok(tz) => match vmcust_imc::ZoneList::builtin().check(tz.as_str()) {
            Some(why) => r.error(node, key, format!("{}: {why}", quote(&s))),
            None => cfg.timezone = Some(tz),
        },
    }
}

/// The actions setting `cfg.timezone` (none without one).
pub(crate) fn plan_timezone(cfg: &CloudConfig, facts: &Facts) -> Result<Vec<Action>, ModuleError> {
    let Some(zone) = &cfg.timezone else {
        return Ok(Vec::new());
    };
    let id = Identity {
        time_zone: Some(zone.clone()),
        ..Default::default()
    };
    Ok(plan_identity(&id, facts)?)
}

/// Writes the zone's files.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    match plan_timezone(s.cfg, s.cc) {
        Err(e) => failed(e.to_string()),
        Ok(a) if a.is_empty() => absent("timezone"),
        Ok(a) => s.apply_outcome(a),
    }
}

/// The zone's files.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    actions(plan_timezone(l.cfg, l.facts), "nothing: no timezone")
}

/// What it needs of the root's facts: whether the zone's zoneinfo file exists.
pub(crate) fn wants(cfg: &CloudConfig, w: &mut Wanted) {
    if let Some(zone) = &cfg.timezone {
        w.zones.insert(zone.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    #[test]
    fn timezone_goldens() {
        let (cfg, _) = document::from_text("timezone: Europe/Berlin");
        let mut facts = Facts::default();
        let err = plan_timezone(&cfg, &facts).unwrap_err().to_string();
        assert!(
            err.contains("Europe/Berlin") && err.contains("does not exist"),
            "{err}"
        );
        facts.zones_present.insert("Europe/Berlin".into());
        facts.debian_family = true;
        let got: Vec<String> = plan_timezone(&cfg, &facts)
            .unwrap()
            .iter()
            .map(|a| format!("{a:?}"))
            .collect();
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            got[0].contains("/usr/share/zoneinfo/Europe/Berlin"),
            "{got:?}"
        );
        assert!(got[1].contains("Europe/Berlin\\n"), "{got:?}");
        assert!(plan_timezone(&document::from_text("{}").0, &facts)
            .unwrap()
            .is_empty());
    }
}
