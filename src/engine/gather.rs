//! Gather: every source that applies, read through the same doors into one validated
//! [`Customization`], for the command line (`show`, `plan`, `apply`) and the boot stages
//! (`run`) alike. Sources never write to the system.
//!
//! What is read: a vSphere spec (`cust.cfg`) with its companion files (raw cloud-init
//! metadata and user-data); an OVF environment, with the appliance property mapping
//! (`/etc/vmcust/ovf-properties.conf` in the root, or a file given on the command line)
//! and the local seed its `seedfrom` names; guestinfo metadata, user-data and
//! vendordata. Precedence is [`crate::source::merge`]'s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::host::GuestRpc;
use crate::model::{Customization, InstanceId, InvalidValue};
use crate::report::Code;
use crate::root::Root;
use crate::source::appliance::{PropertyMap, MAPPING_PATH};
use crate::source::merge::{merge, SourceKind};
use crate::source::ovf_locate::{FoundEnv, OvfOrigin};
use crate::source::{guestinfo, metadata, ovf};

/// Largest companion file read next to a spec (raw cloud-init metadata, user-data).
pub const MAX_COMPANION_FILE: u64 = 16 * 1024 * 1024;

/// A vSphere spec and where its companion files are.
pub struct ImcInput {
    /// The validated spec.
    pub parsed: vmcust_imc::Parsed,
    /// The directory the spec's companion files are in (the pending copy at boot, the
    /// spec's own directory on the command line).
    pub dir: PathBuf,
}

/// Where the appliance property mapping comes from.
#[derive(Debug, Clone, Default)]
pub enum MappingSource {
    /// `/etc/vmcust/ovf-properties.conf` in the target root, if it is there.
    #[default]
    Root,
    /// This file (the command line's `--ovf-properties`).
    File(PathBuf),
}

/// Every source to read.
#[derive(Default)]
pub struct Sources<'a> {
    /// A vSphere spec.
    pub imc: Option<ImcInput>,
    /// An OVF environment document, already found.
    pub ovf: Option<FoundEnv>,
    /// The host to read guestinfo data from.
    pub guestinfo: Option<&'a mut dyn GuestRpc>,
    /// The appliance property mapping.
    pub mapping: MappingSource,
}

/// User-data and the source it came from.
#[derive(Debug, Clone)]
pub struct UserData {
    /// The bytes as received (decoded).
    pub bytes: Vec<u8>,
    /// Its source.
    pub from: SourceKind,
}

/// What a vSphere spec asks of the boot engine besides the customization itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImcOptions {
    /// `POST-GC-STATUS`: report progress in `guestinfo.gc.status`.
    pub post_gc_status: bool,
    /// `DEFAULT-RUN-POST-CUST-SCRIPT`: run scripts when tools.conf does not say.
    pub default_run_post_cust_script: bool,
    /// The spec carries raw cloud-init data instead of a traditional customization.
    pub raw_cloud_init: bool,
}

/// Everything gathered, validated and merged.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The customization; its instance id is always set (the sources', else the
    /// fallback given to [`gather`]).
    pub customization: Customization,
    /// Field → the source it came from.
    pub origins: BTreeMap<&'static str, SourceKind>,
    /// User-data for the late stage.
    pub userdata: Option<UserData>,
    /// Raw cloud-init metadata as received, kept for cloud-init's NoCloud seed.
    pub raw_metadata: Option<Vec<u8>>,
    /// What the vSphere spec asks of the engine, when there is one.
    pub imc: Option<ImcOptions>,
    /// Guestinfo keys to clear once the data is applied.
    pub redact: Vec<String>,
    /// The guestinfo metadata's `wait-on-network`: which address families the late
    /// stage waits for before publishing the guest's addresses.
    pub wait_on_network: Option<metadata::WaitOnNetwork>,
    /// Where the OVF environment was found.
    pub ovf_origin: Option<OvfOrigin>,
    /// Non-fatal findings, each naming its source.
    pub warnings: Vec<String>,
}

