//! vmcust-imc: the vSphere guest customization spec (`cust.cfg`).
//!
//! [`RawSpec`] reads the INI text strictly (see `docs/imc-reader.md`); [`Spec`] validates every key
//! into types and reports all problems at once. No system I/O happens here: bytes in, types out.

mod check;
mod dns;
mod dns_name;
mod error;
mod file_name;
mod hostname;
mod limits;
mod mac;
mod netmask;
mod nic;
mod password;
mod reader;
mod secret;
pub mod shown;
mod spec;
mod suggest;
mod timezone;
mod zones;

pub use dns::Dns;
pub use dns_name::{DnsName, MAX_FQDN};
pub use error::{Problem, SpecError, Warning};
pub use file_name::FileName;
pub use hostname::HostName;
pub use limits::{
    read_at_most, read_capped, read_capped_from, read_cust_cfg, Capped, CappedReadError, Limits,
    MAX_CUST_CFG_BYTES, MAX_ENTRIES, MAX_NICS, MAX_SECTIONS,
};
pub use mac::MacAddr;
pub use netmask::{ipv4_prefix, ipv6_prefix, prefix_for};
pub use nic::{BootProto, Ipv4Mode, Ipv4Static, Ipv6Entry, Nic};
pub use password::Password;
pub use reader::{RawEntry, RawSection, RawSpec, ReadError};
pub use secret::{is_secret_key, Secret, REDACTED};
pub use spec::{
    CloudInit, DateTime, DomainName, KeptValue, Misc, Network, Parsed, Spec, SpecKind, UnknownEntry,
};
pub use suggest::closest;
pub use timezone::Timezone;
pub use zones::ZoneList;
