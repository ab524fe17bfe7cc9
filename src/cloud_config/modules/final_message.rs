//! `final_message` (cloud-init's `cc_final_message`): the text logged when the late stage
//! ends, cloud-init's default unless the document gives one, with `$UPTIME`,
//! `$TIMESTAMP`, `$DATASOURCE` and `$VERSION` (also lower-case, also `${…}`, and
//! `{{ … }}` after a `## template: jinja` line) substituted.

use crate::cloud_config::apply::driver::{ModuleOutcome, Step};
use crate::cloud_config::apply::preview::Look;
use crate::cloud_config::node::Node;
use crate::cloud_config::read::Reader;
use crate::cloud_config::CloudConfig;
use crate::state::rfc2822;

/// cloud-init's default message, naming vmcust.
pub(crate) const DEFAULT: &str =
    "vmcust v. $VERSION finished at $TIMESTAMP. Datasource $DATASOURCE.  Up $UPTIME seconds";

/// The values substituted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subs {
    /// Seconds since boot, as `/proc/uptime` has them (`12.34`).
    pub uptime: String,
    /// Now, RFC 2822 (`Tue, 01 Dec 2026 23:41:29 +0000`).
    pub timestamp: String,
    /// vmcust's version.
    pub version: String,
    /// Where the user-data came from (`guestinfo`, `OVF`).
    pub datasource: String,
}

impl Subs {
    /// The values for now: this machine's uptime and clock, vmcust's version.
    pub(crate) fn now(datasource: &str) -> Subs {
        let uptime = std::fs::read_to_string("/proc/uptime")
            .ok()
            .and_then(|t| t.split_whitespace().next().map(str::to_string))
            .unwrap_or_else(|| "0".into());
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Subs {
            uptime,
            timestamp: rfc2822(secs),
            version: env!("CARGO_PKG_VERSION").into(),
            datasource: datasource.into(),
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        Some(match name.to_ascii_lowercase().as_str() {
            "uptime" => &self.uptime,
            "timestamp" => &self.timestamp,
            "version" => &self.version,
            "datasource" => &self.datasource,
            _ => return None,
        })
    }
}

/// The message for `message` (the document's, or `None` for the default).
pub(crate) fn render(message: Option<&str>, subs: &Subs) -> String {
    let text = message.unwrap_or(DEFAULT);
    let jinja = text.lines().next().is_some_and(|l| {
        l.trim().eq_ignore_ascii_case("## template: jinja") || l.trim() == "## template:jinja"
    });
    if jinja {
        let body = text.split_once('\n').map_or("", |(_, b)| b);
        return replace_jinja(body, subs);
    }
    replace_dollar(text, subs)
}

fn is_name(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `$name` and `${name}` of the known names replaced; anything else kept.
fn replace_dollar(text: &str, subs: &Subs) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, len) = if let Some(b) = after.strip_prefix('{') {
            match b.find('}') {
                Some(end) => (&b[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after.find(|c| !is_name(c)).unwrap_or(after.len());
            (&after[..end], end)
        };
        match subs.get(name).filter(|_| len > 0) {
            Some(v) => {
                out.push_str(v);
                rest = &after[len..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `{{ name }}` of the known names replaced; anything else kept.
fn replace_jinja(text: &str, subs: &Subs) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find("}}") {
            Some(end) => match subs.get(after[..end].trim()) {
                Some(v) => {
                    out.push_str(v);
                    rest = &after[end + 2..];
                }
                None => {
                    out.push_str("{{");
                    rest = after;
                }
            },
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `final_message`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.final_message = r.string(node, key, 4096);
}

/// Logs the message.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    let text = render(
        s.cfg.final_message.as_deref(),
        &Subs::now(&s.ctx.datasource),
    );
    tracing::info!(target: "final_message", "{text}");
    ModuleOutcome::Ran { note: text }
}

/// The message, before substitution.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    vec![format!(
        "log: {}",
        l.cfg.final_message.as_deref().unwrap_or(DEFAULT)
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subs() -> Subs {
        Subs {
            uptime: "12.34".into(),
            timestamp: "Tue, 01 Dec 2026 23:41:29 +0000".into(),
            version: "0.1.0".into(),
            datasource: "guestinfo".into(),
        }
    }

    #[test]
    fn messages() {
        let table: &[(Option<&str>, &str)] = &[
            (None, "vmcust v. 0.1.0 finished at Tue, 01 Dec 2026 23:41:29 +0000. Datasource guestinfo.  Up 12.34 seconds"),
            (Some("up $UPTIME s, ${version}!"), "up 12.34 s, 0.1.0!"),
            (Some("cost $5 and $HOME ${nope} $"), "cost $5 and $HOME ${nope} $"),
            (Some("$DATASOURCE$UPTIME"), "guestinfo12.34"),
            (Some("## template: jinja\nat {{ timestamp }} via {{datasource}} {{ x }}"), "at Tue, 01 Dec 2026 23:41:29 +0000 via guestinfo {{ x }}"),
            (Some("{{ uptime }} stays"), "{{ uptime }} stays"),
        ];
        for (msg, want) in table {
            assert_eq!(render(*msg, &subs()), *want, "{msg:?}");
        }
    }
}
