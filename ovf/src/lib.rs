//! vmcust-ovf: the OVF environment document and OVF transport ISO images.
//!
//! Two independent pieces, both pure (no system I/O beyond the bytes or reader handed in):
//! - [`environment`]: parse `ovf-env.xml` with namespace checks ([`parse`]);
//! - [`iso9660`]: find and read `ovf-env.xml` inside an ISO9660 image or CD device without
//!   mounting it ([`read_ovf_env`], [`volume_label`]), or any file by path ([`IsoImage`]).

pub mod environment;
pub mod iso9660;

pub use environment::{
    parse, read_env_capped, Entity, EnvError, EnvReadError, Environment, EthernetAdapter, Platform,
    Property, MAX_OVF_ENV_BYTES, OVF_ENV_NS, VMWARE_OVFENV_NS,
};
pub use iso9660::{read_ovf_env, volume_label, IsoError, IsoImage, IsoLimits, IsoOvfEnv};
