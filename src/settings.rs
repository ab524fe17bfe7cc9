//! vmcust's own settings: `/etc/vmcust/vmcust.conf` under the root, an INI file.
//!
//! Every setting has a default and the file is optional, so a template works without it.
//! A bad file never stops a boot: each unknown or invalid entry gives a [`Warning`] that
//! names the file, section, key and line and the accepted values, and the default is kept.
//! The settings reference is `docs/boot.md`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::UserName;
use crate::plan::network::Renderer;
use crate::root::Root;
use crate::state::SETTINGS_PATH;

/// Largest settings file read: 64 KiB, a hundred times the example. A larger file is not
/// read (only the cap and one byte are), and the defaults apply with a warning.
pub(crate) const MAX_SETTINGS_BYTES: u64 = 64 * 1024;

/// `TimeoutStartSec` of `vmcust-early.service` in seconds; the wait for cust.cfg plus the
/// pre-customization script must fit in it, with room for applying and reporting.
pub const EARLY_UNIT_TIMEOUT_SECS: u64 = 900;

/// Time the early stage needs besides the wait and the script: applying, the NIC
/// handshake (5 attempts of up to 10 s) and reporting.
const EARLY_UNIT_MARGIN_SECS: u64 = 120;

/// Longest accepted `[imc] max_wait`, in seconds.
const MAX_WAIT_LIMIT: u64 = 3600;
/// Longest accepted `[scripts] timeout`, in seconds.
const SCRIPT_TIMEOUT_LIMIT: u64 = 86_400;

/// vmcust's settings, each with its documented default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `[imc] enabled`: handle vSphere guest customization (cust.cfg) at all. The meaning
    /// of cloud-init's `disable_vmware_customization: false`. Default `true`.
    pub imc_enabled: bool,
    /// `[imc] allow_raw_data`: accept specs carrying raw cloud-init data
    /// (`[CLOUDINIT] METADATA=`). Default `true`.
    pub allow_raw_data: bool,
    /// `[imc] max_wait`: how long to wait for `/var/run/vmware-imc/cust.cfg`. Zero means
    /// do not wait; a cust.cfg already present is still read. Default 15 s.
    pub max_wait: Duration,
    /// `[scripts] timeout`: how long a pre- or post-customization script may run before
    /// its process group is killed. Default 300 s.
    pub script_timeout: Duration,
    /// `[network] renderer`: the network stack to write for; `None` (`auto`) detects the
    /// stack the root uses. Default `auto`.
    pub renderer: Option<Renderer>,
    /// `[ssh] user`: whose `authorized_keys` receives the public keys when the source
    /// names nobody. Default `root`.
    pub ssh_user: Option<UserName>,
    /// `[log] level`: the most detailed log level written. Default `info`.
    pub log_level: tracing::Level,
    /// `[cloud-init] step_aside`: when a real cloud-init is installed and configured for
    /// VMware customization, leave the IMC spec to it. Default `true`.
    pub step_aside: bool,
    /// `[hygiene] ssh_host_keys`: give a new instance fresh SSH host keys of the types the
    /// template had. Default `true` (cloud-init's `ssh_deletekeys`).
    pub hygiene_ssh_host_keys: bool,
    /// `[hygiene] machine_id`: give a new instance a fresh `/etc/machine-id` when it still
    /// carries the template's. Default `true`.
    pub hygiene_machine_id: bool,
    /// `[trust] recustomize_same_vm`: let guestinfo and the OVF environment re-customize
    /// the VM they customized before when their instance-id changes. Only safe where the
    /// host stops guest users from writing guestinfo (`docs/security.md`). Default `false`.
    pub recustomize_same_vm: bool,
    /// `[user-data] handler`: who applies `#cloud-config` user-data: vmcust itself
    /// (`native`), a real cloud-init (`cloud-init`), or cloud-init when one is installed
    /// and vmcust otherwise (`auto`, the default).
    pub user_data_handler: UserDataHandler,
    /// `[trust] sources`: the sources vmcust takes customizations from. Default all.
    pub sources: SourceSet,
    /// `[user-data] cloud_config_unknown`: what a cloud-config key vmcust does not
    /// implement (or a value cloud-init takes that it cannot apply) does to the document.
    /// Default `degrade`.
    pub cloud_config_unknown: CloudConfigUnknown,
}

