//! Whether custom scripts may run: VMware Tools' `[deployPkg] enable-custom-scripts`, read
//! the way cloud-init and the Perl engine read it.
//!
//! Order: `vmware-toolbox-cmd config get deployPkg enable-custom-scripts` when the command
//! exists (it merges tools' global config, which a file read would miss); otherwise the
//! root's `/etc/vmware-tools/tools.conf`. Anything unset, unavailable or broken means the
//! default, which the spec sets with `MISC|DEFAULT-RUN-POST-CUST-SCRIPT`. Scripts run only if
//! the value is `true` (any case), as in cloud-init.

use std::ffi::OsStr;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use super::keyfile::KeyFile;
use crate::root::Root;

/// The tools command that prints tools.conf values.
pub const TOOLBOX_CMD: &str = "vmware-toolbox-cmd";
/// Tools' configuration file inside the root.
pub(crate) const TOOLS_CONF: &str = "/etc/vmware-tools/tools.conf";
/// Largest tools.conf read (1 MiB; the shipped one is 20 KiB). A larger one is unreadable,
/// so the spec's default decides.
pub(crate) const MAX_TOOLS_CONF_BYTES: u64 = 1024 * 1024;
/// The tools.conf section holding the switch.
pub(crate) const SECTION: &str = "deployPkg";
/// The switch itself.
pub(crate) const KEY: &str = "enable-custom-scripts";
/// `deployPkg.update.state` error code for "custom scripts are disabled".
pub(crate) const STATUS_SCRIPT_DISABLED: u32 = 6;
/// Exit status of `vmware-toolbox-cmd` when it cannot load tools.conf (`EX_UNAVAILABLE`).
pub(crate) const EX_UNAVAILABLE: i32 = 69;
/// How long `vmware-toolbox-cmd` may take before its answer is treated as absent.
pub(crate) const TOOLBOX_TIMEOUT: Duration = Duration::from_secs(30);

/// The decision, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Scripts may run.
    Enabled(GateReason),
    /// Scripts must not run; the caller reports [`STATUS_SCRIPT_DISABLED`].
    Disabled(GateReason),
}

/// Where the decision came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateReason {
    /// `vmware-toolbox-cmd` printed this value.
    Toolbox {
        /// The value after the first `=`, trimmed.
        value: String,
    },
    /// The root's tools.conf holds this value.
    ToolsConf {
        /// The value as written (trimmed by the ini reader).
        value: String,
    },
    /// Nothing usable was found; the spec's default applies.
    Default {
        /// The default (`MISC|DEFAULT-RUN-POST-CUST-SCRIPT`).
        default: bool,
        /// Why the default was used.
        why: DefaultWhy,
    },
}

/// Why the default was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultWhy {
    /// The key is not set (the command said `UNSET`, printed no `=`, or tools.conf lacks it).
    Unset,
    /// `vmware-toolbox-cmd` exited 69: it could not load tools.conf.
    ToolsConfUnavailable,
    /// `vmware-toolbox-cmd` failed otherwise (exit status or signal as text).
    ToolFailed(String),
    /// `vmware-toolbox-cmd` could not be started or did not answer in time.
    ToolNotRunnable(String),
    /// No command and no tools.conf in the root.
    NoToolsConf,
    /// tools.conf exists but cannot be read or parsed.
    ToolsConfUnreadable(String),
}

impl Gate {
    /// Whether scripts may run.
    pub fn is_enabled(&self) -> bool {
        matches!(self, Gate::Enabled(_))
    }

    /// Where the decision came from.
    pub fn reason(&self) -> &GateReason {
        match self {
            Gate::Enabled(r) | Gate::Disabled(r) => r,
        }
    }

    /// The error code to report to the host: [`STATUS_SCRIPT_DISABLED`] when disabled.
    pub fn status_code(&self) -> Option<u32> {
        (!self.is_enabled()).then_some(STATUS_SCRIPT_DISABLED)
    }

    fn from_value(value: String, reason: impl FnOnce(String) -> GateReason) -> Gate {
        if value.eq_ignore_ascii_case("true") {
            Gate::Enabled(reason(value))
        } else {
            Gate::Disabled(reason(value))
        }
    }

