//! The pipeline the command line and the boot stages share: [`gather`] the sources into
//! one validated customization, then [`customize`] it for a root (facts → plan → boot
//! steps); `apply` carries the plan out, all or nothing.

pub mod customize;
pub mod gather;
