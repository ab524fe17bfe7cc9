//! The typed, validated `cust.cfg`: every key cloud-init and the VMware Perl engine read.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::check::Checker;
use crate::dns::{parse_dns, Dns};
use crate::dns_name::{DnsName, MAX_FQDN};
use crate::error::{SpecError, Warning};
use crate::file_name::FileName;
use crate::hostname::HostName;
use crate::limits::{MAX_NICS, MAX_SECTIONS};
use crate::nic::{parse_nic, Nic};
use crate::password::{parse_password, Password};
use crate::reader::{RawEntry, RawSpec};
use crate::secret::Secret;
use crate::shown;
use crate::suggest::{closest, did_you_mean};
use crate::timezone::Timezone;

/// Sections this crate knows; `[NICn]` sections are known only when listed in `NIC-CONFIG|NICS`.
const KNOWN_SECTIONS: &[&str] = &[
    "NETWORK",
    "NIC-CONFIG",
    "DNS",
    "DATETIME",
    "PASSWORD",
    "MISC",
    "CUSTOM-SCRIPT",
    "CLOUDINIT",
    "CUSTOM-SOURCE",
    "GOSC",
];

/// A validated customization spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Spec {
    /// `[NETWORK]`.
    pub network: Network,
    /// `NIC-CONFIG|NICS` and the listed NIC sections; `None` = no network customization.
    pub nics: Option<Vec<Nic>>,
    /// `[DNS]`.
    pub dns: Dns,
    /// `[DATETIME]`.
    pub datetime: DateTime,
    /// `[PASSWORD]`.
    pub password: Password,
    /// `[MISC]`.
    pub misc: Misc,
    /// `CUSTOM-SCRIPT|SCRIPT-NAME`: file name of the user script inside the package.
    pub custom_script: Option<FileName>,
    /// `[CLOUDINIT]`: raw cloud-init data files inside the package.
    pub cloudinit: CloudInit,
    /// `CUSTOM-SOURCE|CUSTOMIZATION_SOURCE`, kept as written, not interpreted.
    pub customization_source: Option<String>,
    /// `GOSC|COMPATIBILITY`, kept as written, not interpreted.
    pub gosc_compatibility: Option<String>,
    /// Keys no one reads, in file order (each also reported as a warning).
    pub unknown: Vec<UnknownEntry>,
}

/// The result of a successful parse: the spec and the non-fatal findings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Parsed {
    /// The validated spec.
    pub spec: Spec,
    /// Unknown keys and other harmless oddities, in file order per kind.
    pub warnings: Vec<Warning>,
}

/// Which customization flow the spec asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecKind {
    /// Traditional ("LinuxPrep") customization: host name, network, password, scripts.
    Traditional,
    /// Raw cloud-init data (`CLOUDINIT|METADATA` is set).
    RawCloudInit,
}

/// `[NETWORK]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Network {
    /// `HOSTNAME`.
    pub hostname: Option<HostName>,
    /// `DOMAINNAME`: absent = keep, empty = remove.
    pub domain_name: Option<DomainName>,
    /// `NETWORKING` (legacy; kept, not used).
    pub networking: Option<String>,
    /// `BOOTPROTO` (legacy global; kept, not used).
    pub bootproto: Option<String>,
}

/// `NETWORK|DOMAINNAME` when present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum DomainName {
    /// Present but empty: remove the domain name.
    #[serde(serialize_with = "serialize_empty")]
    Clear,
    /// Set the domain name.
    Set(DnsName),
}

fn serialize_empty<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("")
}

/// `[DATETIME]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DateTime {
    /// `TIMEZONE`, shape-checked only here: whether the zone exists depends on the target
    /// (see [`crate::ZoneList`]).
    pub timezone: Option<Timezone>,
    /// The line of `TIMEZONE`, for the message when the target has no such zone.
    #[serde(skip)]
    pub timezone_line: Option<usize>,
    /// `UTC`: whether the hardware clock is in UTC.
    pub utc: Option<bool>,
}