    fn default(default: bool, why: DefaultWhy) -> Gate {
        let reason = GateReason::Default { default, why };
        if default {
            Gate::Enabled(reason)
        } else {
            Gate::Disabled(reason)
        }
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.is_enabled() {
            "custom scripts are enabled"
        } else {
            "custom scripts are disabled"
        };
        match self.reason() {
            GateReason::Toolbox { value } => write!(
                f,
                "{verdict}: {TOOLBOX_CMD} says [{SECTION}] {KEY} = {value:?}"
            )?,
            GateReason::ToolsConf { value } => write!(
                f,
                "{verdict}: {TOOLS_CONF} sets [{SECTION}] {KEY} = {value:?}"
            )?,
            GateReason::Default { default, why } => {
                let why = match why {
                    DefaultWhy::Unset => format!("[{SECTION}] {KEY} is not set"),
                    DefaultWhy::ToolsConfUnavailable => {
                        format!("{TOOLBOX_CMD} cannot load tools.conf")
                    }
                    DefaultWhy::ToolFailed(s) => format!("{TOOLBOX_CMD} failed ({s})"),
                    DefaultWhy::ToolNotRunnable(s) => format!("{TOOLBOX_CMD} did not run ({s})"),
                    DefaultWhy::NoToolsConf => format!("no {TOOLBOX_CMD} and no {TOOLS_CONF}"),
                    DefaultWhy::ToolsConfUnreadable(s) => format!("{TOOLS_CONF}: {s}"),
                };
                write!(
                    f,
                    "{verdict}: {why}, so MISC|DEFAULT-RUN-POST-CUST-SCRIPT decides ({})",
                    if *default { "yes" } else { "no" }
                )?
            }
        }
        if !self.is_enabled() {
            write!(
                f,
                "; to allow them run `{TOOLBOX_CMD} config set {SECTION} {KEY} true` \
                 in the template, or remove the script from the customization spec"
            )?;
        }
        Ok(())
    }
}

/// Decides whether custom scripts may run. `toolbox` is the `vmware-toolbox-cmd` to ask
/// (see [`crate::process::find_on_path`]; pass `None` for an offline root, where the host's tools would
/// answer for the wrong system); without it, `root`'s tools.conf is read.
pub fn custom_scripts_gate(toolbox: Option<&Path>, root: &Root, default: bool) -> Gate {
    match toolbox {
        Some(cmd) => ask_toolbox(cmd, default),
        None => read_tools_conf(root, default),
    }
}

/// Asks `vmware-toolbox-cmd` from the fixed script `PATH` when `root` is `/`, otherwise
/// reads the root's tools.conf.
pub fn custom_scripts_enabled(root: &Root, default: bool) -> Gate {
    let toolbox = (root.path() == Path::new("/"))
        .then(|| crate::process::find_on_path(TOOLBOX_CMD, OsStr::new(super::run::SCRIPT_PATH)))
        .flatten();
    custom_scripts_gate(toolbox.as_deref(), root, default)
}

