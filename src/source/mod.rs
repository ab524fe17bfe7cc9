//! Sources: where a customization comes from. Each source reads its format into the
//! engine's [`Customization`](crate::model::Customization); none writes to the system.

pub mod imc;
