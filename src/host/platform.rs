//! Platform detection: is this a VMware guest, and what is its default instance id?
//!
//! Reads DMI (`product_name`, `sys_vendor`, `product_uuid` under the root's
//! `sys/class/dmi/id/`) and asks the CPU for its hypervisor vendor. Cheap and silent: a
//! missing or unreadable file is simply unknown.

use std::path::Path;

use serde::Serialize;

/// DMI directory relative to the root.
pub(crate) const DMI_DIR: &str = "sys/class/dmi/id";

/// `sys_vendor` of a VMware virtual machine.
pub(crate) const VMWARE_VENDOR: &str = "VMware, Inc.";

/// What the platform says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Platform {
    /// DMI `product_name` (e.g. `VMware7,1`, `VMware Virtual Platform`), trimmed.
    pub product_name: Option<String>,
    /// DMI `sys_vendor` (e.g. `VMware, Inc.`), trimmed.
    pub sys_vendor: Option<String>,
    /// DMI `product_uuid` as read (trimmed); readable by root only.
    pub product_uuid: Option<String>,
    /// Whether CPUID reports the `VMwareVMware` hypervisor; `None` where it cannot be asked.
    pub cpuid_vmware: Option<bool>,
}

impl Platform {
    /// Detects the platform of `root` (DMI files) and of the running CPU.
    pub(crate) fn detect(root: &Path) -> Self {
        Self::from_root(root, super::backdoor::is_vmware_cpu())
    }

    /// Reads DMI from `root`, with the CPUID answer given (for tests).
    pub(crate) fn from_root(root: &Path, cpuid_vmware: Option<bool>) -> Self {
        let dmi = root.join(DMI_DIR);
        let read = |name: &str| -> Option<String> {
            let path = dmi.join(name);
            match std::fs::read(&path) {
                Ok(bytes) => {
                    let s = String::from_utf8_lossy(&bytes).trim().to_string();
                    (!s.is_empty()).then_some(s)
                }
                Err(e) => {
                    tracing::debug!("{}: {e}", path.display());
                    None
                }
            }
        };
        Platform {
            product_name: read("product_name"),
            sys_vendor: read("sys_vendor"),
            product_uuid: read("product_uuid"),
            cpuid_vmware,
        }
    }

    /// Whether DMI names VMware: `product_name` contains `vmware` in any case, or
    /// `sys_vendor` is `VMware, Inc.`.
    pub(crate) fn dmi_vmware(&self) -> bool {
        self.product_name
            .as_deref()
            .is_some_and(|p| p.to_ascii_lowercase().contains("vmware"))
            || self.sys_vendor.as_deref() == Some(VMWARE_VENDOR)
    }

    /// Whether this is a VMware guest by DMI or by CPUID.
    pub(crate) fn is_vmware(&self) -> bool {
        self.dmi_vmware() || self.cpuid_vmware == Some(true)
    }

    /// The default instance id: the lower-cased product UUID (Linux 4.17 changed its case,
    /// which must not look like a new instance).
    pub(crate) fn default_instance_id(&self) -> Option<String> {
        self.product_uuid.as_deref().map(str::to_ascii_lowercase)
    }

    /// The instance id used when no source names one: the lower-cased DMI product UUID,
    /// else `iid-vmcust` (the same at boot and on the command line).
    pub(crate) fn instance_id_or_default(&self) -> crate::model::InstanceId {
        self.default_instance_id()
            .and_then(|id| crate::model::InstanceId::parse(&id).ok())
            .unwrap_or_else(|| {
                crate::model::InstanceId::parse("iid-vmcust").expect("a valid instance id")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let dmi = d.path().join(DMI_DIR);
        std::fs::create_dir_all(&dmi).unwrap();
        for (name, value) in files {
            std::fs::write(dmi.join(name), value).unwrap();
        }
        d
    }

    /// DMI files, the CPUID answer, and whether that is VMware.
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<bool>, bool);

    #[test]
    fn detection_table() {
        let cases: &[Case] = &[
            (&[("product_name", "VMware7,1\n")], Some(false), true),
            (&[("product_name", "VMware Virtual Platform\n")], None, true),
            (&[("product_name", "vmware-ish")], None, true),
            (&[("sys_vendor", "VMware, Inc.\n")], None, true),
            (&[("sys_vendor", "VMware")], None, false),
            (
                &[("product_name", "Standard PC (Q35)\n")],
                Some(false),
                false,
            ),
            (&[("product_name", "KVM")], Some(true), true),
            (&[], None, false),
        ];
        for (files, cpuid, want) in cases {
            let r = root(files);
            let p = Platform::from_root(r.path(), *cpuid);
            assert_eq!(p.is_vmware(), *want, "{files:?} {cpuid:?}");
        }
    }

    #[test]
    fn instance_id_is_lower_cased_uuid() {
        let r = root(&[("product_uuid", "82343CED-E4C7-423B-8F6B-0D34D19067AB\n")]);
        let p = Platform::from_root(r.path(), None);
        assert_eq!(
            p.default_instance_id().as_deref(),
            Some("82343ced-e4c7-423b-8f6b-0d34d19067ab")
        );
        let empty = root(&[("product_uuid", "\n")]);
        assert_eq!(
            Platform::from_root(empty.path(), None).default_instance_id(),
            None
        );
    }
}
