//! `vmcust detect`: the platform, the guest RPC transports that work, and the guestinfo
//! sources present. Off VMware (and with no `--guestinfo-dir`) nothing is asked of the host.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::guestinfo::TransportArgs;
use super::Format;
use crate::host::backdoor::Backdoor;
use crate::host::guestinfo_dir::GuestinfoDir;
use crate::host::platform::Platform;
use crate::host::rpctool::RpcTool;
use crate::host::GuestRpc;
use crate::source::encoding;
use crate::source::guestinfo::{METADATA, OVF_ENV, USERDATA, VENDORDATA};

/// Arguments of `vmcust detect`.
#[derive(Debug, Args)]
pub struct DetectArgs {
    /// Root directory whose `sys/class/dmi/id` is read.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// How to reach the host.
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// What `vmcust detect` found.
#[derive(Debug, Serialize)]
pub struct Detection {
    /// DMI values and the CPUID answer.
    pub platform: Platform,
    /// Whether this is a VMware guest.
    pub vmware: bool,
    /// The default instance id (lower-cased product UUID), if readable.
    pub default_instance_id: Option<String>,
    /// Transports and whether they work.
    pub transports: Transports,
    /// The transport used to look for sources, if any.
    pub transport_used: Option<String>,
    /// Why no source was looked for, when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources_skipped: Option<String>,
    /// Each guestinfo source looked for.
    pub sources: Vec<Source>,
}

/// The guest RPC transports.
#[derive(Debug, Serialize)]
pub struct Transports {
    /// `vmware-rpctool` on PATH.
    pub rpctool: Option<PathBuf>,
    /// `vmtoolsd` on PATH.
    pub vmtoolsd: Option<PathBuf>,
    /// `usable (privileged)`, `usable (unprivileged)` or why not.
    pub backdoor: String,
    /// The fake directory, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fake: Option<PathBuf>,
}

/// One guestinfo key looked for.
#[derive(Debug, Serialize)]
pub struct Source {
    /// The key.
    pub key: &'static str,
    /// Whether it has a value (not empty, not `---`); `None` when reading failed.
    pub present: Option<bool>,
    /// Why reading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Runs `vmcust detect`.
pub fn run(args: DetectArgs) -> Result<()> {
    let opts = args.transport.options()?;
    let platform = Platform::detect(&args.root);
    let vmware = platform.is_vmware();
    let mut tools = RpcTool::from_env();
    if let Some(t) = opts.timeout {
        tools = tools.with_timeout(t);
    }
    let mut transports = Transports {
        rpctool: tools.rpctool().map(Into::into),
        vmtoolsd: tools.vmtoolsd().map(Into::into),
        backdoor: String::new(),
        fake: opts.guestinfo_dir.clone(),
    };
    // The backdoor is probed only when the CPU says VMware (Backdoor::open checks).
    let backdoor = match platform.cpuid_vmware {
        None => {
            transports.backdoor = "unsupported on this architecture".into();
            None
        }
        Some(false) => {
            transports.backdoor = "not used: the cpu does not report the vmware hypervisor".into();
            None
        }
        Some(true) => match Backdoor::open(tools.clone()) {
            Ok(b) => {
                transports.backdoor = if b.privileged() {
                    "usable (privileged)".into()
                } else {
                    "usable (unprivileged)".into()
                };
                Some(b)
            }
            Err(e) => {
                transports.backdoor = format!("not usable: {e}");
                None
            }
        },
    };
    let (rpc, skipped): (Option<Box<dyn GuestRpc>>, Option<String>) =
        if let Some(dir) = &opts.guestinfo_dir {
            (Some(Box::new(GuestinfoDir::new(dir))), None)
        } else if !vmware {
            (None, Some("not a vmware platform".into()))
        } else if let Some(b) = backdoor {
            (Some(Box::new(b)), None)
        } else if tools.available() {
            (Some(Box::new(tools)), None)
        } else {
            (None, Some("no guest rpc transport works".into()))
        };
    let transport_used = rpc.as_ref().map(|r| r.name().to_string());
    let sources = match rpc {
        Some(mut rpc) => [METADATA, USERDATA, VENDORDATA, OVF_ENV]
            .into_iter()
            .map(|key| look(&mut *rpc, key))
            .collect(),
        None => Vec::new(),
    };
    let d = Detection {
        default_instance_id: platform.default_instance_id(),
        platform,
        vmware,
        transports,
        transport_used,
        sources_skipped: skipped,
        sources,
    };
    let out = match args.format {
        Format::Json => serde_json::to_string_pretty(&d)? + "\n",
        Format::Yaml => crate::yaml::to_string(&d)?,
        Format::Text => text(&d),
    };
    print!("{out}");
    Ok(())
}

fn look(rpc: &mut dyn GuestRpc, key: &'static str) -> Source {
    let got = rpc
        .get_guestinfo(key)
        .map_err(|e| e.to_string())
        .and_then(|v| match v {
            None => Ok(false),
            Some(raw) => encoding::normalize(key, &raw)
                .map(|v| v.is_some())
                .map_err(|e| e.to_string()),
        });
    match got {
        Ok(present) => Source {
            key,
            present: Some(present),
            error: None,
        },
        Err(e) => Source {
            key,
            present: None,
            error: Some(e),
        },
    }
}

fn opt(v: &Option<String>) -> String {
    v.as_deref()
        .map(|s| format!("{s:?}"))
        .unwrap_or_else(|| "-".into())
}

/// The report for people.
pub fn text(d: &Detection) -> String {
    let p = &d.platform;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "platform: {}",
        if d.vmware { "vmware" } else { "not vmware" }
    );
    let _ = writeln!(s, "  dmi product_name: {}", opt(&p.product_name));
    let _ = writeln!(s, "  dmi sys_vendor: {}", opt(&p.sys_vendor));
    let _ = writeln!(s, "  dmi product_uuid: {}", opt(&p.product_uuid));
    let cpuid = match p.cpuid_vmware {
        Some(true) => "VMwareVMware",
        Some(false) => "not vmware",
        None => "unknown (not x86_64)",
    };
    let _ = writeln!(s, "  cpuid hypervisor: {cpuid}");
    let _ = writeln!(s, "  default instance id: {}", opt(&d.default_instance_id));
    let t = &d.transports;
    let path = |p: &Option<PathBuf>| {
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "not found".into())
    };
    let _ = writeln!(s, "transports:");
    let _ = writeln!(s, "  vmware-rpctool: {}", path(&t.rpctool));
    let _ = writeln!(s, "  vmtoolsd: {}", path(&t.vmtoolsd));
    let _ = writeln!(s, "  backdoor: {}", t.backdoor);
    if let Some(f) = &t.fake {
        let _ = writeln!(s, "  fake: {}", f.display());
    }
    match (&d.transport_used, &d.sources_skipped) {
        (Some(used), _) => {
            let _ = writeln!(s, "sources (via {used}):");
            for src in &d.sources {
                let state = match (&src.present, &src.error) {
                    (Some(true), _) => "present".to_string(),
                    (Some(false), _) => "absent".to_string(),
                    (None, Some(e)) => format!("error: {e}"),
                    (None, None) => "unknown".to_string(),
                };
                let _ = writeln!(s, "  {}: {state}", src.key);
            }
        }
        (None, why) => {
            let _ = writeln!(
                s,
                "sources: not looked for ({})",
                why.as_deref().unwrap_or("no transport")
            );
        }
    }
    s
}