impl Gathered {
    /// The instance id.
    pub fn instance_id(&self) -> &InstanceId {
        self.customization
            .instance_id
            .as_ref()
            .expect("gather always sets the instance id")
    }
}

/// Why the sources cannot be used: the code and `guestinfo.gc.status` text for the host,
/// the reason for people (naming the source and the key, never a secret's value).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{reason}")]
pub struct GatherError {
    /// The code reported to the host.
    pub code: Code,
    /// The text for `guestinfo.gc.status`.
    pub gc_text: &'static str,
    /// The reason, for people.
    pub reason: String,
    /// True when the input is at fault (exit 65), false when reading failed (exit 74).
    pub invalid: bool,
}

impl GatherError {
    fn invalid(gc_text: &'static str, reason: impl Into<String>) -> Self {
        GatherError {
            code: Code::CustomizeFailed,
            gc_text,
            reason: reason.into(),
            invalid: true,
        }
    }

    fn unreadable(gc_text: &'static str, reason: impl Into<String>) -> Self {
        GatherError {
            code: Code::CustomizeFailed,
            gc_text,
            reason: reason.into(),
            invalid: false,
        }
    }
}

impl From<InvalidValue> for GatherError {
    fn from(e: InvalidValue) -> Self {
        GatherError::invalid(
            "Error parsing the customization specification",
            e.to_string(),
        )
    }
}

const GC_BAD_SPEC: &str = "Error parsing the customization specification";
const GC_META_MISSING: &str = "Error locating the cloud-init meta data file";
const GC_META_FORMAT: &str = "Error parsing the cloud-init meta data";
const GC_USERDATA_MISSING: &str = "Error locating the cloud-init userdata file";

/// Reads, validates and merges `sources`; the instance id defaults to `fallback_id`.
pub fn gather(
    root: &Root,
    sources: Sources,
    fallback_id: &InstanceId,
) -> Result<Gathered, GatherError> {
    let mut found = Vec::new();
    let mut g = Gathered {
        customization: Customization::default(),
        origins: BTreeMap::new(),
        userdata: None,
        raw_metadata: None,
        imc: None,
        redact: Vec::new(),
        wait_on_network: None,
        ovf_origin: None,
        warnings: Vec::new(),
    };
    let mut zone_line = None;
    if let Some(imc) = sources.imc {
        zone_line = imc.parsed.spec.datetime.timezone_line;
        gather_imc(imc, &mut g, &mut found)?;
    }
    if let Some(env) = sources.ovf {
        gather_ovf(root, env, &sources.mapping, &mut g, &mut found)?;
    }
    if let Some(rpc) = sources.guestinfo {
        gather_guestinfo(rpc, &mut g, &mut found)?;
    }
    let merged = merge(found);
    g.customization = merged.customization;
    g.origins = merged.origins;
    // The host name and the domain may come from two sources, each fine on its own.
    let id = &g.customization.identity;
    crate::source::field::fqdn_fits(
        "host name and domain",
        id.host_name.as_ref(),
        id.domain.as_ref(),
    )?;
    let from = g.origins.get("time-zone").copied();
    crate::source::timezone::check_merged(root, id.time_zone.as_ref(), from, zone_line)?;
    if g.customization.instance_id.is_none() {
        g.customization.instance_id = Some(fallback_id.clone());
    }
    Ok(g)
}

