//! Sources: where a customization comes from. Each source is one module that knows how to
//! find itself (in the root at boot, or where the command line points) and reads what it
//! found into one [`SourceData`]; [`registry`] lists them in precedence order,
//! [`discover()`] reads every enabled one and [`merge`] makes one customization of them.
//! No source writes to the system.

pub mod appliance;
pub mod config_drive;
pub mod discover;
pub mod encoding;
pub(crate) mod fat_chain;
pub mod field;
pub mod guestinfo;
pub mod imc;
pub mod merge;
pub mod metadata;
pub mod netconfig;
pub mod nocloud;
pub mod ovf;
pub mod ovf_locate;
pub mod registry;
pub mod seed_media;
pub mod sniff;
pub mod timezone;
pub mod udev_db;

use std::path::PathBuf;

pub use discover::{discover, Gathered};
pub use registry::SourceSet;

use crate::failure::Failure;
use crate::host::GuestRpc;
use crate::model::Customization;
use crate::root::Root;

/// A source: how to find it and read it. Adding a source is one module implementing this
/// and one line in [`registry::SOURCES`].
pub trait Source: Sync {
    /// Its names, as records, `[trust] sources` and the docs spell them: its own first,
    /// then any it reads on its behalf (the OVF environment's local seed), in precedence
    /// order.
    fn names(&self) -> &'static [&'static str];
    /// What it is, for the precedence table in the docs.
    fn describe(&self) -> &'static str;
    /// Finds the source through `door` and reads it; an empty list when it is not there.
    fn read(&self, door: &mut Door) -> Result<Vec<SourceData>, Failure>;
    /// Starts the host reads [`read`](Source::read) makes whatever it finds
    /// ([`GuestRpc::prefetch`]): [`discover()`] calls it for every source before the
    /// first one looks anywhere.
    fn prefetch(&self, _rpc: &mut dyn GuestRpc) {}
}

/// Where the sources are looked for, and what they may use.
pub struct Door<'a> {
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
pub struct Given {
    /// `--ovf FILE|ISO`.
    pub ovf: Option<PathBuf>,
    /// `--seed IMAGE|DIR`: seed drives (config-2, NoCloud) as an image or a directory.
    pub seeds: Vec<PathBuf>,
}

/// Data bytes a source carries for the late stage, and which source they came from.
#[derive(Debug, Clone)]
pub struct UserData {
    /// The bytes as received (decoded).
    pub bytes: Vec<u8>,
    /// The name of the source.
    pub from: &'static str,
}

/// What one source read: the customization in the model's validated values, and what
/// goes with it.
#[derive(Debug, Clone, Default)]
pub struct SourceData {
    /// The source's name (one of its [`Source::names`]).
    pub source: &'static str,
    /// Where it was found, for people: `/dev/sr0 (config-2)`, `guestinfo`, a file.
    pub place: String,
    /// The customization it asks for.
    pub customization: Customization,
    /// User-data for the late stage.
    pub user_data: Option<Vec<u8>>,
    /// Vendor-data for the late stage.
    pub vendor_data: Option<Vec<u8>>,
    /// Raw cloud-init metadata as received, kept for a real cloud-init's NoCloud seed.
    pub raw_metadata: Option<Vec<u8>>,
    /// Guestinfo keys to clear once the data is applied.
    pub redact: Vec<String>,
    /// Which address families the late stage waits for before publishing addresses.
    pub wait_on_network: Option<metadata::WaitOnNetwork>,
    /// What a vSphere spec asks of the boot engine.
    pub imc: Option<imc::ImcOptions>,
    /// Exact places of fields, for messages (`time-zone` → `cust.cfg: line 7: …`).
    pub places: Vec<(&'static str, String)>,
    /// Non-fatal findings, each naming its source.
    pub warnings: Vec<String>,
}

impl SourceData {
    /// Empty data from `source` found at `place`.
    pub fn new(source: &'static str, place: impl Into<String>) -> SourceData {
        SourceData {
            source,
            place: place.into(),
            ..SourceData::default()
        }
    }
}
