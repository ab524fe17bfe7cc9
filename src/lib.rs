//! vmcust: VMware/OVF guest customization engine for Linux guests.
