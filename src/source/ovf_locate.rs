//! Finding the OVF environment: a seed file, `guestinfo.ovfEnv`, or an OVF transport CD
//! read straight from the device (no mount), in that order (cloud-init reference §6.2).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use vmcust_ovf::iso9660::{ovf_env_name, read_ovf_env, IsoError, IsoLimits};

use super::guestinfo::OVF_ENV;
use super::seed_media::{Format, Probed, Probes};
use crate::host::GuestRpc;
use crate::root::Root;

/// Seed files checked first, in order (cloud-init's location, then vmcust's own).
pub(crate) const SEED_FILES: &[&str] = &[
    "/var/lib/cloud/seed/ovf-env.xml",
    "/var/lib/cloud/seed/ovf/ovf-env.xml",
    crate::state::OVF_SEED,
];

/// CD devices tried for an OVF transport ISO.
pub(crate) const CD_DEVICES: &[&str] = &[
    "/dev/sr0", "/dev/sr1", "/dev/sr2", "/dev/sr3", "/dev/hda", "/dev/hdb", "/dev/hdc", "/dev/hdd",
];

/// Byte offset of the first ISO9660 volume descriptor (sector 16).
const ISO_DESCRIPTOR_OFFSET: u64 = 16 * 2048;

/// Where an OVF environment was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum OvfOrigin {
    /// A file given on the command line or a seed file.
    File {
        /// Its path.
        path: PathBuf,
    },
    /// `guestinfo.ovfEnv`.
    Guestinfo,
    /// A file inside an ISO9660 image or CD.
    Iso {
        /// The image or device.
        path: PathBuf,
        /// The volume label.
        label: String,
        /// The file's name on the medium (`OVF_ENV.XML;1`, `ovf-env.xml`, …).
        file: String,
    },
}

impl std::fmt::Display for OvfOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OvfOrigin::File { path } => write!(f, "{}", path.display()),
            OvfOrigin::Guestinfo => f.write_str(OVF_ENV),
            OvfOrigin::Iso { path, file, .. } => write!(f, "{} on {}", file, path.display()),
        }
    }
}

/// An OVF environment document and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct FoundEnv {
    /// Where it was found.
    pub origin: OvfOrigin,
    /// The XML bytes.
    pub xml: Vec<u8>,
}

/// Reads an OVF environment from a path that is either the XML itself or an ISO9660
/// image (told apart by the `CD001` signature).
pub(crate) fn read_path(path: &Path) -> Result<FoundEnv> {
    let mut f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    if is_iso(&mut f)? {
        return read_iso(&mut f, path)?
            .with_context(|| format!("{}: the ISO image has no ovf-env.xml", path.display()));
    }
    f.seek(SeekFrom::Start(0))?;
    let xml = vmcust_ovf::read_env_capped(&mut f)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(FoundEnv {
        origin: OvfOrigin::File {
            path: path.to_path_buf(),
        },
        xml,
    })
}

fn is_iso(f: &mut File) -> Result<bool> {
    let mut sig = [0u8; 6];
    if f.seek(SeekFrom::Start(ISO_DESCRIPTOR_OFFSET)).is_err() {
        return Ok(false);
    }
    Ok(f.read_exact(&mut sig).is_ok() && &sig[1..6] == b"CD001")
}

fn read_iso(f: &mut File, path: &Path) -> Result<Option<FoundEnv>> {
    let found = read_ovf_env(f, &IsoLimits::default())
        .with_context(|| format!("reading the ISO image {}", path.display()))?;
    Ok(found.map(|iso| FoundEnv {
        origin: OvfOrigin::Iso {
            path: path.to_path_buf(),
            label: iso.label,
            file: iso.file_name,
        },
        xml: iso.bytes,
    }))
}

/// Looks for an OVF environment in the documented order: seed files in the root, then
/// `guestinfo.ovfEnv` (when a host is given), then the CD devices of the root (each
/// opened once in a discovery, through `media`).
pub(crate) fn locate(
    root: &Root,
    rpc: Option<&mut dyn GuestRpc>,
    media: &Probes,
) -> Result<Option<FoundEnv>> {
    for seed in SEED_FILES {
        let path = Path::new(seed);
        if root.is_file(path) {
            let real = root.resolve(path, true)?;
            let mut found = read_path(&real)?;
            found.origin = OvfOrigin::File {
                path: path.to_path_buf(),
            };
            return Ok(Some(found));
        }
    }
    if let Some(rpc) = rpc {
        match rpc.get_guestinfo(OVF_ENV) {
            Ok(Some(xml)) if !xml.iter().all(u8::is_ascii_whitespace) => {
                return Ok(Some(FoundEnv {
                    origin: OvfOrigin::Guestinfo,
                    xml,
                }))
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("could not read {OVF_ENV}: {e}"),
        }
    }
    for dev in CD_DEVICES {
        let path = root.resolve(Path::new(dev), true)?;
        if super::udev_db::rules_out(root, &path, None) {
            continue;
        }
        // An empty drive or a non-ISO medium is not an error, just not ours.
        let Some(Probed {
            format: Format::Iso9660,
            mut file,
            ..
        }) = media.probe(&path)
        else {
            continue;
        };
        // A medium that is an OVF transport but cannot be read exactly is the boot's
        // failure: taking guestinfo (or nothing) instead would customize the VM from
        // other data than the deployment gave it.
        match read_iso(&mut file, Path::new(dev)) {
            Ok(Some(found)) => return Ok(Some(found)),
            Ok(None) => {}
            Err(e) => match e.downcast_ref::<IsoError>() {
                Some(IsoError::ImageTooLarge { size, limit }) => {
                    // Most likely an installation disc left in the drive; it is the OVF
                    // transport only if it carries an OVF environment.
                    let relaxed = IsoLimits {
                        max_image_bytes: u64::MAX,
                        ..IsoLimits::default()
                    };
                    if let Ok(Some(name)) = ovf_env_name(&mut file, &relaxed) {
                        anyhow::bail!(
                            "{} on {dev}: the OVF transport image is {size} bytes, over the \
                             limit of {limit} bytes; nothing was taken from another source",
                            vmcust_imc::shown::name(&name)
                        );
                    }
                    tracing::debug!("{dev}: not an OVF transport: {e:#}");
                }
                _ => {
                    return Err(e.context(format!(
                        "the CD in {dev} cannot be read exactly; nothing was taken from \
                         another source"
                    )))
                }
            },
        }
    }
    Ok(None)
}
