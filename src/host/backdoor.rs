//! Guest RPC over the VMware backdoor (crate `vmw_backdoor`) for reads and host logging,
//! with [`RpcTool`] for everything the crate cannot do (`info-set`, `deployPkg.*`).
//!
//! Rules (rust-anchors §2): the backdoor is touched only after `is_vmware_cpu()` says the
//! CPU is VMware's (elsewhere the probe kills the process with SIGSEGV); the privileged
//! probe (iopl, refused under kernel lockdown) is tried first, then the unprivileged one;
//! and the guard lives on the thread that opened it ([`Backdoor`] is neither `Send` nor
//! `Sync`). On targets other than x86_64 Linux, [`Backdoor::open`] always fails.
//!
//! The crate answers `None` for any `0 …` reply, so "no value" and "refused by the host"
//! look the same over the backdoor; a backdoor *error* falls back to the tools.

use std::marker::PhantomData;

use super::rpctool::RpcTool;
use super::{check_key, GuestRpc, RpcError};

/// The composite transport: backdoor reads and logs, tools for the rest.
#[derive(Debug)]
pub(crate) struct Backdoor {
    inner: imp::Inner,
    tools: RpcTool,
    /// Keeps the guard on the opening thread (iopl is per thread).
    _not_send: PhantomData<*const ()>,
}

/// Whether the CPU reports the `VMwareVMware` hypervisor vendor. `None` where it cannot be
/// asked (not x86_64 Linux).
pub(crate) fn is_vmware_cpu() -> Option<bool> {
    imp::is_vmware_cpu()
}

impl Backdoor {
    /// Opens the backdoor, or says why it cannot be used. Never probes unless the CPU is
    /// VMware's.
    pub(crate) fn open(tools: RpcTool) -> Result<Self, RpcError> {
        Ok(Backdoor {
            inner: imp::Inner::open()?,
            tools,
            _not_send: PhantomData,
        })
    }

    /// Whether the privileged (iopl) mode is in use.
    pub(crate) fn privileged(&self) -> bool {
        self.inner.privileged()
    }
}

impl GuestRpc for Backdoor {
    fn name(&self) -> &'static str {
        "backdoor"
    }

    fn get_guestinfo(&mut self, key: &str) -> Result<Option<Vec<u8>>, RpcError> {
        check_key(key)?;
        match self.inner.get_guestinfo(key) {
            Ok(v) => Ok(v),
            Err(e) if self.tools.available() => {
                tracing::debug!("{e}; reading {key} with the tools");
                self.tools.get_guestinfo(key)
            }
            Err(e) => Err(e),
        }
    }

    fn set_guestinfo(&mut self, key: &str, value: &str) -> Result<(), RpcError> {
        self.tools.set_guestinfo(key, value)
    }

    fn set_many(&mut self, pairs: &[(&str, &str)]) -> Vec<Result<(), RpcError>> {
        self.tools.set_many(pairs)
    }

    fn send(&mut self, rpc: &str) -> Result<String, RpcError> {
        self.tools.send(rpc)
    }

    fn log(&mut self, msg: &str) {
        if let Err(e) = self.inner.log(msg) {
            tracing::debug!("{e}; logging with the tools");
            self.tools.log(msg);
        }
    }
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod imp {
    use super::RpcError;
    use vmw_backdoor as vmw;

    pub(super) fn is_vmware_cpu() -> Option<bool> {
        Some(vmw::is_vmware_cpu())
    }

    pub(super) struct Inner {
        guard: vmw::BackdoorGuard,
        privileged: bool,
    }

    impl std::fmt::Debug for Inner {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Inner")
                .field("privileged", &self.privileged)
                .finish_non_exhaustive()
        }
    }

    fn err(e: vmw::VmwError) -> RpcError {
        RpcError::Backdoor(e.to_string())
    }

    impl Inner {
        pub(super) fn open() -> Result<Self, RpcError> {
            if !vmw::is_vmware_cpu() {
                return Err(RpcError::Backdoor(
                    "the cpu does not report the vmware hypervisor".into(),
                ));
            }
            match vmw::probe_backdoor_privileged() {
                Ok(guard) => Ok(Inner {
                    guard,
                    privileged: true,
                }),
                Err(e) => {
                    tracing::debug!("privileged backdoor probe failed ({e}); trying unprivileged");
                    let guard = vmw::probe_backdoor().map_err(err)?;
                    Ok(Inner {
                        guard,
                        privileged: false,
                    })
                }
            }
        }

        pub(super) fn privileged(&self) -> bool {
            self.privileged
        }

        pub(super) fn get_guestinfo(&mut self, key: &str) -> Result<Option<Vec<u8>>, RpcError> {
            let mut chan = self.guard.open_enhanced_chan().map_err(err)?;
            chan.get_guestinfo(key.as_bytes()).map_err(err)
        }

        pub(super) fn log(&mut self, msg: &str) -> Result<(), RpcError> {
            let mut chan = self.guard.open_enhanced_chan().map_err(err)?;
            chan.log(msg).map_err(err)
        }
    }
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
mod imp {
    use super::RpcError;

    pub(super) fn is_vmware_cpu() -> Option<bool> {
        None
    }

    /// Stand-in with the same interface; it can never be opened.
    #[derive(Debug)]
    pub(super) struct Inner;

    impl Inner {
        pub(super) fn open() -> Result<Self, RpcError> {
            Err(RpcError::Backdoor(
                "the backdoor is only supported on x86_64 linux".into(),
            ))
        }
        pub(super) fn privileged(&self) -> bool {
            false
        }
        pub(super) fn get_guestinfo(&mut self, _key: &str) -> Result<Option<Vec<u8>>, RpcError> {
            Err(RpcError::Backdoor("unsupported target".into()))
        }
        pub(super) fn log(&mut self, _msg: &str) -> Result<(), RpcError> {
            Err(RpcError::Backdoor("unsupported target".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Safe on any machine: `open` checks CPUID before any probe. This test machine is not
    /// a VMware guest, so it must refuse without touching the port.
    #[test]
    fn refuses_off_vmware_without_probing() {
        if is_vmware_cpu() == Some(true) {
            return; // a real VMware guest: nothing to check here
        }
        let e = Backdoor::open(RpcTool::with_tools(None, None)).unwrap_err();
        assert!(matches!(e, RpcError::Backdoor(_)));
    }
}
