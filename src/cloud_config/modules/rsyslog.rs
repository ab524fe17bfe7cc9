//! `rsyslog`: rsyslog configuration files, as cloud-init's `cc_rsyslog` writes them —
//! each `configs` entry into its file under `config_dir` (`20-cloud-config.conf` unless
//! named; entries naming one file are written into it one after the other), the
//! `remotes` as one `# begin remotes` … `# end remotes` block in the default file — then
//! rsyslog reloaded on the running system (a failed reload is a note, as cloud-init's
//! warning). vmcust installs nothing: `install_rsyslog: true` needs rsyslog in the root.

use serde::Serialize;

use crate::cloud_config::apply::conf_text::ConfText;
use crate::cloud_config::apply::driver::{absent, failed, ModuleOutcome, Step};
use crate::cloud_config::apply::exec::RunEnd;
use crate::cloud_config::apply::preview::{action_lines, run_lines, Look};
use crate::cloud_config::modules::write_files::absolute;
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader, Severity};
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;
use crate::model::quote;
use crate::plan::{Action, Contents};

/// Most `configs` entries or `remotes`.
pub(crate) const MAX_ENTRIES: usize = 128;
/// The largest `configs` content.
pub(crate) const MAX_CONTENT: usize = 64 * 1024;
/// cloud-init's default `config_dir`.
pub(crate) const DEFAULT_DIR: &str = "/etc/rsyslog.d";
/// cloud-init's default `config_filename`.
pub(crate) const DEFAULT_FILE: &str = "20-cloud-config.conf";

/// One `configs` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RsyslogConfig {
    /// Its file: absolute, or relative to `config_dir`; `None` for the default file.
    pub filename: Option<String>,
    /// Its text (a final newline added when missing).
    pub content: String,
}

/// One remote: its name and its `selector proto host[:port]` parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remote {
    /// The name (written as a comment).
    pub name: String,
    /// The selector, `*.*` unless given.
    pub selector: String,
    /// `@` (UDP) or `@@` (TCP).
    pub proto: String,
    /// The host, an IPv6 address in brackets.
    pub host: String,
    /// The port, if given.
    pub port: Option<u16>,
}

/// `rsyslog`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Rsyslog {
    /// `configs`, in order.
    pub configs: Vec<RsyslogConfig>,
    /// `remotes`, in order.
    pub remotes: Vec<Remote>,
    /// `config_dir`.
    pub config_dir: Option<String>,
    /// `config_filename`.
    pub config_filename: Option<String>,
    /// `install_rsyslog`.
    pub install_rsyslog: bool,
}

/// A file name under `config_dir`: no `/`, not `.` or `..`, no control character.
fn file_name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s != "."
        && s != ".."
        && !s.contains('/')
        && !s.chars().any(char::is_control)
}

fn filename(r: &mut Reader, at: &str, node: &Node) -> Option<String> {
    let s = r.line(node, at, 4096)?;
    if s.starts_with('/') {
        return absolute(r, at, node);
    }
    if file_name_ok(&s) {
        Some(s)
    } else {
        r.error(
            node,
            at,
            format!(
                "{} is not a file name under config_dir (no /, not . or ..), nor an absolute path",
                quote(&s)
            ),
        );
        None
    }
}

fn content(r: &mut Reader, at: &str, node: &Node) -> Option<String> {
    let mut s = r.string(node, at, MAX_CONTENT)?;
    if let Some(c) = s
        .chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t')
    {
        r.error(
            node,
            at,
            format!("holds the control character {c:?}; remove it"),
        );
        return None;
    }
    if !s.ends_with('\n') {
        s.push('\n');
    }
    Some(s)
}

