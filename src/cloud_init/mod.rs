//! Living with cloud-init: the `cloud-init` stand-in, vmcust answering as cloud-init so
//! that open-vm-tools hands it the vSphere spec ([`stand_in`]), and what it says for the
//! cloud-init commands it does not answer ([`equivalents`]); the `/usr/bin/cloud-init`
//! link and drop-in that install it, only where no real cloud-init is ([`link`]); stepping
//! aside for a real cloud-init that is configured for VMware customization ([`coexist`]);
//! systemd's view of vmcust's units, which `status --wait` asks before it waits
//! ([`units`]); the files provisioners wait on, in cloud-init's shapes
//! ([`boot_files`]); and the instance data cloud-init leaves in `/run/cloud-init`
//! ([`instance_data`]) with the stand-in's `query` of it ([`query`]).

/// The cloud-init version the stand-in claims: ≥ 21.1 so tools hands over raw cloud-init
/// data, and 23.4 because vmcust's `status` follows that release's exit codes; the same
/// version is written in `boot-finished`.
pub(crate) const CLAIMED_CLOUD_INIT_VERSION: &str = "23.4.0";

pub(crate) mod boot_files;
pub(crate) mod coexist;
pub(crate) mod equivalents;
pub(crate) mod instance_data;
pub(crate) mod link;
pub(crate) mod query;
pub(crate) mod status_report;
pub(crate) mod units;