fn gather_imc(
    imc: ImcInput,
    g: &mut Gathered,
    found: &mut Vec<(SourceKind, Customization)>,
) -> Result<(), GatherError> {
    let spec = &imc.parsed.spec;
    g.warnings
        .extend(imc.parsed.warnings.iter().map(|w| format!("cust.cfg: {w}")));
    let raw = spec.kind() == vmcust_imc::SpecKind::RawCloudInit;
    g.imc = Some(ImcOptions {
        post_gc_status: spec.misc.post_gc_status,
        default_run_post_cust_script: spec.misc.default_run_post_cust_script,
        raw_cloud_init: raw,
    });
    if !raw {
        found.push((SourceKind::Imc, crate::source::imc::customization(spec)?));
        return Ok(());
    }
    // Raw cloud-init data: the metadata file is applied like guestinfo metadata, the
    // user-data kept for the late stage (cloud-init reference §5.6).
    let md_name = spec
        .cloudinit
        .metadata
        .as_ref()
        .map_or("metadata", |f| f.as_str());
    let text = read_companion(&imc.dir, md_name, GC_META_MISSING)?;
    let md = metadata::parse(md_name, &text).map_err(|e| GatherError {
        code: Code::WrongMetaFormat,
        gc_text: GC_META_FORMAT,
        reason: e.to_string(),
        invalid: true,
    })?;
    let (mut c, warnings) = metadata::customization(md_name, &md).map_err(|e| GatherError {
        code: Code::WrongMetaFormat,
        gc_text: GC_META_FORMAT,
        reason: e.to_string(),
        invalid: true,
    })?;
    if c.instance_id.is_none() {
        if let Some(id) = &spec.misc.instance_id {
            c.instance_id = Some(InstanceId::parse(id).map_err(|e| {
                GatherError::invalid(GC_BAD_SPEC, format!("cust.cfg: [MISC] INSTANCE-ID: {e}"))
            })?);
        }
    }
    g.warnings
        .extend(warnings.into_iter().map(|w| format!("{md_name}: {w}")));
    if let Some(name) = &spec.cloudinit.userdata {
        let ud = read_companion(&imc.dir, name.as_str(), GC_USERDATA_MISSING)?;
        g.userdata = Some(UserData {
            bytes: ud.replace('\r', "").into_bytes(),
            from: SourceKind::Imc,
        });
    }
    g.raw_metadata = Some(text.into_bytes());
    found.push((SourceKind::Imc, c));
    Ok(())
}

/// A companion file of the spec as text, bounded in size.
fn read_companion(dir: &Path, name: &str, gc_missing: &'static str) -> Result<String, GatherError> {
    use std::io::Read as _;
    let path = dir.join(name);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(GatherError::invalid(
                gc_missing,
                format!(
                    "{name} is not in the customization package (looked in {})",
                    dir.display()
                ),
            ))
        }
        Err(e) => {
            return Err(GatherError::unreadable(
                gc_missing,
                format!("reading {}: {e}", path.display()),
            ))
        }
    };
    let mut bytes = Vec::new();
    file.take(MAX_COMPANION_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            GatherError::unreadable(gc_missing, format!("reading {}: {e}", path.display()))
        })?;
    if bytes.len() as u64 > MAX_COMPANION_FILE {
        return Err(GatherError::invalid(
            gc_missing,
            format!("{name} is larger than {MAX_COMPANION_FILE} bytes"),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| GatherError::invalid(gc_missing, format!("{name} is not UTF-8 text")))
}

fn gather_ovf(
    root: &Root,
    env: FoundEnv,
    mapping: &MappingSource,
    g: &mut Gathered,
    found: &mut Vec<(SourceKind, Customization)>,
) -> Result<(), GatherError> {
    let where_ = origin_name(&env.origin);
    let parsed = vmcust_ovf::parse(&env.xml).map_err(|e| {
        GatherError::invalid(GC_BAD_SPEC, format!("OVF environment from {where_}: {e}"))
    })?;
    let map =
        match mapping {
            MappingSource::File(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    GatherError::unreadable(GC_BAD_SPEC, format!("reading {}: {e}", path.display()))
                })?;
                Some(PropertyMap::parse(&text).map_err(|e| {
                    GatherError::invalid(GC_BAD_SPEC, format!("{}: {e}", path.display()))
                })?)
            }
            MappingSource::Root => match root.read_text(Path::new(MAPPING_PATH)) {
                Ok(Some(text)) => Some(PropertyMap::parse(&text).map_err(|e| {
                    GatherError::invalid(GC_BAD_SPEC, format!("{MAPPING_PATH}: {e}"))
                })?),
                Ok(None) => None,
                Err(e) => {
                    return Err(GatherError::unreadable(
                        GC_BAD_SPEC,
                        format!("reading {MAPPING_PATH}: {e}"),
                    ))
                }
            },
        };
    let data = ovf::from_environment(&parsed, map.as_ref()).map_err(|e| {
        GatherError::invalid(GC_BAD_SPEC, format!("OVF environment from {where_}: {e}"))
    })?;
    g.warnings.extend(
        data.warnings
            .iter()
            .map(|w| format!("OVF environment: {w}")),
    );
    if let Some(ud) = data.userdata {
        g.userdata = Some(UserData {
            bytes: ud,
            from: SourceKind::Ovf,
        });
    }
    found.push((SourceKind::Ovf, data.customization));
    if let Some(seed) = &data.seedfrom {
        match seed.local_dir() {
            Some(dir) => gather_seed(root, Path::new(dir), g, found)?,
            None => g.warnings.push(format!(
                "OVF seedfrom {seed} is not followed: vmcust reads only local file:// seeds"
            )),
        }
    }
    g.ovf_origin = Some(env.origin);
    Ok(())
}

