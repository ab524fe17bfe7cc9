//! The pipeline the command line and the boot stages share: the sources are
//! [discovered](crate::source::discover()) into one validated customization, then
//! [`customize`] makes it a plan for a root (facts → plan → boot steps); `apply` carries
//! the plan out, all or nothing.

pub(crate) mod customize;
pub(crate) mod native;