fn ask_toolbox(cmd: &Path, default: bool) -> Gate {
    let run = crate::process::Cmd::new(cmd, &["config", "get", SECTION, KEY], TOOLBOX_TIMEOUT);
    let never = std::sync::atomic::AtomicBool::new(false);
    let output = match crate::process::run(
        &run,
        crate::process::Output::Bytes(MAX_TOOLBOX_OUTPUT as usize),
        &never,
    ) {
        Ok(out) => out,
        Err(e) => return Gate::default(default, DefaultWhy::ToolNotRunnable(e.to_string())),
    };
    let code = match output.ended {
        crate::process::Ended::Exited(code) => Some(code),
        crate::process::Ended::TimedOut => {
            let why = format!("no answer in {} s", TOOLBOX_TIMEOUT.as_secs());
            return Gate::default(default, DefaultWhy::ToolNotRunnable(why));
        }
        _ => None,
    };
    match code {
        Some(0) => {}
        Some(EX_UNAVAILABLE) => return Gate::default(default, DefaultWhy::ToolsConfUnavailable),
        _ => {
            let why = DefaultWhy::ToolFailed(match output.ended {
                crate::process::Ended::Exited(c) => format!("exit status: {c}"),
                crate::process::Ended::Signalled(s) => format!("killed by signal {s}"),
                other => other.to_string(),
            });
            return Gate::default(default, why);
        }
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    match parse_toolbox_output(&stdout) {
        Some(value) => Gate::from_value(value.to_string(), |value| GateReason::Toolbox { value }),
        None => Gate::default(default, DefaultWhy::Unset),
    }
}

/// Bytes of `vmware-toolbox-cmd` output kept: its answer is one short line.
const MAX_TOOLBOX_OUTPUT: u64 = 64 * 1024;

/// The value in `vmware-toolbox-cmd config get` output, as cloud-init matches it
/// (`([^=]+)=(.*)` from the start): the rest of the line after the first `=`, trimmed.
/// `None` when there is no `=` (`[deployPkg] enable-custom-scripts UNSET`).
pub(crate) fn parse_toolbox_output(stdout: &str) -> Option<&str> {
    let (key, rest) = stdout.split_once('=')?;
    if key.is_empty() {
        return None;
    }
    Some(rest.lines().next().unwrap_or("").trim())
}

fn read_tools_conf(root: &Root, default: bool) -> Gate {
    let text =
        match root.read_text_capped(Path::new(TOOLS_CONF), MAX_TOOLS_CONF_BYTES, "tools.conf") {
            Ok(Some(text)) => text,
            Ok(None) => return Gate::default(default, DefaultWhy::NoToolsConf),
            Err(e) => {
                return Gate::default(default, DefaultWhy::ToolsConfUnreadable(e.to_string()))
            }
        };
    match tools_conf_value(&text) {
        Ok(Some(value)) => Gate::from_value(value, |value| GateReason::ToolsConf { value }),
        Ok(None) => Gate::default(default, DefaultWhy::Unset),
        Err(e) => Gate::default(default, DefaultWhy::ToolsConfUnreadable(e)),
    }
}

/// `[deployPkg] enable-custom-scripts` from tools.conf text, as `vmware-toolbox-cmd config
/// get` prints it and cloud-init then reads it: glib's key-file rules ([`KeyFile`]; the last
/// of two keys wins, `[ deployPkg ]` is another group, a file glib cannot load is an error),
/// the string with glib's escapes processed (an invalid one means unset), trimmed.
pub fn tools_conf_value(text: &str) -> Result<Option<String>, String> {
    let file = KeyFile::parse(text.as_bytes()).map_err(|e| e.to_string())?;
    Ok(file
        .string(SECTION, KEY)
        .and_then(Result::ok)
        .map(|v| v.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolbox_output_is_parsed_like_cloud_init() {
        let cases = [
            ("[deployPkg] enable-custom-scripts = true\n", Some("true")),
            ("key =   value  ", Some("value")),
            ("key = ", Some("")),
            ("key=Bar=Wark", Some("Bar=Wark")),
            ("[a] b.c_d=e-f", Some("e-f")),
            ("[deployPkg] enable-custom-scripts UNSET\n", None),
            ("=true", None),
            ("", None),
        ];
        for (out, want) in cases {
            assert_eq!(parse_toolbox_output(out), want, "{out:?}");
        }
    }

    #[test]
    fn tools_conf_values() {
        let cases = [
            (
                "[deployPkg]\nenable-custom-scripts = true\n",
                Ok(Some("true")),
            ),
            (
                "[deployPkg]\nenable-custom-scripts=TRUE\r\n",
                Ok(Some("TRUE")),
            ),
            (
                "[deployPkg]\nenable-custom-scripts = true\nenable-custom-scripts = false\n",
                Ok(Some("false")),
            ),
            ("[ deployPkg ]\nenable-custom-scripts = true\n", Ok(None)),
            ("[deployPkg]\nenable-custom-scripts = tr\\ue\n", Ok(None)),
            (
                "[deployPkg]\nenable-custom-scripts = \"true\"\n",
                Ok(Some("\"true\"")),
            ),
            ("[logging]\nlog = true\n", Ok(None)),
            ("[deploypkg]\nenable-custom-scripts = true\n", Ok(None)),
        ];
        // glib cannot load a file with a BOM: vmware-toolbox-cmd exits 69.
        assert!(tools_conf_value("\u{feff}[deployPkg]\nenable-custom-scripts = true\n").is_err());
        for (text, want) in cases {
            let got = tools_conf_value(text);
            assert_eq!(
                got.as_ref().map(|v| v.as_deref()),
                want.as_ref().map(|v| *v),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_tools_conf_over_the_cap_means_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let mut text = b"[deployPkg]\nenable-custom-scripts = true\n".to_vec();
        text.resize(MAX_TOOLS_CONF_BYTES as usize + 1, b'\n');
        root.write_file(Path::new(TOOLS_CONF), &text, 0o644)
            .unwrap();
        let gate = read_tools_conf(&root, false);
        assert!(
            matches!(
                gate.reason(),
                GateReason::Default {
                    why: DefaultWhy::ToolsConfUnreadable(_),
                    ..
                }
            ),
            "{gate}"
        );
        text.truncate(MAX_TOOLS_CONF_BYTES as usize);
        root.write_file(Path::new(TOOLS_CONF), &text, 0o644)
            .unwrap();
        assert!(read_tools_conf(&root, false).is_enabled());
    }

    #[test]
    fn disabled_message_tells_the_admin_what_to_do() {
        let g = Gate::default(false, DefaultWhy::Unset);
        assert_eq!(g.status_code(), Some(STATUS_SCRIPT_DISABLED));
        let text = g.to_string();
        assert!(
            text.contains("config set deployPkg enable-custom-scripts true"),
            "{text}"
        );
        assert_eq!(Gate::default(true, DefaultWhy::Unset).status_code(), None);
    }
}