/// The local seed an OVF `seedfrom` names, read from the root: its `meta-data` ranks
/// below the environment, its `user-data` replaces the environment's (as cloud-init).
fn gather_seed(
    root: &Root,
    dir: &Path,
    g: &mut Gathered,
    found: &mut Vec<(SourceKind, Customization)>,
) -> Result<(), GatherError> {
    let read = |name: &str| {
        root.read(&dir.join(name)).map_err(|e| {
            GatherError::unreadable(
                GC_BAD_SPEC,
                format!("reading {}: {e}", dir.join(name).display()),
            )
        })
    };
    if let Some(md) = read("meta-data")? {
        let key = "seedfrom meta-data";
        let text = String::from_utf8(md)
            .map_err(|_| GatherError::invalid(GC_BAD_SPEC, format!("{key} is not UTF-8 text")))?;
        let md = metadata::parse(key, &text)
            .map_err(|e| GatherError::invalid(GC_BAD_SPEC, e.to_string()))?;
        let (c, warnings) = metadata::customization(key, &md)
            .map_err(|e| GatherError::invalid(GC_BAD_SPEC, e.to_string()))?;
        g.warnings
            .extend(warnings.into_iter().map(|w| format!("{key}: {w}")));
        found.push((SourceKind::OvfSeed, c));
    }
    if let Some(ud) = read("user-data")? {
        g.userdata = Some(UserData {
            bytes: ud,
            from: SourceKind::OvfSeed,
        });
    }
    Ok(())
}

fn gather_guestinfo(
    rpc: &mut dyn GuestRpc,
    g: &mut Gathered,
    found: &mut Vec<(SourceKind, Customization)>,
) -> Result<(), GatherError> {
    let Some(data) =
        guestinfo::read(rpc).map_err(|e| GatherError::invalid(GC_BAD_SPEC, e.to_string()))?
    else {
        return Ok(());
    };
    g.warnings
        .extend(data.warnings.iter().map(|w| format!("guestinfo: {w}")));
    if g.userdata.is_none() {
        if let Some(ud) = data.userdata {
            g.userdata = Some(UserData {
                bytes: ud,
                from: SourceKind::Guestinfo,
            });
        }
    }
    if data.vendordata.is_some() {
        g.warnings.push(
            "guestinfo: vendordata is not used by vmcust (it is cloud-init's vendor \
             configuration); it is left on the host"
                .to_string(),
        );
    }
    g.redact = data.metadata.redact.clone();
    g.wait_on_network = Some(data.metadata.wait_on_network);
    found.push((SourceKind::Guestinfo, data.customization));
    Ok(())
}

/// Where an OVF environment came from, for messages.
pub fn origin_name(origin: &OvfOrigin) -> String {
    match origin {
        OvfOrigin::File { path } => path.display().to_string(),
        OvfOrigin::Guestinfo => "guestinfo.ovfEnv".to_string(),
        OvfOrigin::Iso { path, file, .. } => format!("{} on {}", file, path.display()),
    }
}
