//! Sources: where a customization comes from. Each source is one module that knows how to
//! find itself (in the root at boot, or where the command line points) and reads what it
//! found into one [`SourceData`]; [`registry`] lists them in precedence order,
//! [`discover()`] reads every enabled one and [`merge`] makes one [`SourceData`] of them.
//! No source writes to the system.

pub(crate) mod appliance;
pub(crate) mod config_drive;
pub(crate) mod discover;
pub(crate) mod encoding;
pub(crate) mod fat_chain;
pub(crate) mod field;
pub(crate) mod guestinfo;
pub(crate) mod imc;
pub(crate) mod merge;
pub(crate) mod metadata;
pub(crate) mod netconfig;
pub(crate) mod nocloud;
pub(crate) mod ovf;
pub(crate) mod ovf_locate;
pub(crate) mod registry;
pub(crate) mod seed_media;
pub(crate) mod sniff;
pub(crate) mod timezone;
pub(crate) mod udev_db;

use std::collections::BTreeMap;
use std::path::PathBuf;

pub(crate) use discover::discover;
pub(crate) use registry::SourceSet;

use crate::failure::Failure;
use crate::host::GuestRpc;
use crate::model::{Customization, InstanceId};
use crate::root::Root;

/// A source: how to find it and read it. Adding a source is one module implementing this
/// and one line in [`registry::SOURCES`].
pub(crate) trait Source: Sync {
    /// Its names, as records, `[trust] sources` and the docs spell them: its own first,
    /// then any it reads on its behalf (the OVF environment's local seed), in precedence
    /// order.
    fn names(&self) -> &'static [&'static str];
    /// Finds the source through `door` and reads it; an empty list when it is not there.
    fn read(&self, door: &mut Door) -> Result<Vec<SourceData>, Failure>;
    /// Starts the host reads [`read`](Source::read) makes whatever it finds
    /// ([`GuestRpc::prefetch`]): [`discover()`] calls it for every source before the
    /// first one looks anywhere.
    fn prefetch(&self, _rpc: &mut dyn GuestRpc) {}
}

/// Where the sources are looked for, and what they may use.
pub(crate) struct Door<'a> {
    /// The root being customized: seed files, devices, the appliance mapping, zones.
    pub root: &'a Root,
    /// The sources allowed (the settings' `[trust] sources`, the stage's own choice).
    pub enabled: SourceSet,
    /// The host, when guestinfo may be read (at boot only on a new VM).
    pub rpc: Option<&'a mut dyn GuestRpc>,
    /// A vSphere spec, already validated (the pending copy at boot, `--imc FILE`).
    pub imc: Option<imc::ImcInput>,
    /// What the command line points at; `None` at boot, where each source looks in the
    /// root (seed files, CD-ROMs, block devices by label).
    pub given: Option<Given>,
    /// Where the OVF appliance property mapping comes from.
    pub mapping: appliance::MappingSource,
    /// The devices looked at so far, each opened once for all sources.
    pub media: seed_media::Probes,
}

/// Files the command line gives: each source reads only what is given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Given {
    /// `--ovf FILE|ISO`.
    pub ovf: Option<PathBuf>,
    /// `--seed IMAGE|DIR`: seed drives (config-2, NoCloud) as an image or a directory.
    pub seeds: Vec<PathBuf>,
}

/// Data bytes for the late stage (user-data, vendor-data), and which source they came from.
#[derive(Debug, Clone)]
pub(crate) struct UserData {
    /// The bytes as received (decoded).
    pub bytes: Vec<u8>,
    /// The name of the source.
    pub from: &'static str,
}

/// Where one source was found.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Found {
    /// The source's name (one of its [`Source::names`]).
    pub source: &'static str,
    /// Where, for people: `/dev/sr0 (config-2)`, `guestinfo`, a file.
    pub place: String,
}

/// What sources say, in the model's validated values, and what goes with it: the record
/// one source reads ([`Source::read`]), [`merge()`](merge::merge) makes of several and
/// [`discover()`] returns. One source's record has itself as its one [`found`](Self::found)
/// and no [`origins`](Self::origins) (every field it has is its own); a merged one has every
/// source found and each field's origin.
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceData {
    /// The customization. Its instance id is always set in what [`discover()`] returns (the
    /// sources', else the fallback it is given).
    pub customization: Customization,
    /// User-data for the late stage.
    pub user_data: Option<UserData>,
    /// Vendor-data for the late stage.
    pub vendor_data: Option<UserData>,
    /// Raw cloud-init metadata as received, kept for a real cloud-init's NoCloud seed.
    pub raw_metadata: Option<Vec<u8>>,
    /// Guestinfo keys to clear once the data is applied.
    pub redact: Vec<String>,
    /// `wait-on-network`: which address families the late stage waits for before
    /// publishing the guest's addresses.
    pub wait_on_network: Option<metadata::WaitOnNetwork>,
    /// What a vSphere spec asks of the boot engine, when there is one.
    pub imc: Option<imc::ImcOptions>,
    /// Exact places of fields, for messages (`time-zone` → `cust.cfg: line 7: …`).
    pub places: BTreeMap<&'static str, String>,
    /// Field name → the name of the source it came from (filled by merging).
    pub origins: BTreeMap<&'static str, &'static str>,
    /// Every source found, in precedence order.
    pub found: Vec<Found>,
    /// Non-fatal findings, each naming its source.
    pub warnings: Vec<String>,
}

impl SourceData {
    /// Empty data from `source` found at `place`.
    pub(crate) fn new(source: &'static str, place: impl Into<String>) -> SourceData {
        SourceData {
            found: vec![Found {
                source,
                place: place.into(),
            }],
            ..SourceData::default()
        }
    }

    /// `bytes` as data of the source that read this record (its first [`Found`]).
    pub(crate) fn own(&self, bytes: Option<Vec<u8>>) -> Option<UserData> {
        let from = self.found.first().map_or("", |f| f.source);
        bytes.map(|bytes| UserData { bytes, from })
    }

    /// The instance id.
    pub(crate) fn instance_id(&self) -> &InstanceId {
        self.customization
            .instance_id
            .as_ref()
            .expect("discover always sets the instance id")
    }

    /// Whether any source had anything (of a merged record: one source's own has no
    /// origins).
    pub(crate) fn is_empty(&self) -> bool {
        self.origins.is_empty()
    }

    /// Where the data came from, for people: the highest source found.
    pub(crate) fn from(&self) -> String {
        match self.found.first() {
            Some(f) => f.place.clone(),
            None => "no source".to_string(),
        }
    }
}
