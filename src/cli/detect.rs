//! `vmcust detect`: the platform, the guest RPC transports that work, the guestinfo
//! sources present, and whether a boot would take the instance they hold (the trust
//! rule of `docs/security.md`). Off VMware (and with no `--guestinfo-dir`) nothing is
//! asked of the host.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
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

/// Print the platform, the guest RPC transports that work and the sources found.
#[derive(Debug, Args)]
pub(crate) struct DetectArgs {
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
pub(super) struct Detection {
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
    /// What a boot would do with this root, and why.
    pub doctor: Doctor,
    /// Whether a boot would take the instance the OVF environment or guestinfo holds.
    pub trust: Trust,
}

/// The trust rule applied to what the sources hold now (`docs/security.md`).
#[derive(Debug, Serialize)]
pub(super) struct Trust {
    /// This VM's product UUID (lower-cased), if readable.
    pub product_uuid: Option<String>,
    /// The product UUID recorded at the last boot.
    pub last_boot_uuid: Option<String>,
    /// Whether guestinfo and OVF data may bring a new instance here.
    pub new_vm: bool,
    /// Why.
    pub reason: String,
    /// `[trust] recustomize_same_vm`.
    pub recustomize_same_vm: bool,
    /// `[trust] sources`: the sources that are on.
    pub sources: String,
    /// The instance id the OVF environment / guestinfo hold now, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// `customize`, `customized already`, `refused`, `nothing` or `error`.
    pub verdict: &'static str,
    /// What a boot would do with it, for people.
    pub detail: String,
    /// The new instance the last boot refused, if it refused one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_at_boot: Option<String>,
}

/// Applies the boot's trust rule to what the OVF environment and guestinfo (through
/// `rpc`, when there is a host) hold now. Reads only; records nothing.
pub(super) fn trust(root_dir: &std::path::Path, rpc: Option<&mut dyn GuestRpc>) -> Trust {
    use crate::boot::vm_identity::{read_refusal, Identity};
    use crate::source::{discover, Door};
    let platform = Platform::from_root(root_dir, None);
    let Ok(root) = crate::root::Root::new(root_dir) else {
        return Trust {
            product_uuid: platform.default_instance_id(),
            last_boot_uuid: None,
            new_vm: false,
            reason: format!("cannot open root {}", root_dir.display()),
            recustomize_same_vm: false,
            sources: "-".into(),
            instance_id: None,
            verdict: "error",
            detail: format!("cannot open root {}", root_dir.display()),
            refused_at_boot: None,
        };
    };
    let (settings, _) = crate::settings::load(&root);
    let identity = Identity::read(&root, &platform);
    let mut out = Trust {
        product_uuid: identity.current.clone(),
        last_boot_uuid: identity.last_boot.clone(),
        new_vm: identity.is_new_vm(),
        reason: identity.reason(),
        recustomize_same_vm: settings.recustomize_same_vm,
        sources: settings.sources.list(),
        instance_id: None,
        verdict: "nothing",
        detail: String::new(),
        refused_at_boot: read_refusal(&root).map(|r| r.to_string()),
    };
    let on = settings.sources.without("imc");
    let mut door = Door {
        root: &root,
        enabled: on,
        rpc: match on.contains("guestinfo") {
            true => rpc.map(|r| r as &mut dyn GuestRpc),
            false => None,
        },
        imc: None,
        given: None,
        mapping: Default::default(),
        media: Default::default(),
    };
    let g = match discover(&mut door, &platform.instance_id_or_default()) {
        Ok(g) => g,
        Err(e) => {
            out.verdict = "error";
            out.detail = format!("the data cannot be used: {}", e.reason);
            return out;
        }
    };
    if g.is_empty() {
        out.detail = "no instance in the OVF environment, a seed drive or guestinfo".into();
        return out;
    }
    let id = g.instance_id().clone();
    let from = g.from();
    out.instance_id = Some(id.to_string());
    let done = crate::state::instance_dir(&id).join(crate::state::RESULT_JSON);
    if root.is_file(&done) {
        out.verdict = "customized already";
        out.detail = format!("instance {id} from {from} was customized already: nothing to do");
    } else if out.new_vm || out.recustomize_same_vm {
        out.verdict = "customize";
        out.detail = format!("a boot would customize new instance {id} from {from}");
    } else {
        out.verdict = "refused";
        out.detail = format!(
            "new instance {id} from {from} is refused: {}; a boot does not read guestinfo \
             on this VM. If the host wrote it and guest users cannot (docs/security.md), set \
             [trust] recustomize_same_vm = true",
            out.reason
        );
    }
    out
}

/// What a boot would do with the root: the customization waiting, the settings, the
/// network renderer, and whether vmcust steps aside for a real cloud-init.
#[derive(Debug, Serialize)]
pub(super) struct Doctor {
    /// A spec handed over by open-vm-tools and not yet taken in, or an interrupted run.
    pub pending: Vec<String>,
    /// The run status of this boot (`not run` when no stage ran).
    pub run: String,
    /// Instances customized so far.
    pub instances: usize,
    /// Problems in the settings file (each setting concerned keeps its default).
    pub settings_problems: Vec<String>,
    /// The renderer a customization would write for.
    pub renderer: String,
    /// Why that renderer.
    pub renderer_reason: String,
    /// What `/usr/bin/cloud-init` is.
    pub cloud_init: String,
    /// Why vmcust would leave a vSphere spec to a real cloud-init; `None` when it would not.
    pub step_aside: Option<String>,
    /// The cloud-init file whose `disable_vmware_customization` decided, if any.
    pub decided_by: Option<PathBuf>,
}

/// Looks at `root` as a boot would; problems become lines, never errors.
pub(super) fn doctor(root_dir: &std::path::Path) -> Doctor {
    use crate::cloud_init::coexist::{self, VmwareCustomization};
    use crate::state::{CUST_CFG, IMC_DIR, PENDING_DIR};
    use std::path::Path;
    let Ok(root) = crate::root::Root::new(root_dir) else {
        return Doctor {
            pending: Vec::new(),
            run: format!("cannot open root {}", root_dir.display()),
            instances: 0,
            settings_problems: Vec::new(),
            renderer: "-".into(),
            renderer_reason: "-".into(),
            cloud_init: "-".into(),
            step_aside: None,
            decided_by: None,
        };
    };
    let (settings, warnings) = crate::settings::load(&root);
    let mut pending = Vec::new();
    let cust = Path::new(IMC_DIR).join(CUST_CFG);
    if root.is_file(&cust) {
        pending.push(format!(
            "{} (handed over by open-vm-tools, not yet taken in)",
            cust.display()
        ));
    }
    if root.is_dir(Path::new(PENDING_DIR)) {
        pending.push(format!(
            "{PENDING_DIR} (a customization in progress or interrupted; the next boot resumes it)"
        ));
    }
    let run = match crate::state::read_status(&root) {
        Ok(Some(st)) => format!(
            "{} (stage {}, updated {})",
            st.state.word(),
            st.stage.as_deref().unwrap_or("-"),
            crate::state::rfc3339(st.updated)
        ),
        Ok(None) => "not run".into(),
        Err(e) => format!("unreadable: {e:#}"),
    };
    let instances = crate::state::read_results(&root)
        .map(|r| r.len())
        .unwrap_or(0);
    // The same choice a plan makes: the facts' one detection, or the settings' name.
    let (renderer, renderer_reason) = match crate::facts::network::NetworkFacts::gather(&root) {
        Ok(facts) => {
            let named = crate::engine::customize::Options::from_settings(&settings, None).renderer;
            match crate::plan::network::renderers::choose(named, &facts) {
                Ok(c) => (c.renderer.name().to_string(), c.reason),
                Err(e) => ("none".to_string(), e.to_string()),
            }
        }
        Err(e) => (
            "unknown".to_string(),
            format!("the network stacks could not be read: {e:#}"),
        ),
    };
    let real = coexist::real_cloud_init(&root);
    let decided_by = match coexist::vmware_customization(&root) {
        VmwareCustomization::Enabled { file } | VmwareCustomization::Disabled { file } => {
            Some(file)
        }
        VmwareCustomization::Unset => None,
    };
    let cloud_init = match &real {
        None if coexist::is_vmcust_stand_in(&root) => {
            "vmcust's stand-in (no real cloud-init installed)".to_string()
        }
        None => "absent: open-vm-tools will not hand a spec to vmcust; install the package \
                 or run `vmcust cloud-init-link sync`"
            .to_string(),
        Some(r) => format!(
            "a real cloud-init, VMware customization {}{}",
            if r.vmware.enabled() {
                "enabled"
            } else {
                "not enabled"
            },
            if r.disabled {
                ", but cloud-init itself is disabled"
            } else {
                ""
            }
        ),
    };
    Doctor {
        pending,
        run,
        instances,
        settings_problems: warnings.iter().map(ToString::to_string).collect(),
        renderer,
        renderer_reason,
        cloud_init,
        step_aside: if settings.imc_enabled {
            coexist::should_step_aside(&root, &settings)
        } else {
            Some(format!(
                "vSphere customization is switched off by [imc] enabled = false in {}",
                crate::state::SETTINGS_PATH
            ))
        },
        decided_by,
    }
}

/// The guest RPC transports.
#[derive(Debug, Serialize)]
pub(super) struct Transports {
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
pub(super) struct Source {
    /// The key.
    pub key: &'static str,
    /// Whether it has a value (not empty, not `---`); `None` when reading failed.
    pub present: Option<bool>,
    /// Why reading failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Runs `vmcust detect`.
pub(super) fn run(args: DetectArgs) -> Result<()> {
    // A root that is not there is an error, not a report of nothing found (exit 74).
    crate::root::Root::new(&args.root)
        .with_context(|| format!("opening root {}", args.root.display()))?;
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
    let mut rpc = rpc;
    let sources = match rpc.as_deref_mut() {
        Some(rpc) => [METADATA, USERDATA, VENDORDATA, OVF_ENV]
            .into_iter()
            .map(|key| look(rpc, key))
            .collect(),
        None => Vec::new(),
    };
    let trust = trust(
        &args.root,
        rpc.as_mut().map(|r| &mut **r as &mut dyn GuestRpc),
    );
    let d = Detection {
        default_instance_id: platform.default_instance_id(),
        platform,
        vmware,
        transports,
        transport_used,
        sources_skipped: skipped,
        sources,
        doctor: doctor(&args.root),
        trust,
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
pub(super) fn text(d: &Detection) -> String {
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
    let doc = &d.doctor;
    let _ = writeln!(s, "customization:");
    if doc.pending.is_empty() {
        let _ = writeln!(s, "  pending: none");
    }
    for p in &doc.pending {
        let _ = writeln!(s, "  pending: {p}");
    }
    let _ = writeln!(s, "  run this boot: {}", doc.run);
    let _ = writeln!(s, "  instances customized: {}", doc.instances);
    let _ = writeln!(s, "settings:");
    if doc.settings_problems.is_empty() {
        let _ = writeln!(s, "  no problems");
    }
    for w in &doc.settings_problems {
        let _ = writeln!(s, "  problem: {w}");
    }
    let _ = writeln!(
        s,
        "network renderer: {} ({})",
        doc.renderer, doc.renderer_reason
    );
    let _ = writeln!(s, "cloud-init: {}", doc.cloud_init);
    match (&doc.step_aside, &doc.decided_by) {
        (Some(why), _) => {
            let _ = writeln!(s, "step aside: yes: {why}");
        }
        (None, _) => {
            let _ = writeln!(s, "step aside: no, vmcust handles vSphere customization");
        }
    }
    if let Some(f) = &doc.decided_by {
        let _ = writeln!(
            s,
            "  disable_vmware_customization decided by {}",
            f.display()
        );
    }
    let t = &d.trust;
    let _ = writeln!(s, "trust: {}", t.reason);
    let _ = writeln!(
        s,
        "  sources on: {}; recustomize_same_vm: {}",
        t.sources, t.recustomize_same_vm
    );
    let _ = writeln!(s, "  {}: {}", t.verdict, t.detail);
    if let Some(r) = &t.refused_at_boot {
        let _ = writeln!(s, "  last boot: {r}");
    }
    s
}