/// `[MISC]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Misc {
    /// `MARKER-ID`: names the marker file that stops repeated customization.
    pub marker_id: Option<FileName>,
    /// `INSTANCE-ID`: the cloud-init instance id.
    pub instance_id: Option<String>,
    /// `POST-GC-STATUS`: report progress in `guestinfo.gc.status`. Default no.
    pub post_gc_status: bool,
    /// `DEFAULT-RUN-POST-CUST-SCRIPT`: run scripts when tools.conf does not say. Default no.
    pub default_run_post_cust_script: bool,
}

/// `[CLOUDINIT]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CloudInit {
    /// `METADATA`: file name of the meta-data.
    pub metadata: Option<FileName>,
    /// `USERDATA`: file name of the user-data.
    pub userdata: Option<FileName>,
}

/// A key no one reads, kept with its place in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownEntry {
    /// Section name.
    pub section: String,
    /// Key name.
    pub key: String,
    /// Value; a secret-looking key (`-X`) keeps its value as a [`Secret`].
    pub value: KeptValue,
    /// 1-based line.
    pub line: usize,
}

/// A kept value, redacted if its key says it is secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum KeptValue {
    /// An ordinary value.
    Plain(String),
    /// The value of a key starting with `-` or containing `|-`.
    Secret(Secret),
}

impl Spec {
    /// Reads and validates `cust.cfg` bytes, reporting every problem at once.
    pub fn parse(bytes: &[u8]) -> Result<Parsed, SpecError> {
        Spec::from_raw(&RawSpec::parse(bytes)?)
    }

    /// Validates an already read file.
    pub fn from_raw(raw: &RawSpec) -> Result<Parsed, SpecError> {
        let mut ck = Checker::new(raw);
        let network = parse_network(&mut ck);
        let nic_names = parse_nic_names(&mut ck);
        let nics = nic_names.as_ref().map(|(names, line)| {
            let nics: Vec<Nic> = names
                .iter()
                .filter_map(|n| parse_nic(&mut ck, n, *line))
                .collect();
            check_across_nics(&mut ck, &nics);
            nics
        });
        let spec = Spec {
            network,
            nics,
            dns: parse_dns(&mut ck),
            datetime: DateTime {
                timezone_line: raw.get_in("DATETIME", "TIMEZONE").map(|e| e.line),
                timezone: ck.field("DATETIME", "TIMEZONE", Timezone::parse),
                utc: ck.yes_no("DATETIME", "UTC"),
            },
            password: parse_password(&mut ck),
            misc: Misc {
                marker_id: ck.field("MISC", "MARKER-ID", FileName::parse),
                instance_id: ck.text("MISC", "INSTANCE-ID"),
                post_gc_status: ck.yes_no("MISC", "POST-GC-STATUS").unwrap_or(false),
                default_run_post_cust_script: ck
                    .yes_no("MISC", "DEFAULT-RUN-POST-CUST-SCRIPT")
                    .unwrap_or(false),
            },
            custom_script: ck.field("CUSTOM-SCRIPT", "SCRIPT-NAME", FileName::parse),
            cloudinit: CloudInit {
                metadata: ck.field("CLOUDINIT", "METADATA", FileName::parse),
                userdata: ck.field("CLOUDINIT", "USERDATA", FileName::parse),
            },
            customization_source: ck.text("CUSTOM-SOURCE", "CUSTOMIZATION_SOURCE"),
            gosc_compatibility: ck.text("GOSC", "COMPATIBILITY"),
            unknown: collect_unknown(
                &mut ck,
                nic_names.map(|(names, _)| names).unwrap_or_default(),
            ),
        };
        // Report in file order; problems without a line (none today) would come first.
        ck.problems.sort_by_key(|p| p.line());
        ck.warnings.sort_by_key(|w| w.line);
        if ck.problems.is_empty() {
            Ok(Parsed {
                spec,
                warnings: ck.warnings,
            })
        } else {
            Err(SpecError::Invalid(ck.problems))
        }
    }