fn configs(r: &mut Reader, at: &str, node: &Node) -> Vec<RsyslogConfig> {
    let Some(items) = r.list(node, at, MAX_ENTRIES) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let here = index(at, i);
        match &item.value {
            Value::Str(_) => {
                if let Some(content) = content(r, &here, item) {
                    out.push(RsyslogConfig {
                        filename: None,
                        content,
                    });
                }
            }
            Value::Map(_) => {
                let Some(map) = r.map(item, &here, &["filename", "content"]) else {
                    continue;
                };
                let get = |k: &str| map.iter().find(|(key, _)| key.text == k).map(|(_, v)| *v);
                let Some(c) = get("content") else {
                    r.error(item, &here, "has no content; write {content: '*.* @host'}");
                    continue;
                };
                let file = match get("filename") {
                    None => Some(None),
                    Some(f) => filename(r, &join(&here, "filename"), f).map(Some),
                };
                if let (Some(filename), Some(content)) =
                    (file, content(r, &join(&here, "content"), c))
                {
                    out.push(RsyslogConfig { filename, content });
                }
            }
            _ => r.wrong_type(item, &here, "a string or {filename, content}"),
        }
    }
    out
}

/// `[selector] [@|@@]host[:port]`, as cloud-init's remote parser takes it.
fn remote(name: &str, s: &str) -> Result<Remote, String> {
    let words: Vec<&str> = s.split_whitespace().collect();
    let (selector, target) = match words.as_slice() {
        [t] => ("*.*", *t),
        [sel, t] => (*sel, *t),
        _ => return Err("write [selector] [@|@@]host[:port], such as *.* @@10.0.0.1:514".into()),
    };
    let selector_ok = |c: char| c.is_ascii_alphanumeric() || "*.,;=!_-".contains(c);
    if !selector.chars().all(selector_ok) {
        return Err(format!("{} is not a syslog selector", quote(selector)));
    }
    let (proto, rest) = if let Some(r) = target.strip_prefix("@@") {
        ("@@", r)
    } else {
        ("@", target.strip_prefix('@').unwrap_or(target))
    };
    let (host, port) = if let Some(r) = rest.strip_prefix('[') {
        let (h, after) = r.split_once(']').ok_or("an IPv6 address lacks its ]")?;
        h.parse::<std::net::Ipv6Addr>()
            .map_err(|_| format!("{} is not an IPv6 address", quote(h)))?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(format!("{} follows the address", quote(after))),
        };
        (format!("[{h}]"), port)
    } else {
        match rest.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (rest.to_string(), None),
        }
    };
    let host_ok = host.starts_with('[')
        || host.parse::<std::net::IpAddr>().is_ok()
        || crate::model::HostName::parse(&host).is_ok();
    if !host_ok {
        return Err(format!("{} is not a host name or address", quote(&host)));
    }
    let port = port
        .map(|p| {
            p.parse::<u16>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{} is not a port", quote(p)))
        })
        .transpose()?;
    Ok(Remote {
        name: name.to_string(),
        selector: selector.to_string(),
        proto: proto.to_string(),
        host,
        port,
    })
}

fn remotes(r: &mut Reader, at: &str, node: &Node) -> Vec<Remote> {
    let Value::Map(entries) = &node.value else {
        r.wrong_type(
            node,
            at,
            "a mapping of names to [selector] [@|@@]host[:port]",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in entries.iter().take(MAX_ENTRIES) {
        let here = join(at, &k.text);
        if !k
            .text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        {
            r.error(
                v,
                &here,
                format!(
                    "{} is not a remote's name (letters, digits, _ - .)",
                    quote(&k.text)
                ),
            );
            continue;
        }
        let Some(s) = r.line(v, &here, 512) else {
            continue;
        };
        match remote(&k.text, &s) {
            Ok(rm) => out.push(rm),
            Err(why) => r.error(v, &here, why),
        }
    }
    out
}

/// `rsyslog`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let mut rs = Rsyslog::default();
    if let Value::Seq(_) = node.value {
        r.report(
            Severity::Warning,
            node,
            key,
            "a list is deprecated (cloud-init 22.2); write rsyslog: {configs: [...]}",
        );
        rs.configs = configs(r, key, node);
        cfg.rsyslog = Some(rs);
        return;
    }
    let Some(map) = r.map(
        node,
        key,
        &[
            "configs",
            "remotes",
            "config_dir",
            "config_filename",
            "service_reload_command",
            "install_rsyslog",
        ],
    ) else {
        return;
    };
    for (k, v) in map {
        let at = join(key, &k.text);
        match k.text.as_str() {
            "configs" => rs.configs = configs(r, &at, v),
            "remotes" => rs.remotes = remotes(r, &at, v),
            "config_dir" => rs.config_dir = absolute(r, &at, v),
            "config_filename" => rs.config_filename = filename(r, &at, v),
            "install_rsyslog" => rs.install_rsyslog = r.bool(v, &at).unwrap_or(false),
            _ => {
                if !matches!(&v.value, Value::Str(s) if s == "auto") {
                    r.report(
                        Severity::Unknown,
                        v,
                        &at,
                        "only auto (systemctl reload of rsyslog) is implemented",
                    );
                }
            }
        }
    }
    cfg.rsyslog = Some(rs);
}

fn path_of(dir: &str, name: &str) -> String {
    if name.starts_with('/') {
        name.to_string()
    } else {
        format!("{}/{name}", dir.trim_end_matches('/'))
    }
}

/// The remotes block cloud-init appends to the default file.
pub(crate) fn remotes_text(remotes: &[Remote]) -> Result<String, String> {
    let mut t = ConfText::new();
    t.push("# begin remotes\n");
    for rm in remotes {
        t.value(&rm.selector)?
            .push(" ")
            .value(&rm.proto)?
            .value(&rm.host)?;
        if let Some(p) = rm.port {
            t.push(":").value(&p.to_string())?;
        }
        t.push(" # ").value(&rm.name)?.push("\n");
    }
    t.push("# end remotes\n");
    Ok(t.finish())
}

/// What the module does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RsyslogPlan {
    /// The files.
    pub actions: Vec<Action>,
    /// The reload (on the running system only).
    pub commands: Vec<Vec<String>>,
}