/// What is done with what vmcust cannot apply of a cloud-config document
/// (`[user-data] cloud_config_unknown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CloudConfigUnknown {
    /// Left out and named; the rest applies and the customization ends degraded.
    #[default]
    Degrade,
    /// The whole document is refused, nothing applied, as for a wrong value.
    Refuse,
}

pub(crate) use crate::source::SourceSet;

/// Who applies cloud-config user-data (`[user-data] handler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UserDataHandler {
    /// A real cloud-init when one is installed, vmcust otherwise.
    #[default]
    Auto,
    /// vmcust, whether or not cloud-init is installed.
    Native,
    /// A real cloud-init; without one, cloud-config user-data is refused.
    CloudInit,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            imc_enabled: true,
            allow_raw_data: true,
            max_wait: Duration::from_secs(15),
            script_timeout: Duration::from_secs(300),
            renderer: None,
            ssh_user: Some(UserName::parse("root").expect("root is a valid user name")),
            log_level: tracing::Level::INFO,
            step_aside: true,
            hygiene_ssh_host_keys: true,
            hygiene_machine_id: true,
            recustomize_same_vm: false,
            sources: SourceSet::ALL,
            user_data_handler: UserDataHandler::Auto,
            cloud_config_unknown: CloudConfigUnknown::Degrade,
        }
    }
}

/// A problem in the settings file; the setting concerned keeps its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The settings file (as seen inside the root).
    pub file: PathBuf,
    /// The section, when the problem is inside one.
    pub section: Option<String>,
    /// The key, when the problem is about one.
    pub key: Option<String>,
    /// 1-based line number, when known.
    pub line: Option<usize>,
    /// What is wrong and what is accepted.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        match (&self.section, &self.key) {
            (Some(s), Some(k)) => write!(f, ": [{s}] {k}")?,
            (Some(s), None) => write!(f, ": [{s}]")?,
            (None, Some(k)) => write!(f, ": {k}")?,
            (None, None) => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// The sections and keys vmcust knows, for messages.
const KNOWN: &[(&str, &[&str])] = &[
    ("imc", &["enabled", "allow_raw_data", "max_wait"]),
    ("scripts", &["timeout"]),
    ("network", &["renderer"]),
    ("ssh", &["user"]),
    ("log", &["level"]),
    ("cloud-init", &["step_aside"]),
    ("hygiene", &["ssh_host_keys", "machine_id"]),
    ("trust", &["recustomize_same_vm", "sources"]),
    ("user-data", &["handler", "cloud_config_unknown"]),
];

/// Every `(section, key)` the settings file takes (vmcust.conf(5) describes each one).
pub fn known_keys() -> Vec<(&'static str, &'static str)> {
    KNOWN
        .iter()
        .flat_map(|(section, keys)| keys.iter().map(move |key| (*section, *key)))
        .collect()
}

const BOOL_VALUES: &str = "true, false, yes, no, on, off, 1 or 0";
const LEVEL_VALUES: &str = "error, warn, info, debug or trace";

/// Reads the settings from `root`'s [`SETTINGS_PATH`]. A missing file gives the defaults
/// and no warnings; nothing here is fatal.
pub fn load(root: &Root) -> (Settings, Vec<Warning>) {
    let path = Path::new(SETTINGS_PATH);
    match root.read_text_capped(path, MAX_SETTINGS_BYTES, "settings file") {
        Ok(None) => (Settings::default(), Vec::new()),
        Ok(Some(text)) => parse(&text, path),
        Err(e) => (
            Settings::default(),
            vec![Warning {
                file: path.to_path_buf(),
                section: None,
                key: None,
                line: None,
                message: format!("cannot read the settings file ({e}); using the defaults"),
            }],
        ),
    }
}

