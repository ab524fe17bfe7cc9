//! vmcust-ovf: the OVF environment document and OVF transport ISO images.
