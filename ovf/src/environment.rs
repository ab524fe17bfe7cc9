//! The OVF environment document (`ovf-env.xml`, DSP0243 section 11) as seen by a guest.
//!
//! Parsing is streaming and namespace-aware (quick-xml `NsReader`), not serde, because serde
//! matches on local names only and could not tell an OVF `Environment` from any other.
//! Namespace rules and leniencies are described on [`parse`] and in `docs/ovf.md`.

mod error;
mod reader;

pub use error::EnvError;

/// Largest OVF environment document [`parse`] reads: 1 MiB, far above any real one (a
/// vApp with a hundred properties is a few kilobytes). The same bound applies to the file
/// on an ISO ([`crate::iso9660::DEFAULT_MAX_FILE_BYTES`]).
pub const MAX_OVF_ENV_BYTES: u64 = 1024 * 1024;

/// Namespace of the OVF environment (`oe:` in vSphere documents).
pub const OVF_ENV_NS: &str = "http://schemas.dmtf.org/ovf/environment/1";

/// Namespace of VMware's extensions to the OVF environment (`ve:`).
pub const VMWARE_OVFENV_NS: &str = "http://www.vmware.com/schema/ovfenv";

/// A parsed OVF environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Environment {
    /// `oe:id` of the root: the id of the virtual system this environment is for.
    pub id: Option<String>,
    /// `ve:vCenterId` of the root (the vCenter managed object id, e.g. `vm-1234`).
    pub vcenter_id: Option<String>,
    /// The `PlatformSection`, if any (the last one wins if there are several).
    pub platform: Option<Platform>,
    /// Properties of the environment's own `PropertySection`s, in document order.
    ///
    /// All `PropertySection` children of the root are merged in order (cloud-init reads only
    /// the first); duplicates are kept here, [`Environment::property`] applies "last wins".
    pub properties: Vec<Property>,
    /// `Entity` children (environments of sibling virtual systems in a vApp), kept apart so
    /// that their properties never shadow the environment's own.
    pub entities: Vec<Entity>,
    /// Virtual NICs from `ve:EthernetAdapterSection`, in document order.
    pub adapters: Vec<EthernetAdapter>,
}

impl Environment {
    /// The value of the environment's own property `key`; the last occurrence wins, as in
    /// cloud-init. Properties of `Entity` children are not considered.
    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties
            .iter()
            .rev()
            .find(|p| p.key == key)
            .map(|p| p.value.as_str())
    }
}

/// The `PlatformSection`: what the hypervisor says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Platform {
    /// `Kind`, e.g. `VMware ESXi`.
    pub kind: Option<String>,
    /// `Version`, e.g. `8.0.2`.
    pub version: Option<String>,
    /// `Vendor`, e.g. `VMware, Inc.`.
    pub vendor: Option<String>,
    /// `Locale`, e.g. `en`.
    pub locale: Option<String>,
    /// `TimeZone` (the OVF schema defines it as an offset from UTC in minutes; kept verbatim).
    pub time_zone: Option<String>,
}

/// One `Property` (`oe:key`, `oe:value`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Property {
    /// The property key.
    pub key: String,
    /// The value after XML attribute normalization: `&#10;` stays a newline, a literal newline
    /// inside the attribute becomes a space. An absent value is the empty string.
    pub value: String,
}

/// An `Entity` child of the environment (another virtual system of the same vApp).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Entity {
    /// `oe:id` of the entity.
    pub id: Option<String>,
    /// Properties of the entity's `PropertySection`s, in document order.
    pub properties: Vec<Property>,
}

/// A `ve:Adapter` of the `ve:EthernetAdapterSection`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct EthernetAdapter {
    /// `ve:mac`, as written (vSphere writes lower-case colon-separated hex).
    pub mac: String,
    /// `ve:network`: the name of the port group.
    pub network: Option<String>,
    /// `ve:unitNumber`: the virtual device unit number.
    pub unit_number: Option<u32>,
}

/// Parses an OVF environment document.
///
/// Rules (see `docs/ovf.md` for the rationale):
/// - the root must be `Environment` in the [`OVF_ENV_NS`] namespace;
/// - sections (`PropertySection`, `PlatformSection`, `Entity`, `Property`, ...) are recognised in
///   the OVF namespace or in no namespace; `ve:EthernetAdapterSection`/`ve:Adapter` in
///   [`VMWARE_OVFENV_NS`]; unknown elements are skipped;
/// - attributes are accepted in their element's namespace (`oe:key`, `ve:mac`) and, leniently,
///   unprefixed (`key=`), because hand-written documents use both; the prefixed one wins;
/// - a UTF-8 BOM, leading whitespace and trailing NULs/whitespace (as guestinfo values carry)
///   are accepted;
/// - a document over [`MAX_OVF_ENV_BYTES`], a duplicate attribute and a `<` inside an
///   attribute value are refused; no message quotes an attribute value (any property may
///   hold a password), and names are cut short.
pub fn parse(xml: &[u8]) -> Result<Environment, EnvError> {
    let size = xml.len() as u64;
    if size > MAX_OVF_ENV_BYTES {
        let max = MAX_OVF_ENV_BYTES;
        return Err(EnvError::TooLarge { size, max });
    }
    reader::parse(xml)
}

/// Why an OVF environment file could not be read (before parsing).
#[derive(Debug, thiserror::Error)]
pub enum EnvReadError {
    /// Reading failed: the file is unreadable (exit 74, `EX_IOERR`). The `io::Error` is the
    /// source, so a caller's error chain finds it.
    #[error("cannot be read")]
    Io(#[from] std::io::Error),
    /// Larger than [`MAX_OVF_ENV_BYTES`]: invalid input (exit 65, `EX_DATAERR`).
    #[error("larger than {max} bytes; an ovf environment is never that large, check that the right file was given")]
    TooLarge {
        /// The cap.
        max: u64,
    },
}

/// Reads an OVF environment file, stopping after [`MAX_OVF_ENV_BYTES`] + 1 bytes instead of
/// reading a huge file whole.
pub fn read_env_capped<R: std::io::Read>(reader: R) -> Result<Vec<u8>, EnvReadError> {
    let read = vmcust_imc::read_at_most(reader, MAX_OVF_ENV_BYTES, 0)?;
    if read.cut {
        return Err(EnvReadError::TooLarge {
            max: MAX_OVF_ENV_BYTES,
        });
    }
    Ok(read.bytes)
}