    /// Raw cloud-init data if `CLOUDINIT|METADATA` is set, else traditional customization.
    pub fn kind(&self) -> SpecKind {
        if self.cloudinit.metadata.is_some() {
            SpecKind::RawCloudInit
        } else {
            SpecKind::Traditional
        }
    }
}

fn parse_network(ck: &mut Checker<'_>) -> Network {
    let network = Network {
        hostname: ck.field("NETWORK", "HOSTNAME", HostName::parse),
        domain_name: ck.field("NETWORK", "DOMAINNAME", |v| match v {
            "" => Ok(DomainName::Clear),
            name => DnsName::parse(name).map(DomainName::Set),
        }),
        networking: ck.text("NETWORK", "NETWORKING"),
        bootproto: ck.text("NETWORK", "BOOTPROTO"),
    };
    // The guest's FQDN is the host name's first label and DOMAINNAME; each part may be
    // valid on its own and the whole still too long for DNS (and for `hostname --fqdn`).
    if let (Some(host), Some(DomainName::Set(domain))) = (&network.hostname, &network.domain_name) {
        let length = host.short().len() + 1 + domain.as_str().len();
        if length > MAX_FQDN {
            let line = ck.raw.get_in("NETWORK", "DOMAINNAME").map(|e| e.line);
            let message = format!(
                "the fqdn {}.<DOMAINNAME> would be {length} characters, more than the {MAX_FQDN} dns allows; shorten HOSTNAME or DOMAINNAME",
                shown::name(host.short())
            );
            ck.problem(line, "NETWORK", Some("DOMAINNAME"), message);
        }
    }
    network
}

/// `NIC-CONFIG|NICS`: names trimmed (cloud-init does not trim, which breaks `NIC1, NIC2`), none
/// empty, none twice. Returns the names and the line.
fn parse_nic_names(ck: &mut Checker<'_>) -> Option<(Vec<String>, usize)> {
    let entry = ck.take("NIC-CONFIG", "NICS")?;
    let names = ck.parse_entry(entry, |v| {
        // Counted before anything is built: a hostile list of thousands of names stops here.
        let count = v.split(',').count();
        if count > MAX_NICS {
            return Err(format!(
                "{count} nics listed; at most {MAX_NICS} are supported (vSphere gives a vm at most 10), list only the nics to configure"
            ));
        }
        let names: Vec<String> = v.split(',').map(|n| n.trim().to_owned()).collect();
        if names.iter().any(String::is_empty) {
            return Err(
                "empty nic name; use comma-separated section names such as NIC1,NIC2".to_owned(),
            );
        }
        let mut seen = HashSet::new();
        if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
            return Err(format!(
                "nic {} is listed twice; list each nic section once",
                shown::name(dup)
            ));
        }
        Ok(names)
    })?;
    Some((names, entry.line))
}

/// Rules that involve more than one NIC: one primary at most, no shared MAC address.
fn check_across_nics(ck: &mut Checker<'_>, nics: &[Nic]) {
    let line_of = |nic: &Nic, key: &str| ck.raw.get_in(&nic.name, key).map(|e| e.line);
    let primaries: Vec<&Nic> = nics.iter().filter(|n| n.primary).collect();
    if let [first, rest @ ..] = primaries.as_slice() {
        for other in rest {
            let (l1, l2) = (line_of(first, "PRIMARY"), line_of(other, "PRIMARY"));
            let message = format!(
                "both {} (line {}) and {} (line {}) are primary; at most one nic may have PRIMARY = yes",
                shown::name(&first.name),
                l1.unwrap_or(first.line),
                shown::name(&other.name),
                l2.unwrap_or(other.line)
            );
            ck.problem(l2, &other.name, Some("PRIMARY"), message);
        }
    }
    let mut seen: HashMap<_, &Nic> = HashMap::new();
    for nic in nics {
        let Some(first) = seen.get(&nic.mac).copied() else {
            seen.insert(nic.mac, nic);
            continue;
        };
        let message = format!(
            "{} has the same mac address {} as {} (line {}); each nic needs its own MACADDR",
            shown::name(&nic.name),
            nic.mac,
            shown::name(&first.name),
            line_of(first, "MACADDR").unwrap_or(first.line)
        );
        ck.problem(line_of(nic, "MACADDR"), &nic.name, Some("MACADDR"), message);
    }
}

