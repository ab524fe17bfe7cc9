//! Living with cloud-init: the `cloud-init` stand-in that makes open-vm-tools hand the
//! vSphere spec to vmcust ([`facade`]), installed only where no real cloud-init is
//! ([`stand_in`]), and stepping aside for a real cloud-init that is configured for VMware
//! customization ([`coexist`]). [`units`] is systemd's view of vmcust's units, which
//! `status --wait` asks before it waits.

pub mod coexist;
pub mod facade;
pub mod stand_in;
pub mod units;