/// Plans the files; `Ok(Err(why))` when there is nothing to write.
pub fn plan_rsyslog(
    cfg: &CloudConfig,
    facts: &Facts,
) -> Result<Result<RsyslogPlan, String>, String> {
    let Some(rs) = &cfg.rsyslog else {
        return Ok(Err("no rsyslog".into()));
    };
    if rs.configs.is_empty() && rs.remotes.is_empty() {
        return Ok(Err("rsyslog has no configs and no remotes".into()));
    }
    if rs.install_rsyslog && !facts.has("rsyslogd") {
        return Err(
            "rsyslog: install_rsyslog is true and rsyslog is not in the root; vmcust installs \
             nothing here: install rsyslog in the template"
                .into(),
        );
    }
    let dir = rs.config_dir.as_deref().unwrap_or(DEFAULT_DIR);
    let default = path_of(dir, rs.config_filename.as_deref().unwrap_or(DEFAULT_FILE));
    // Files in the order first written, each the entries naming it one after the other.
    let mut files: Vec<(String, String)> = Vec::new();
    let mut add = |path: String, text: &str| match files.iter_mut().find(|(p, _)| *p == path) {
        Some((_, t)) => t.push_str(text),
        None => files.push((path, text.to_string())),
    };
    for c in &rs.configs {
        let path = c
            .filename
            .as_deref()
            .map_or_else(|| default.clone(), |f| path_of(dir, f));
        add(path, &c.content);
    }
    if !rs.remotes.is_empty() {
        add(default.clone(), &remotes_text(&rs.remotes)?);
    }
    Ok(Ok(RsyslogPlan {
        actions: files
            .into_iter()
            .map(|(path, text)| {
                Action::write_file(
                    path,
                    Contents::text(text),
                    0o644,
                    "rsyslog's configuration (cloud-config rsyslog)",
                )
            })
            .collect(),
        commands: vec![vec![
            "systemctl".into(),
            "try-reload-or-restart".into(),
            "rsyslog".into(),
        ]],
    }))
}

/// rsyslog itself and the service manager that reloads it.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.rsyslog.is_some() {
        &["rsyslogd", "systemctl"]
    } else {
        &[]
    }
}