/// Parses settings text; `file` is only used in the warnings.
pub fn parse(text: &str, file: &Path) -> (Settings, Vec<Warning>) {
    let mut settings = Settings::default();
    let mut warnings = Vec::new();
    let warn =
        |section: Option<&str>, key: Option<&str>, line: Option<usize>, message: String| Warning {
            file: file.to_path_buf(),
            section: section.map(str::to_string),
            key: key.map(str::to_string),
            line,
            message,
        };
    // One pass over the lines: each is blank (or a comment), a section header, an entry or
    // a bad line, with its number at hand for the warning. One bad line costs only itself.
    // Quotes and backslashes are taken literally: values are plain words and numbers, and
    // a path or user name must never be silently rewritten.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // The section the lines belong to: `None` before any header; `Some(None)` for one
    // vmcust does not know, whose entries are ignored with the header's one warning.
    let mut section: Option<Option<(&str, &[&str])>> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = Some(i + 1);
        match read_line(raw) {
            Line::Blank => {}
            Line::Bad(why) => warnings.push(warn(
                None,
                None,
                line,
                format!("{why}; line ignored, the other lines still apply"),
            )),
            Line::Section(name) => {
                let known = KNOWN.iter().find(|(n, _)| *n == name).copied();
                if known.is_none() {
                    warnings.push(warn(
                        Some(name),
                        None,
                        line,
                        format!(
                            "unknown section, ignored; known sections: {}",
                            KNOWN
                                .iter()
                                .map(|(n, _)| format!("[{n}]"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
                section = Some(known);
            }
            Line::Entry { key, value } => {
                let (sname, keys) = match section {
                    None => {
                        warnings.push(warn(
                            None,
                            Some(key),
                            line,
                            "setting outside any section, ignored; put it under its \
                             section, e.g. [imc] for max_wait"
                                .to_string(),
                        ));
                        continue;
                    }
                    Some(None) => continue,
                    Some(Some(known)) => known,
                };
                // `ssh-host-keys` and `ssh_host_keys` are the same key: cloud-init's
                // files use both spellings.
                let canonical = key.replace('-', "_");
                let key = canonical.as_str();
                if !keys.contains(&key) {
                    warnings.push(warn(
                        Some(sname),
                        Some(key),
                        line,
                        format!(
                            "unknown key, ignored; [{sname}] accepts {}",
                            keys.join(", ")
                        ),
                    ));
                    continue;
                }
                // A repeated key is applied again: the last one wins.
                if let Err(message) = apply(&mut settings, sname, key, value) {
                    warnings.push(warn(Some(sname), Some(key), line, message));
                }
            }
        }
    }
    // `[trust] sources` without imc switches vSphere specs off like `[imc] enabled`.
    settings.imc_enabled &= settings.sources.contains("imc");
    let needed = settings.max_wait.as_secs() + settings.script_timeout.as_secs();
    if needed + EARLY_UNIT_MARGIN_SECS > EARLY_UNIT_TIMEOUT_SECS {
        warnings.push(warn(
            None,
            None,
            None,
            format!(
                "[imc] max_wait ({} s) plus [scripts] timeout ({} s) leaves less than {} s of \
                 vmcust-early.service's TimeoutStartSec={}; raise it with \
                 `systemctl edit vmcust-early.service` (and vmcust-late.service) or systemd \
                 may stop vmcust mid-customization",
                settings.max_wait.as_secs(),
                settings.script_timeout.as_secs(),
                EARLY_UNIT_MARGIN_SECS,
                EARLY_UNIT_TIMEOUT_SECS
            ),
        ));
    }
    (settings, warnings)
}

/// One line of the settings file.
enum Line<'a> {
    /// Blank, or a comment (`#` or `;` first).
    Blank,
    /// `[name]`, the name trimmed.
    Section(&'a str),
    /// `key = value` (or `key: value`), both trimmed; the first `=` or `:` separates.
    Entry { key: &'a str, value: &'a str },
    /// Neither: why, for the warning.
    Bad(String),
}

fn read_line(raw: &str) -> Line<'_> {
    let line = raw.trim();
    if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
        return Line::Blank;
    }
    if let Some(rest) = line.strip_prefix('[') {
        return match rest.strip_suffix(']') {
            Some(name) if !name.trim().is_empty() && !name.contains(['[', ']']) => {
                Line::Section(name.trim())
            }
            _ => Line::Bad(format!(
                "{line:?} is not a section header; write it as [name]"
            )),
        };
    }
    match line.find(['=', ':']) {
        Some(0) => Line::Bad(format!(
            "{line:?} has no key before the '='; write key = value"
        )),
        Some(at) => Line::Entry {
            key: line[..at].trim(),
            value: line[at + 1..].trim(),
        },
        None => Line::Bad(format!("{line:?} is not a setting; write key = value")),
    }
}

/// Stores one known setting; the error says what is accepted.
fn apply(settings: &mut Settings, section: &str, key: &str, value: &str) -> Result<(), String> {
    match (section, key) {
        ("imc", "enabled") => settings.imc_enabled = parse_bool(value)?,
        ("imc", "allow_raw_data") => settings.allow_raw_data = parse_bool(value)?,
        ("imc", "max_wait") => settings.max_wait = parse_secs(value, 0, MAX_WAIT_LIMIT)?,
        ("scripts", "timeout") => {
            settings.script_timeout = parse_secs(value, 1, SCRIPT_TIMEOUT_LIMIT)?
        }
        ("network", "renderer") => settings.renderer = parse_renderer(value)?,
        ("ssh", "user") => settings.ssh_user = Some(parse_user(value)?),
        ("log", "level") => settings.log_level = parse_level(value)?,
        ("cloud-init", "step_aside") => settings.step_aside = parse_bool(value)?,
        ("user-data", "handler") => {
            settings.user_data_handler = match value.to_ascii_lowercase().as_str() {
                "auto" => UserDataHandler::Auto,
                "native" => UserDataHandler::Native,
                "cloud-init" => UserDataHandler::CloudInit,
                _ => {
                    return Err(format!(
                        "invalid value {value:?}, default kept; use auto, native or cloud-init"
                    ))
                }
            }
        }
        ("user-data", "cloud_config_unknown") => {
            settings.cloud_config_unknown = match value.to_ascii_lowercase().as_str() {
                "degrade" => CloudConfigUnknown::Degrade,
                "refuse" => CloudConfigUnknown::Refuse,
                _ => {
                    return Err(format!(
                        "invalid value {value:?}, default kept; use degrade or refuse"
                    ))
                }
            }
        }
        ("hygiene", "ssh_host_keys") => settings.hygiene_ssh_host_keys = parse_bool(value)?,
        ("hygiene", "machine_id") => settings.hygiene_machine_id = parse_bool(value)?,
        ("trust", "recustomize_same_vm") => settings.recustomize_same_vm = parse_bool(value)?,
        ("trust", "sources") => {
            // Fail closed: a misspelt source is dropped, not a reason to turn all back on.
            let (set, unknown) = parse_sources(value)?;
            settings.sources = set;
            if let Some(message) = unknown {
                return Err(message);
            }
        }
        _ => unreachable!("apply is only called for keys listed in KNOWN"),
    }
    Ok(())
}

fn parse_bool(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(format!(
            "invalid value {value:?}, default kept; use {BOOL_VALUES}"
        )),
    }
}

/// `imc, ovf, guestinfo` (commas and/or spaces), or `none`: the sources left on. Unknown
/// words are dropped and named in the message returned with the set (a typo must not turn
/// a source on); only an empty value keeps the default.
fn parse_sources(value: &str) -> Result<(SourceSet, Option<String>), String> {
    let names = crate::source::registry::own_names();
    let mut set = SourceSet::NONE;
    let words: Vec<&str> = value
        .split([',', ' ', '\t'])
        .filter(|w| !w.is_empty())
        .collect();
    if words.len() == 1 && words[0].eq_ignore_ascii_case("none") {
        return Ok((set, None));
    }
    if words.is_empty() {
        return Err(format!(
            "empty value, default kept; use {}",
            source_values()
        ));
    }
    let mut unknown = Vec::new();
    for w in words {
        let lower = w.to_ascii_lowercase();
        match set.with(&lower) {
            Some(more) => set = more,
            None => {
                let hint = vmcust_imc::closest(&lower, names.iter().copied())
                    .map_or(String::new(), |n| format!(" (did you mean {n}?)"));
                unknown.push(format!("{w:?}{hint}"));
            }
        }
    }
    let message = (!unknown.is_empty()).then(|| {
        format!(
            "unknown source {} dropped; the sources on are {} (a misspelt source stays \
             off); use {}",
            unknown.join(", "),
            set.list(),
            source_values()
        )
    });
    Ok((set, message))
}

/// What `[trust] sources` accepts, for messages.
fn source_values() -> String {
    format!(
        "a list of {} (commas or spaces), or none",
        crate::source::registry::own_names().join(", ")
    )
}

fn parse_secs(value: &str, min: u64, max: u64) -> Result<Duration, String> {
    match value.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(Duration::from_secs(n)),
        _ => Err(format!(
            "invalid value {value:?}, default kept; use a whole number of seconds from {min} to {max}"
        )),
    }
}

fn parse_renderer(value: &str) -> Result<Option<Renderer>, String> {
    if value.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    Renderer::from_name(value).map(Some).ok_or_else(|| {
        format!(
            "invalid value {value:?}, default kept; use auto or one of {}",
            crate::plan::network::renderers::names()
        )
    })
}

/// A user name as `useradd` accepts it by default, so a typo cannot become a path.
fn parse_user(value: &str) -> Result<UserName, String> {
    UserName::parse(value).map_err(|e| format!("{e}; the default is kept"))
}

fn parse_level(value: &str) -> Result<tracing::Level, String> {
    match value.to_ascii_lowercase().as_str() {
        "error" => Ok(tracing::Level::ERROR),
        "warn" | "warning" => Ok(tracing::Level::WARN),
        "info" => Ok(tracing::Level::INFO),
        "debug" => Ok(tracing::Level::DEBUG),
        "trace" => Ok(tracing::Level::TRACE),
        _ => Err(format!(
            "invalid value {value:?}, default kept; use {LEVEL_VALUES}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> (Settings, Vec<Warning>) {
        parse(text, Path::new(SETTINGS_PATH))
    }

    #[test]
    fn missing_file_gives_defaults_and_no_warnings() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        assert_eq!(load(&root), (Settings::default(), Vec::new()));
    }

    #[test]
    fn load_reads_the_file_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        root.write_file(Path::new(SETTINGS_PATH), b"[imc]\nmax_wait = 0\n", 0o644)
            .unwrap();
        let (s, w) = load(&root);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.max_wait, Duration::ZERO);
    }

    #[test]
    fn a_settings_file_over_the_cap_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let mut text = b"[imc]\nmax_wait = 0\n".to_vec();
        text.resize(MAX_SETTINGS_BYTES as usize + 1, b'\n');
        root.write_file(Path::new(SETTINGS_PATH), &text, 0o644)
            .unwrap();
        let (s, w) = load(&root);
        assert_eq!(s, Settings::default());
        assert_eq!(w.len(), 1);
        assert!(w[0].message.contains("larger than 65536 bytes"), "{}", w[0]);
        text.truncate(MAX_SETTINGS_BYTES as usize);
        root.write_file(Path::new(SETTINGS_PATH), &text, 0o644)
            .unwrap();
        assert_eq!(load(&root).0.max_wait, Duration::ZERO);
    }

    #[test]
    fn each_setting_is_read() {
        let d = Settings::default();
        let cases: Vec<(&str, Settings)> = vec![
            (
                "[imc]\nenabled = false",
                Settings {
                    imc_enabled: false,
                    ..d.clone()
                },
            ),
            (
                "[imc]\nenabled=No",
                Settings {
                    imc_enabled: false,
                    ..d.clone()
                },
            ),
            ("[imc]\nenabled = on", d.clone()),
            (
                "[imc]\nallow_raw_data = 0",
                Settings {
                    allow_raw_data: false,
                    ..d.clone()
                },
            ),
            (
                "[imc]\nmax_wait = 0",
                Settings {
                    max_wait: Duration::ZERO,
                    ..d.clone()
                },
            ),
            (
                "[imc]\nmax_wait = 60",
                Settings {
                    max_wait: Duration::from_secs(60),
                    ..d.clone()
                },
            ),
            (
                "[scripts]\ntimeout = 30",
                Settings {
                    script_timeout: Duration::from_secs(30),
                    ..d.clone()
                },
            ),
            ("[network]\nrenderer = auto", d.clone()),
            (
                "[network]\nrenderer = netplan",
                Settings {
                    renderer: Some(Renderer::Netplan),
                    ..d.clone()
                },
            ),
            (
                "[network]\nrenderer = NetworkManager",
                Settings {
                    renderer: Some(Renderer::NetworkManager),
                    ..d.clone()
                },
            ),
            (
                "[network]\nrenderer = networkd",
                Settings {
                    renderer: Some(Renderer::Networkd),
                    ..d.clone()
                },
            ),
            (
                "[network]\nrenderer = sysconfig",
                Settings {
                    renderer: Some(Renderer::Sysconfig),
                    ..d.clone()
                },
            ),
            (
                "[network]\nrenderer = eni",
                Settings {
                    renderer: Some(Renderer::Eni),
                    ..d.clone()
                },
            ),
            (
                "[ssh]\nuser = cloud-user",
                Settings {
                    ssh_user: UserName::parse("cloud-user").ok(),
                    ..d.clone()
                },
            ),
            (
                "[ssh]\nuser = _svc",
                Settings {
                    ssh_user: UserName::parse("_svc").ok(),
                    ..d.clone()
                },
            ),
            (
                "[log]\nlevel = debug",
                Settings {
                    log_level: tracing::Level::DEBUG,
                    ..d.clone()
                },
            ),
            (
                "[log]\nlevel = WARN",
                Settings {
                    log_level: tracing::Level::WARN,
                    ..d.clone()
                },
            ),
            (
                "[cloud-init]\nstep_aside = false",
                Settings {
                    step_aside: false,
                    ..d.clone()
                },
            ),
            (
                "[user-data]\ncloud_config_unknown = refuse",
                Settings {
                    cloud_config_unknown: CloudConfigUnknown::Refuse,
                    ..d.clone()
                },
            ),
            ("[user-data]\ncloud_config_unknown = Degrade", d.clone()),
            (
                "# comment\n; other comment\n\n[imc]\n# inside\nmax_wait = 15\n",
                d.clone(),
            ),
            // Repeated keys: the last one wins, as in most INI readers.
            (
                "[imc]\nmax_wait = 5\nmax_wait = 7",
                Settings {
                    max_wait: Duration::from_secs(7),
                    ..d.clone()
                },
            ),
            ("", d.clone()),
        ];
        for (text, want) in cases {
            let (got, warnings) = p(text);
            assert!(warnings.is_empty(), "{text:?}: {warnings:?}");
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn bad_values_warn_and_keep_the_default() {
        // (text, line, words the message must contain)
        let cases: &[(&str, usize, &[&str])] = &[
            (
                "[imc]\nenabled = maybe",
                2,
                &["[imc] enabled", "\"maybe\"", "true, false"],
            ),
            (
                "[user-data]\ncloud_config_unknown = ignore",
                2,
                &["cloud_config_unknown", "\"ignore\"", "degrade or refuse"],
            ),
            (
                "[imc]\nallow_raw_data = \"true\"",
                2,
                &["allow_raw_data", "\"\\\"true\\\"\""],
            ),
            ("[imc]\nmax_wait = -1", 2, &["max_wait", "from 0 to 3600"]),
            ("[imc]\nmax_wait = 1.5", 2, &["max_wait", "whole number"]),
            (
                "[imc]\nmax_wait = 15 # seconds",
                2,
                &["max_wait", "\"15 # seconds\""],
            ),
            ("[imc]\nmax_wait = 99999", 2, &["from 0 to 3600"]),
            (
                "[scripts]\ntimeout = 0",
                2,
                &["[scripts] timeout", "from 1 to 86400"],
            ),
            (
                "[network]\nrenderer = wicked",
                2,
                &[
                    "renderer",
                    "auto or one of netplan, networkmanager, networkd",
                ],
            ),
            (
                "\n[ssh]\nuser = ../etc",
                3,
                &["[ssh] user", "invalid user name"],
            ),
            ("[ssh]\nuser =", 2, &["invalid user name"]),
            (
                "[log]\nlevel = loud",
                2,
                &["[log] level", "error, warn, info, debug or trace"],
            ),
            (
                "[cloud-init]\nstep_aside = si",
                2,
                &["step_aside", "yes, no"],
            ),
            (
                "[imc]\nmaxwait = 3",
                2,
                &["[imc] maxwait", "unknown key", "max_wait"],
            ),
            (
                "[imcc]\nmax_wait = 3",
                1,
                &["[imcc]", "unknown section", "[imc]"],
            ),
            ("max_wait = 3", 1, &["max_wait", "outside any section"]),
            ("[imc]\n= 3\n", 2, &["no key before", "line ignored"]),
            ("[imc]\n[log\n", 2, &["not a section header", "[name]"]),
            ("[imc]\nmax_wait\n", 2, &["\"max_wait\" is not a setting"]),
        ];
        for (text, line, words) in cases {
            let (got, warnings) = p(text);
            assert_eq!(got, Settings::default(), "{text:?}");
            assert_eq!(warnings.len(), 1, "{text:?}: {warnings:?}");
            let w = &warnings[0];
            assert_eq!(w.line, Some(*line), "{text:?}: {w}");
            let shown = w.to_string();
            assert!(shown.starts_with(SETTINGS_PATH), "{shown}");
            for word in *words {
                assert!(shown.contains(word), "{text:?}: {shown:?} lacks {word:?}");
            }
        }
    }

    /// The shapes a hand-edited INI file takes, each read in the one pass with its line.
    #[test]
    fn headers_separators_and_unknown_sections_are_read_as_written() {
        let (s, w) = p("\u{feff}[ imc ]\nmax_wait: 4\n[imc]\nenabled = no\n");
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((s.max_wait, s.imc_enabled), (Duration::from_secs(4), false));
        // An unknown section costs one warning, on its header; its entries are ignored.
        let (s, w) = p("[old]\nmax_wait = 1\nlevel = x\n\n[log]\nlevel = debug\n");
        assert_eq!(s.log_level, tracing::Level::DEBUG);
        assert_eq!(s.max_wait, Duration::from_secs(15));
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!((w[0].line, w[0].section.as_deref()), (Some(1), Some("old")));
        // A repeated key warns on the line of the bad one, whichever it is.
        let (s, w) = p("[imc]\nmax_wait = 5\n[log]\n[imc]\nmax_wait = x\n");
        assert_eq!(s.max_wait, Duration::from_secs(5));
        assert_eq!(w.iter().map(|w| w.line).collect::<Vec<_>>(), [Some(5)]);
        // The first separator splits: the rest is the value, as written.
        let (_, w) = p("[log]\nlevel: debug = x\n");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].to_string().contains("\"debug = x\""), "{}", w[0]);
    }

    #[test]
    fn a_bad_entry_does_not_spoil_the_others() {
        let (s, w) = p("[imc]\nmax_wait = x\nenabled = false\n[log]\nlevel = debug\n");
        assert_eq!(w.len(), 1);
        assert_eq!(s.max_wait, Duration::from_secs(15));
        assert!(!s.imc_enabled);
        assert_eq!(s.log_level, tracing::Level::DEBUG);
    }

    #[test]
    fn one_bad_line_keeps_the_good_lines() {
        let text = "[imc]\nmax_wait = 3\n= oops\nnonsense here\n[log\n[log]\nlevel = debug\n";
        let (s, w) = p(text);
        assert_eq!(s.max_wait, Duration::from_secs(3));
        assert_eq!(s.log_level, tracing::Level::DEBUG);
        let lines: Vec<_> = w.iter().map(|w| w.line).collect();
        assert_eq!(lines, [Some(3), Some(4), Some(5)], "{w:?}");
    }

    #[test]
    fn hygiene_switches_take_either_spelling() {
        let (s, w) = p("[hygiene]\nssh-host-keys = false\nmachine_id = no\n");
        assert!(w.is_empty(), "{w:?}");
        assert!(!s.hygiene_ssh_host_keys && !s.hygiene_machine_id);
        assert!(
            Settings::default().hygiene_ssh_host_keys && Settings::default().hygiene_machine_id
        );
    }

    // threat T2: the same-VM rule is on unless the file says otherwise; T6: each source
    // can be switched off.
    #[test]
    fn trust_settings_parse_and_warn() {
        let d = Settings::default();
        assert!(!d.recustomize_same_vm);
        assert_eq!(d.sources, SourceSet::ALL);
        let cases: &[(&str, bool, [bool; 3], usize)] = &[
            ("recustomize_same_vm = yes", true, [true, true, true], 0),
            ("sources = imc", false, [true, false, false], 0),
            ("sources = ovf, guestinfo", false, [false, true, true], 0),
            ("sources = IMC guestinfo", false, [true, false, true], 0),
            ("sources = none", false, [false, false, false], 0),
            // Fail closed: an unknown word is dropped, the known ones are kept.
            ("sources = imc, cdrom", false, [true, false, false], 1),
            ("sources = imc, ovf, cdrom", false, [true, true, false], 1),
            ("sources = cdrom", false, [false, false, false], 1),
            ("sources = ovf, guestinfoo", false, [false, true, false], 1),
            ("sources =", false, [true, true, true], 1),
            ("recustomize_same_vm = maybe", false, [true, true, true], 1),
        ];
        for (line, same_vm, [imc, ovf, gi], warnings) in cases {
            let (s, w) = p(&format!("[trust]\n{line}\n"));
            assert_eq!(w.len(), *warnings, "{line}: {w:?}");
            assert_eq!(s.recustomize_same_vm, *same_vm, "{line}");
            assert_eq!(
                (
                    s.sources.contains("imc"),
                    s.sources.contains("ovf"),
                    s.sources.contains("guestinfo")
                ),
                (*imc, *ovf, *gi),
                "{line}"
            );
            // vSphere specs off by [trust] sources is the same as [imc] enabled = false.
            assert_eq!(s.imc_enabled, *imc, "{line}");
            if *warnings == 1 {
                assert!(w[0].to_string().contains("[trust]"), "{}", w[0]);
                assert_eq!(w[0].line, Some(2));
            }
        }
        let (_, w) = p("[trust]\nsources = ovf, guestinfoo\n");
        let said = w[0].to_string();
        assert!(
            said.contains("\"guestinfoo\" (did you mean guestinfo?) dropped")
                && said.contains("the sources on are ovf (")
                && said.contains("vmcust.conf"),
            "{said}"
        );
    }

    #[test]
    fn waits_longer_than_the_unit_allows_warn() {
        let (s, w) = p("[imc]\nmax_wait = 600\n[scripts]\ntimeout = 600\n");
        assert_eq!(s.max_wait, Duration::from_secs(600));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].to_string()
                .contains("systemctl edit vmcust-early.service"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn the_example_file_is_clean_and_matches_the_defaults() {
        let text = include_str!("../scripts/vmcust.conf.example");
        let (s, w) = p(text);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s, Settings::default());
    }
}
