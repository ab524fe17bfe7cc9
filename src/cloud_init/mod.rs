//! Living with cloud-init: the `cloud-init` stand-in, vmcust answering as cloud-init so
//! that open-vm-tools hands it the vSphere spec ([`stand_in`]), and what it says for the
//! cloud-init commands it does not answer ([`equivalents`]); the `/usr/bin/cloud-init`
//! link and drop-in that install it, only where no real cloud-init is ([`link`]); stepping
//! aside for a real cloud-init that is configured for VMware customization ([`coexist`]);
//! and systemd's view of vmcust's units, which `status --wait` asks before it waits
//! ([`units`]).

pub mod coexist;
pub mod equivalents;
pub mod link;
pub mod stand_in;
pub mod units;