/// Writes the files, then reloads rsyslog on the running system.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    if s.cfg.rsyslog.is_none() {
        return absent("rsyslog");
    }
    let p = match plan_rsyslog(s.cfg, s.cc) {
        Err(e) => return failed(e),
        Ok(Err(why)) => return crate::cloud_config::apply::driver::skipped(why),
        Ok(Ok(p)) => p,
    };
    let note = match s.apply(p.actions) {
        Err(e) => return failed(e),
        Ok(n) => n,
    };
    if !s.ctx.live() {
        return ModuleOutcome::Ran { note };
    }
    // cloud-init warns about a failed reload and goes on.
    let reload = p.commands.first().map(|c| s.run_tool("rsyslog", c));
    match reload {
        Some(RunEnd::Failed(why)) => ModuleOutcome::Ran {
            note: format!("{note}; warning: the reload failed: {why}"),
        },
        Some(RunEnd::Interrupted) => ModuleOutcome::Interrupted,
        _ => ModuleOutcome::Ran { note },
    }
}

/// The files and the reload.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    match plan_rsyslog(l.cfg, l.facts) {
        Err(e) => vec![format!("fails: {e}")],
        Ok(Err(why)) => vec![format!("nothing: {why}")],
        Ok(Ok(p)) => p
            .actions
            .iter()
            .flat_map(action_lines)
            .chain(run_lines(&p.commands).map(|l| format!("{l} (on the running system only)")))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    fn files(doc: &str) -> Vec<(String, String)> {
        let (cfg, p) = document::from_text(doc);
        assert!(p.iter().all(|p| p.severity != Severity::Error), "{p:?}");
        plan_rsyslog(&cfg, &Facts::default())
            .unwrap()
            .unwrap()
            .actions
            .iter()
            .map(|a| match a {
                Action::WriteFile { path, contents, .. } => (
                    path.display().to_string(),
                    String::from_utf8(contents.bytes().to_vec()).unwrap(),
                ),
                o => panic!("{o:?}"),
            })
            .collect()
    }

    #[test]
    fn files_as_cloud_init_writes_them() {
        let got = files(
            "rsyslog:\n  configs:\n    - '*.* @@10.0.0.1'\n    - {filename: 01-a.conf, content: 'a'}\n    - {filename: /etc/rsyslog.conf.d/b.conf, content: \"b\\n\"}\n    - {filename: 01-a.conf, content: 'a2'}\n  remotes:\n    central: '@@logs.example:6514'\n    v6: 'kern.* [fd00::1]'\n",
        );
        assert_eq!(
            got,
            [
                (
                    "/etc/rsyslog.d/20-cloud-config.conf".to_string(),
                    "*.* @@10.0.0.1\n# begin remotes\n*.* @@logs.example:6514 # central\nkern.* @[fd00::1] # v6\n# end remotes\n".to_string()
                ),
                ("/etc/rsyslog.d/01-a.conf".to_string(), "a\na2\n".to_string()),
                ("/etc/rsyslog.conf.d/b.conf".to_string(), "b\n".to_string()),
            ]
        );
        let got = files("rsyslog: {config_dir: /srv/rs/, config_filename: x.conf, configs: [y]}");
        assert_eq!(got[0].0, "/srv/rs/x.conf");
        let (_, p) = document::from_text("rsyslog: ['*.* @h']");
        assert!(p[0].message.contains("deprecated"), "{p:?}");
    }

    #[test]
    fn hostile_values_are_refused_at_their_key() {
        super::super::test_support::assert_refused(&[
            (
                "rsyslog: {configs: [{filename: ../x, content: a}]}",
                "rsyslog.configs[0].filename",
            ),
            (
                "rsyslog: {configs: [{filename: a/b, content: a}]}",
                "not a file name",
            ),
            ("rsyslog: {configs: [{filename: a}]}", "has no content"),
            ("rsyslog: {remotes: {r: '@host:99999'}}", "not a port"),
            (
                "rsyslog: {remotes: {r: \"@h\\n*.* @evil\"}}",
                "rsyslog.remotes.r",
            ),
            ("rsyslog: {remotes: {r: 'a b c'}}", "selector"),
            ("rsyslog: {remotes: {'a b': '@h'}}", "not a remote's name"),
            ("rsyslog: {config_dir: rel}", "not an absolute path"),
            ("rsyslog: {install_rsyslog: 'yes'}", "true or false"),
        ]);
        let (_, p) = document::from_text("rsyslog: {configs: [a], service_reload_command: [x]}");
        assert_eq!(p[0].severity, Severity::Unknown, "{p:?}");
    }
}
