//! Sources: where a customization comes from. Each source reads its format into the
//! engine's [`Customization`](crate::model::Customization); none writes to the system.

pub mod appliance;
pub mod encoding;
pub mod field;
pub mod guestinfo;
pub mod imc;
pub mod merge;
pub mod metadata;
pub mod netconfig;
pub mod ovf;
pub mod ovf_locate;
pub mod sniff;
pub mod timezone;