/// Keeps and reports every key no parser read; `[NICn]` sections not listed in NICS get one warning.
fn collect_unknown(ck: &mut Checker<'_>, nic_names: Vec<String>) -> Vec<UnknownEntry> {
    let nic_names: HashSet<&str> = nic_names.iter().map(String::as_str).collect();
    let is_known = |s: &str| KNOWN_SECTIONS.contains(&s) || nic_names.contains(s);
    let raw = ck.raw;
    let mut warnings: Vec<(usize, &str, Option<&str>, String)> = Vec::new();
    let mut suggested = 0;
    for section in raw.sections().iter().filter(|s| !is_known(&s.name)) {
        if looks_like_nic(&section.name) {
            let message = "nic section not listed in NIC-CONFIG|NICS; kept but not used";
            warnings.push((section.line, &section.name, None, message.to_owned()));
            continue;
        }
        // Within the default caps every unknown section is compared; a file read with the
        // caps off (tens of thousands of sections) gets suggestions for the first ones only.
        suggested += 1;
        let meant = (suggested <= MAX_SECTIONS)
            .then(|| closest(&section.name, KNOWN_SECTIONS.iter().copied()))
            .flatten();
        match meant.map(|known| (known, raw.section(known))) {
            // The typo hides the section it meant: its keys would be dropped without a word.
            Some((known, None)) => {
                let message = format!(
                    "unknown section, and there is no [{known}]: did you mean [{known}]? its keys would be ignored; rename the section to [{known}]"
                );
                ck.problem(Some(section.line), &section.name, None, message);
            }
            Some((known, Some(there))) => {
                let message = format!(
                    "unknown section; kept but not used; did you mean [{known}]? (there is a [{known}] too, at line {})",
                    there.line
                );
                warnings.push((section.line, &section.name, None, message));
            }
            None => {
                let message = "unknown section; kept but not used".to_owned();
                warnings.push((section.line, &section.name, None, message));
            }
        }
    }
    let unused: Vec<&RawEntry> = ck.unused().collect();
    for entry in &unused {
        if is_known(&entry.section) {
            let is_nic = nic_names.contains(&*entry.section);
            let message = match did_you_mean(&entry.section, is_nic, &entry.key) {
                // Keys are case-sensitive: `ipaddr` is not read as `IPADDR`.
                Some(known) => format!("unknown key; kept but not used; did you mean {known}?"),
                None => "unknown key; kept but not used".to_owned(),
            };
            warnings.push((
                entry.line,
                &*entry.section,
                Some(entry.key.as_str()),
                message,
            ));
        }
    }
    for (line, section, key, message) in warnings {
        ck.warn(Some(line), section, key, &message);
    }
    unused
        .into_iter()
        .map(|e| UnknownEntry {
            section: e.section.to_string(),
            key: e.key.clone(),
            value: if e.is_secret() {
                KeptValue::Secret(Secret::new(e.value.clone()))
            } else {
                KeptValue::Plain(e.value.clone())
            },
            line: e.line,
        })
        .collect()
}

/// `NIC` followed by digits, the names vCenter gives NIC sections.
fn looks_like_nic(name: &str) -> bool {
    name.strip_prefix("NIC")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
