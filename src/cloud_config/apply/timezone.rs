//! `timezone` (cloud-init's `cc_timezone`), set as the engine sets a time zone: the
//! engine's identity planner links `/etc/localtime` into the root's zoneinfo and writes
//! `/etc/timezone` on Debian; a zone the root lacks is an error, not a dangling link.

use crate::cloud_config::CloudConfig;
use crate::model::Identity;
use crate::plan::identity::plan_identity;
use crate::plan::Action;

use super::error::ModuleError;
use super::facts::CcFacts;

/// The actions setting `cfg.timezone` (none without one).
pub fn plan_timezone(cfg: &CloudConfig, facts: &CcFacts) -> Result<Vec<Action>, ModuleError> {
    let Some(zone) = &cfg.timezone else {
        return Ok(Vec::new());
    };
    let id = Identity {
        time_zone: Some(zone.clone()),
        ..Default::default()
    };
    Ok(plan_identity(&id, &facts.engine)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    #[test]
    fn timezone_goldens() {
        let (cfg, _) = document::from_text("timezone: Europe/Berlin");
        let mut facts = CcFacts::default();
        let err = plan_timezone(&cfg, &facts).unwrap_err().to_string();
        assert!(
            err.contains("Europe/Berlin") && err.contains("does not exist"),
            "{err}"
        );
        facts.engine.zones_present.insert("Europe/Berlin".into());
        facts.engine.debian_family = true;
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
