//! Discover: every enabled source of the registry, found and read through one [`Door`],
//! merged into one validated customization with each field's origin. The command line
//! (`show`, `plan`, `apply`, `detect`) and both boot paths call this and nothing else.

use std::collections::BTreeMap;

use super::imc::ImcOptions;
use super::merge::merge;
use super::{metadata, registry, Door, UserData};
use crate::failure::Failure;
use crate::model::{Customization, InstanceId};

/// Where one source was found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Found {
    /// The source's name.
    pub source: &'static str,
    /// Where, for people.
    pub place: String,
}

/// Everything discovered, validated and merged.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The customization; its instance id is always set (the sources', else the
    /// fallback given to [`discover`]).
    pub customization: Customization,
    /// Field → the name of the source it came from.
    pub origins: BTreeMap<&'static str, &'static str>,
    /// User-data for the late stage.
    pub userdata: Option<UserData>,
    /// Vendor-data for the late stage.
    pub vendordata: Option<UserData>,
    /// Raw cloud-init metadata as received, kept for cloud-init's NoCloud seed.
    pub raw_metadata: Option<Vec<u8>>,
    /// What the vSphere spec asks of the engine, when there is one.
    pub imc: Option<ImcOptions>,
    /// Guestinfo keys to clear once the data is applied.
    pub redact: Vec<String>,
    /// `wait-on-network`: which address families the late stage waits for before
    /// publishing the guest's addresses.
    pub wait_on_network: Option<metadata::WaitOnNetwork>,
    /// Every source found, in precedence order.
    pub found: Vec<Found>,
    /// Non-fatal findings, each naming its source.
    pub warnings: Vec<String>,
}

impl Gathered {
    /// The instance id.
    pub fn instance_id(&self) -> &InstanceId {
        self.customization
            .instance_id
            .as_ref()
            .expect("discover always sets the instance id")
    }

    /// Whether any source had anything.
    pub fn is_empty(&self) -> bool {
        self.origins.is_empty()
    }

    /// Where the data came from, for people: the highest source found.
    pub fn from(&self) -> String {
        match self.found.first() {
            Some(f) => f.place.clone(),
            None => "no source".to_string(),
        }
    }
}

/// Reads every source `door` enables, in precedence order, validates and merges them;
/// the instance id defaults to `fallback_id`.
pub fn discover(door: &mut Door, fallback_id: &InstanceId) -> Result<Gathered, Failure> {
    let mut all = Vec::new();
    for source in registry::SOURCES {
        if door.enabled.contains(source.names()[0]) {
            let start = std::time::Instant::now();
            all.extend(source.read(door)?);
            // On the boot path: which source a slow discovery spent its time in.
            tracing::debug!(
                "source {} read in {:.3} ms",
                source.names()[0],
                start.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
    let mut warnings = Vec::new();
    let mut found = Vec::new();
    let mut imc = None;
    for s in &mut all {
        warnings.append(&mut s.warnings);
        imc = imc.or(s.imc);
        found.push(Found {
            source: s.source,
            place: s.place.clone(),
        });
    }
    found.sort_by_key(|f| registry::rank(f.source));
    let merged = merge(all);
    let mut g = Gathered {
        customization: merged.customization,
        origins: merged.origins,
        userdata: merged.user_data,
        vendordata: merged.vendor_data,
        raw_metadata: merged.raw_metadata,
        imc,
        redact: merged.redact,
        wait_on_network: merged.wait_on_network,
        found,
        warnings,
    };
    // The host name and the domain may come from two sources, each fine on its own.
    let id = &g.customization.identity;
    super::field::fqdn_fits(
        "host name and domain",
        id.host_name.as_ref(),
        id.domain.as_ref(),
    )?;
    let place = match (merged.places.get("time-zone"), g.origins.get("time-zone")) {
        (Some(p), _) => p.clone(),
        (None, Some(from)) => format!("{from}: time zone"),
        (None, None) => "time zone".to_string(),
    };
    if let Some(zone) = &id.time_zone {
        super::timezone::check(door.root, zone, &place)?;
    }
    if g.customization.instance_id.is_none() {
        g.customization.instance_id = Some(fallback_id.clone());
    }
    Ok(g)
}
