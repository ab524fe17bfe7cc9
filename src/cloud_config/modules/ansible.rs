//! `ansible`: cloud-init's `cc_ansible`. It installs Ansible (`install_method: distro`
//! with the root's package manager, or `pip` with `python3 -m pip`, as `run_user` when
//! given), checks it is there, then runs the `galaxy.actions`, one `ansible-pull` per
//! `pull` entry (`--url=…` and the entry's other keys as `--key=value` or `--flag`, then
//! its playbooks — one call per playbook before Ansible 2.12, as cloud-init asks
//! `ansible-pull --version`), and `setup_controller`'s `git clone`s and
//! `ansible-playbook` runs, with `ANSIBLE_CONFIG` from `ansible_config`. As `run_user`,
//! each command runs as cloud-init runs it: `su - <user> -c "env PATH=$PATH <command>"`.
//! Every command is bounded in time (installs by the package timeout, the rest by the
//! command timeout); the first that fails fails the module, as in cloud-init. A missing
//! `install_method` or `package_name`, or a `pull` without `url` or playbooks, fails the
//! module with cloud-init's message (its schema has defaults for them, its module
//! requires them).

use serde::Serialize;

use crate::cloud_config::apply::commands::quote;
use crate::cloud_config::apply::driver::{absent, failed, ModuleOutcome, Step};
use crate::cloud_config::apply::exec::{self, Program, RunEnd};
use crate::cloud_config::apply::preview::Look;
use crate::cloud_config::modules::package_update_upgrade_install::{self as packages, Package};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader, Severity};
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;
use crate::model::UserName;

/// Longest value, in bytes.
pub(crate) const MAX_VALUE: usize = 4096;
/// Most entries in one list (pulls, playbooks, actions, repositories, runs).
pub(crate) const MAX_ENTRIES: usize = 256;
/// The Python that runs pip (cloud-init uses its own interpreter, the system's
/// `python3`).
pub(crate) const PYTHON: &str = "python3";
/// The distribution's pip package, as cloud-init's distro classes name it.
pub(crate) const PIP_PACKAGE: &str = "python3-pip";

/// One `--key=value` (or `--flag`) argument's value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ArgValue {
    /// A string.
    Text(String),
    /// A boolean (`false` drops the argument).
    Flag(bool),
    /// A number, as Python prints it.
    Number(String),
}

/// One `pull` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pull {
    /// Its keys but the playbooks, in document order (`url` among them).
    pub args: Vec<(String, ArgValue)>,
    /// `playbook_name`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub playbook_name: Option<String>,
    /// `playbook_names`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub playbook_names: Option<Vec<String>>,
}

/// One `setup_controller.repositories` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Repository {
    /// `source`.
    pub source: String,
    /// `path`.
    pub path: String,
}

/// One `setup_controller.run_ansible` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunAnsible {
    /// `playbook_dir`.
    pub playbook_dir: Option<String>,
    /// `playbook_name`.
    pub playbook_name: Option<String>,
    /// The other keys, in document order.
    pub args: Vec<(String, ArgValue)>,
}

/// `setup_controller`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Controller {
    /// `repositories`.
    pub repositories: Vec<Repository>,
    /// `run_ansible`.
    pub run_ansible: Vec<RunAnsible>,
}

/// `ansible`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Ansible {
    /// `install_method`: `distro` or `pip`.
    pub install_method: Option<String>,
    /// `package_name`.
    pub package_name: Option<String>,
    /// `run_user`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_user: Option<String>,
    /// `ansible_config`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ansible_config: Option<String>,
    /// `galaxy.actions`: argv lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub galaxy: Option<Vec<Vec<String>>>,
    /// `pull` (a single mapping taken as a list of one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pull: Vec<Pull>,
    /// `setup_controller`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_controller: Option<Controller>,
}

const PULL_FLAGS: &[&str] = &["accept_host_key", "clean", "full", "diff", "verify_commit"];
const PULL_TEXTS: &[&str] = &[
    "ssh_common_args",
    "scp_extra_args",
    "sftp_extra_args",
    "private_key",
    "checkout",
    "module_path",
    "timeout",
    "url",
    "connection",
    "vault_id",
    "vault_password_file",
    "inventory",
    "module_name",
    "sleep",
    "tags",
    "skip_tags",
];
const RUN_FLAGS: &[&str] = &["list_hosts", "syntax_check", "check", "diff"];
const RUN_NUMBERS: &[&str] = &["timeout", "background", "poll", "forks"];
const RUN_TEXTS: &[&str] = &[
    "playbook_name",
    "playbook_dir",
    "become_password_file",
    "connection_password_file",
    "vault_id",
    "vault_password_file",
    "module_path",
    "args",
    "extra_vars",
    "inventory",
    "scp_extra_args",
    "sftp_extra_args",
    "private_key",
    "connection",
    "module_name",
    "sleep",
    "tags",
    "skip_tags",
];

fn strings(r: &mut Reader, node: &Node, at: &str) -> Option<Vec<String>> {
    let items = r.list(node, at, MAX_ENTRIES)?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        out.push(r.line(item, &index(at, i), MAX_VALUE)?);
    }
    Some(out)
}

/// An argument's value: a flag, a string or (for `run_ansible`) a number ≥ 0.
fn arg(r: &mut Reader, v: &Node, at: &str, key: &str, flags: &[&str]) -> Option<ArgValue> {
    if flags.contains(&key) {
        return r.bool(v, at).map(ArgValue::Flag);
    }
    if RUN_NUMBERS.contains(&key) && flags == RUN_FLAGS {
        return match &v.value {
            Value::Int(n) if *n >= 0 => Some(ArgValue::Number(n.to_string())),
            Value::Float(f) if *f >= 0.0 => Some(ArgValue::Number(format!("{f:?}"))),
            _ => {
                r.wrong_type(v, at, "a number, 0 or more");
                None
            }
        };
    }
    r.line(v, at, MAX_VALUE).map(ArgValue::Text)
}

/// A `run_ansible` key cloud-init's schema does not name: a string, number or boolean,
/// passed on as `--key=value` as cloud-init does; the key must read as an option name.
fn other_arg(r: &mut Reader, v: &Node, at: &str, key: &str) -> Option<ArgValue> {
    let name_ok = !key.is_empty()
        && key.len() <= 64
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !name_ok {
        r.error(
            v,
            at,
            "is no ansible-playbook option name (letters, digits, _ and -)",
        );
        return None;
    }
    match &v.value {
        Value::Bool(b) => Some(ArgValue::Flag(*b)),
        Value::Int(n) => Some(ArgValue::Number(n.to_string())),
        Value::Float(f) => Some(ArgValue::Number(format!("{f:?}"))),
        _ => r.line(v, at, MAX_VALUE).map(ArgValue::Text),
    }
}

fn parse_pull(r: &mut Reader, node: &Node, at: &str) -> Option<Pull> {
    let mut known: Vec<&str> = PULL_FLAGS.iter().chain(PULL_TEXTS).copied().collect();
    known.extend(["playbook_name", "playbook_names"]);
    let map = r.map(node, at, &known)?;
    let mut pull = Pull {
        args: Vec::new(),
        playbook_name: None,
        playbook_names: None,
    };
    for (k, v) in map {
        let here = join(at, &k.text);
        match k.text.as_str() {
            "playbook_name" => {
                r.report(
                    Severity::Warning,
                    v,
                    &here,
                    "deprecated (cloud-init 25.2); write playbook_names: [...]",
                );
                pull.playbook_name = Some(r.line(v, &here, MAX_VALUE)?);
            }
            "playbook_names" => pull.playbook_names = Some(strings(r, v, &here)?),
            key => {
                let value = arg(r, v, &here, key, PULL_FLAGS)?;
                pull.args.push((key.to_string(), value));
            }
        }
    }
    Some(pull)
}

fn parse_controller(r: &mut Reader, node: &Node, at: &str) -> Option<Controller> {
    let map = r.map(node, at, &["repositories", "run_ansible"])?;
    let mut c = Controller::default();
    for (k, v) in map {
        let here = join(at, &k.text);
        for (i, item) in r.list(v, &here, MAX_ENTRIES)?.iter().enumerate() {
            let at_i = index(&here, i);
            if k.text == "repositories" {
                let entry = r.map(item, &at_i, &["source", "path"])?;
                let (mut source, mut path) = (None, None);
                for (ek, ev) in entry {
                    let s = r.line(ev, &join(&at_i, &ek.text), MAX_VALUE)?;
                    if ek.text == "source" {
                        source = Some(s);
                    } else {
                        path = Some(s);
                    }
                }
                let (Some(source), Some(path)) = (source, path) else {
                    r.error(item, &at_i, "needs both source and path");
                    return None;
                };
                c.repositories.push(Repository { source, path });
            } else {
                // cloud-init's schema takes any other key here (`become_user`), passed
                // on as `--key=value`.
                let Value::Map(entry) = &item.value else {
                    r.wrong_type(item, &at_i, "a mapping");
                    return None;
                };
                let mut run = RunAnsible {
                    playbook_dir: None,
                    playbook_name: None,
                    args: Vec::new(),
                };
                for (ek, ev) in entry {
                    let h = join(&at_i, &ek.text);
                    let known = RUN_FLAGS.iter().chain(RUN_NUMBERS).chain(RUN_TEXTS);
                    let value = if known.copied().any(|k| k == ek.text) {
                        arg(r, ev, &h, &ek.text, RUN_FLAGS)?
                    } else {
                        other_arg(r, ev, &h, &ek.text)?
                    };
                    match (ek.text.as_str(), value) {
                        ("playbook_dir", ArgValue::Text(s)) => run.playbook_dir = Some(s),
                        ("playbook_name", ArgValue::Text(s)) => run.playbook_name = Some(s),
                        (key, value) => run.args.push((key.to_string(), value)),
                    }
                }
                c.run_ansible.push(run);
            }
        }
    }
    Some(c)
}

/// `ansible`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let known = [
        "install_method",
        "run_user",
        "ansible_config",
        "setup_controller",
        "galaxy",
        "package_name",
        "pull",
    ];
    let Some(map) = r.map(node, key, &known) else {
        return;
    };
    let mut a = Ansible::default();
    for (k, v) in map {
        let at = join(key, &k.text);
        let ok = match k.text.as_str() {
            "install_method" => r.line(v, &at, MAX_VALUE).and_then(|s| {
                if s == "distro" || s == "pip" {
                    a.install_method = Some(s);
                    Some(())
                } else {
                    r.error(v, &at, format!("is {}; write distro or pip", quote(&s)));
                    None
                }
            }),
            "package_name" => r.line(v, &at, MAX_VALUE).map(|s| a.package_name = Some(s)),
            // It goes to `su - <user>`: a login name, so that `-x` is not read as an option.
            "run_user" => r
                .line(v, &at, MAX_VALUE)
                .and_then(|s| match UserName::parse(&s) {
                    Ok(_) => {
                        a.run_user = Some(s);
                        Some(())
                    }
                    Err(why) => {
                        r.error(v, &at, why);
                        None
                    }
                }),
            "ansible_config" => r
                .line(v, &at, MAX_VALUE)
                .map(|s| a.ansible_config = Some(s)),
            "galaxy" => r.map(v, &at, &["actions"]).and_then(|m| {
                let mut actions = Vec::new();
                for (_, list) in m {
                    let here = join(&at, "actions");
                    for (i, item) in r.list(list, &here, MAX_ENTRIES)?.iter().enumerate() {
                        let argv = strings(r, item, &index(&here, i))?;
                        if argv.is_empty() {
                            r.error(item, &index(&here, i), "is empty; name a program");
                            return None;
                        }
                        actions.push(argv);
                    }
                }
                a.galaxy = Some(actions);
                Some(())
            }),
            "pull" => match &v.value {
                Value::Map(_) => {
                    r.report(
                        Severity::Warning,
                        v,
                        &at,
                        "a single mapping is deprecated (cloud-init 25.2); write a list of them",
                    );
                    parse_pull(r, v, &at).map(|p| a.pull = vec![p])
                }
                _ => r.list(v, &at, MAX_ENTRIES).and_then(|items| {
                    for (i, item) in items.iter().enumerate() {
                        a.pull.push(parse_pull(r, item, &index(&at, i))?);
                    }
                    Some(())
                }),
            },
            _ => parse_controller(r, v, &at).map(|c| a.setup_controller = Some(c)),
        };
        if ok.is_none() {
            return;
        }
    }
    cfg.ansible = Some(a);
}

/// What cloud-init's `validate_config` refuses, in its words.
pub(crate) fn validate(a: &Ansible) -> Result<(), String> {
    for (key, v) in [
        ("install_method", &a.install_method),
        ("package_name", &a.package_name),
    ] {
        if v.as_deref().is_none_or(str::is_empty) {
            return Err(format!(
                "Missing required key '{key}' from ansible; write ansible.{key}"
            ));
        }
    }
    for (i, p) in a.pull.iter().enumerate() {
        let url = p
            .args
            .iter()
            .any(|(k, v)| k == "url" && !matches!(v, ArgValue::Text(s) if s.is_empty()));
        if !url {
            return Err(format!("Missing required key 'url' from ansible.pull[{i}]"));
        }
        let one = p.playbook_name.as_deref().is_some_and(|s| !s.is_empty());
        let many = p.playbook_names.as_ref().is_some_and(|l| !l.is_empty());
        match (one, many) {
            (false, false) => {
                return Err(format!(
                    "Missing required key 'playbook_names' from ansible.pull[{i}]"
                ))
            }
            (true, true) => {
                return Err(format!(
                    "Key 'ansible.pull.playbook_name' and 'ansible.pull.playbook_names' are \
                     mutually exclusive. Please use 'playbook_names' in ansible.pull[{i}]"
                ))
            }
            _ => {}
        }
    }
    if let Some(c) = &a.setup_controller {
        if c.repositories.is_empty() && c.run_ansible.is_empty() {
            return Err(
                "Missing required key from ansible.setup_controller: repositories or \
                 run_ansible"
                    .into(),
            );
        }
        for (i, r) in c.run_ansible.iter().enumerate() {
            for (key, v) in [
                ("playbook_dir", &r.playbook_dir),
                ("playbook_name", &r.playbook_name),
            ] {
                if v.is_none() {
                    return Err(format!(
                        "Missing required key '{key}' from ansible.setup_controller.run_ansible[{i}]"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The `--key=value` / `--flag` arguments of `args` (`_` becomes `-`, `false` dropped);
/// `flags_bare`: a true flag is `--flag` (`ansible-pull`), else `--flag=True`
/// (`ansible-playbook`, as cloud-init formats it).
pub(crate) fn flag_args(args: &[(String, ArgValue)], flags_bare: bool) -> Vec<String> {
    args.iter()
        .filter(|(_, v)| *v != ArgValue::Flag(false))
        .map(|(k, v)| {
            let k = k.replace('_', "-");
            match v {
                ArgValue::Flag(true) if flags_bare => format!("--{k}"),
                ArgValue::Flag(_) => format!("--{k}=True"),
                ArgValue::Text(s) | ArgValue::Number(s) => format!("--{k}={s}"),
            }
        })
        .collect()
}

/// A pull's playbooks.
pub(crate) fn playbooks(p: &Pull) -> Vec<String> {
    match &p.playbook_name {
        Some(one) if !one.is_empty() => vec![one.clone()],
        _ => p.playbook_names.clone().unwrap_or_default(),
    }
}

/// The `ansible-pull` argv lists of one pull: all playbooks at once (`together`, Ansible
/// 2.12 and later) or one call each.
pub(crate) fn pull_commands(p: &Pull, together: bool) -> Vec<Vec<String>> {
    let base: Vec<String> = std::iter::once("ansible-pull".to_string())
        .chain(flag_args(&p.args, true))
        .collect();
    let books = playbooks(p);
    if together {
        vec![base.into_iter().chain(books).collect()]
    } else {
        books
            .into_iter()
            .map(|b| base.iter().cloned().chain(std::iter::once(b)).collect())
            .collect()
    }
}

/// The `ansible-playbook` argv of a controller run.
pub(crate) fn playbook_command(r: &RunAnsible) -> Vec<String> {
    std::iter::once("ansible-playbook".to_string())
        .chain(r.playbook_name.clone())
        .chain(flag_args(&r.args, false))
        .collect()
}

/// A word as Python's `shlex.quote` writes it: as it is when it holds only letters,
/// digits and `@ % + = : , . / - _`, else in single quotes.
pub(crate) fn shlex_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\"'\"'"))
    }
}

/// `argv` as `run_user` runs it: cloud-init's `su - <user> -c "[cd <dir> && ]env
/// PATH=$PATH <quoted argv>"` (the directory quoted too).
pub(crate) fn as_user(user: &str, argv: &[String], cwd: Option<&str>) -> Vec<String> {
    // cloud-init writes the directory unquoted; quoted, a plain path reads the same and
    // one with a space or a `;` stays one path.
    let dir = cwd
        .map(|d| format!("cd {} && ", shlex_quote(d)))
        .unwrap_or_default();
    let words: Vec<String> = argv.iter().map(|w| shlex_quote(w)).collect();
    vec![
        "su".into(),
        "-".into(),
        user.into(),
        "-c".into(),
        format!("{dir}env PATH=$PATH {}", words.join(" ")),
    ]
}

/// The version `ansible-pull --version`'s first line names (its first run of digits and
/// dots), as (major, minor, patch).
pub(crate) fn version(first_line: &str) -> Option<(u32, u32, u32)> {
    let start = first_line.find(|c: char| c.is_ascii_digit())?;
    let run: String = first_line[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let mut parts = run
        .split('.')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

/// The programs it runs or looks for.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.ansible.is_some() {
        &[
            "ansible", "apt-get", "dnf", "yum", "zypper", PYTHON, "su", "git",
        ]
    } else {
        &[]
    }
}

/// Where `name` is on the fixed `PATH` inside the root now (an install may have just put
/// it there).
fn find(s: &Step, name: &str) -> Option<String> {
    if name.contains('/') {
        return s
            .ctx
            .root
            .is_file(std::path::Path::new(name))
            .then(|| name.to_string());
    }
    crate::process::PATH
        .split(':')
        .map(|dir| format!("{dir}/{name}"))
        .find(|p| s.ctx.root.is_file(std::path::Path::new(p)))
}

/// Whether the root's Python is "externally managed" (PEP 668: pip then needs
/// `--break-system-packages`, which cloud-init passes).
fn externally_managed(s: &Step) -> bool {
    let lib = std::path::Path::new("/usr/lib");
    s.ctx
        .root
        .list_dir(lib)
        .unwrap_or_default()
        .iter()
        .any(|d| {
            d.starts_with("python3") && s.ctx.root.is_file(&lib.join(d).join("EXTERNALLY-MANAGED"))
        })
}

/// A command's end as the module's: on, or the outcome that ends it.
type Go<T> = Result<T, ModuleOutcome>;

struct Runner<'s, 'a> {
    s: &'s Step<'a>,
    a: &'s Ansible,
    env: Vec<(String, String)>,
    ran: usize,
    /// The commands now run are the user's own words (galaxy actions, pulls, clones,
    /// playbooks), which may hold secrets as runcmd's may: the log gives only how many.
    hide: bool,
}

impl Runner<'_, '_> {
    /// Runs `argv` (as `run_user` when given) in `cwd`, with `timeout`; its output.
    fn run(
        &mut self,
        argv: &[String],
        cwd: Option<&str>,
        timeout: std::time::Duration,
    ) -> (RunEnd, Vec<String>) {
        let (argv, cwd) = match &self.a.run_user {
            Some(user) => (as_user(user, argv, cwd), None),
            None => (argv.to_vec(), cwd),
        };
        let Some(path) = find(self.s, &argv[0]) else {
            return (
                RunEnd::Failed(format!(
                    "ansible: {} is not in the root; install it in the template",
                    argv[0]
                )),
                Vec::new(),
            );
        };
        self.ran += 1;
        let p = Program {
            module: "ansible",
            program: &path,
            args: argv[1..].to_vec(),
            env: self.env.clone(),
            timeout,
            hide_args: self.hide,
        };
        exec::run_capturing(&self.s.ctx.root, &p, cwd, self.s.ctx.stop)
    }

    /// [`Runner::run`] with the command timeout; a failure ends the module.
    fn must(&mut self, argv: &[String], cwd: Option<&str>) -> Go<Vec<String>> {
        let timeout = self.s.ctx.command_timeout;
        match self.run(argv, cwd, timeout) {
            (RunEnd::Succeeded, out) => Ok(out),
            (RunEnd::Failed(why), _) => Err(failed(why)),
            (RunEnd::Interrupted, _) => Err(ModuleOutcome::Interrupted),
        }
    }

    /// Installs `package` with the root's package manager (as root, as cloud-init's
    /// distro does), by the package timeout.
    fn install_package(&mut self, package: &str) -> Go<()> {
        let Some(m) = packages::detect(self.s.cc) else {
            return Err(failed(format!(
                "ansible: installing {package}: the root has no package manager vmcust knows \
                 (apt-get, dnf, yum, zypper)"
            )));
        };
        let wanted = CloudConfig {
            packages: vec![Package {
                name: package.to_string(),
                version: None,
            }],
            ..Default::default()
        };
        let path = self.s.cc.programs[m.program()].clone();
        let programs: Vec<Program> =
            packages::programs_of(m, &path, &wanted, self.s.ctx.package_timeout)
                .into_iter()
                .map(|p| Program {
                    module: "ansible",
                    ..p
                })
                .collect();
        self.ran += programs.len();
        match exec::run_all(&self.s.ctx.root, &programs, self.s.ctx.stop) {
            RunEnd::Succeeded => Ok(()),
            RunEnd::Failed(why) => Err(failed(format!(
                "Failed to install the following packages: {package}: {why}"
            ))),
            RunEnd::Interrupted => Err(ModuleOutcome::Interrupted),
        }
    }

    fn pip(&self, words: &[&str]) -> Vec<String> {
        std::iter::once(PYTHON)
            .chain(["-m", "pip"])
            .chain(words.iter().copied())
            .map(str::to_string)
            .collect()
    }

    /// `pip list [--user]` names ansible.
    fn pip_has_ansible(&mut self) -> Go<bool> {
        let mut list = self.pip(&["list"]);
        if self.a.run_user.is_some() {
            list.push("--user".into());
        }
        Ok(self
            .must(&list, None)?
            .iter()
            .any(|l| l.contains("ansible")))
    }

    /// cloud-init's install: the package when `ansible` is missing (distro), or pip
    /// (bootstrapped from the distribution when missing), upgraded, then the package.
    fn install(&mut self) -> Go<()> {
        let package = self.a.package_name.clone().unwrap_or_default();
        if self.a.install_method.as_deref() != Some("pip") {
            if find(self.s, "ansible").is_none() {
                self.install_package(&package)?;
            }
            if find(self.s, "ansible").is_none() {
                return Err(failed("command: ansible is not installed"));
            }
            return Ok(());
        }
        let has_pip = matches!(
            self.run(&self.pip(&["--version"]), None, self.s.ctx.command_timeout)
                .0,
            RunEnd::Succeeded
        );
        if !has_pip {
            self.install_package(PIP_PACKAGE)?;
        }
        if !self.pip_has_ansible()? {
            let mut cmd = self.pip(&["install"]);
            if externally_managed(self.s) {
                cmd.push("--break-system-packages".into());
            }
            if self.a.run_user.is_some() {
                cmd.push("--user".into());
            }
            let upgrade: Vec<String> = cmd
                .iter()
                .cloned()
                .chain(["--upgrade".to_string(), "pip".to_string()])
                .collect();
            let timeout = self.s.ctx.package_timeout;
            match self.run(&upgrade, None, timeout).0 {
                RunEnd::Interrupted => return Err(ModuleOutcome::Interrupted),
                // Not critical, as cloud-init says.
                RunEnd::Failed(why) => {
                    tracing::warn!("ansible: Failed at upgrading pip: {why}")
                }
                RunEnd::Succeeded => {}
            }
            cmd.push(package);
            match self.run(&cmd, None, timeout) {
                (RunEnd::Succeeded, _) => {}
                (RunEnd::Failed(why), _) => return Err(failed(why)),
                (RunEnd::Interrupted, _) => return Err(ModuleOutcome::Interrupted),
            }
        }
        if !self.pip_has_ansible()? {
            return Err(failed("command: ansible is not installed"));
        }
        Ok(())
    }

    fn pull(&mut self, p: &Pull) -> Go<()> {
        let out = self.must(&["ansible-pull".to_string(), "--version".to_string()], None)?;
        let v = out.first().and_then(|l| version(l));
        if v.is_none() {
            tracing::warn!("ansible: Cannot parse ansible version");
        }
        let diff = p
            .args
            .iter()
            .any(|(k, v)| k == "diff" && *v == ArgValue::Flag(true));
        if let Some(v) = v.filter(|v| *v < (2, 7, 0) && diff) {
            return Err(failed(format!(
                "Ansible version {}.{}.{} doesn't support --diff flag, exiting.",
                v.0, v.1, v.2
            )));
        }
        for c in pull_commands(p, v.is_some_and(|v| v >= (2, 12, 0))) {
            self.must(&c, None)?;
        }
        Ok(())
    }

    fn work(&mut self) -> Go<()> {
        self.install()?;
        self.hide = true;
        for action in self.a.galaxy.iter().flatten() {
            self.must(action, None)?;
        }
        for p in &self.a.pull {
            self.pull(p)?;
        }
        if let Some(c) = &self.a.setup_controller {
            for r in &c.repositories {
                let clone = ["git", "clone", &r.source, &r.path].map(str::to_string);
                self.must(&clone, None)?;
            }
            for r in &c.run_ansible {
                self.must(&playbook_command(r), r.playbook_dir.as_deref())?;
            }
        }
        Ok(())
    }
}

/// Installs Ansible and runs what the document asks.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    let Some(a) = &s.cfg.ansible else {
        return absent("ansible");
    };
    if let Err(e) = s.start() {
        return e;
    }
    if let Err(why) = validate(a) {
        return failed(why);
    }
    // Some Ansible modules read HOME, which a boot service lacks (cloud-init sets it).
    let mut env = vec![("HOME".to_string(), "/root".to_string())];
    if let Some(c) = &a.ansible_config {
        env.push(("ANSIBLE_CONFIG".into(), c.clone()));
    }
    let mut r = Runner {
        s,
        a,
        env,
        ran: 0,
        hide: false,
    };
    match r.work() {
        Ok(()) => ModuleOutcome::Ran {
            note: format!("{} command(s)", r.ran),
        },
        Err(o) => o,
    }
}

/// The commands, those that depend on what is installed or on Ansible's version said so.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    let Some(a) = &l.cfg.ansible else {
        return vec!["nothing: ansible is not in the cloud-config".into()];
    };
    if let Err(why) = validate(a) {
        return vec![format!("fails: {why}")];
    }
    let shown = |argv: &[String], cwd: Option<&str>| -> String {
        let argv = match &a.run_user {
            Some(u) => as_user(u, argv, cwd),
            None => argv.to_vec(),
        };
        let words: Vec<String> = argv.iter().map(|w| shlex_quote(w)).collect();
        let dir = match (cwd, &a.run_user) {
            (Some(d), None) => format!(" (in {d})"),
            _ => String::new(),
        };
        format!("run: {}{dir}", words.join(" "))
    };
    let package = a.package_name.clone().unwrap_or_default();
    let mut out = Vec::new();
    let install_line = |pkg: &str, facts: &Facts| match packages::detect(facts) {
        None => format!("fails: installing {pkg}: the root has no apt-get, dnf, yum or zypper"),
        Some(m) => {
            let wanted = CloudConfig {
                packages: vec![Package {
                    name: pkg.to_string(),
                    version: None,
                }],
                ..Default::default()
            };
            packages::command_lines(m, &wanted)
                .iter()
                .map(|c| format!("run: {} {}", m.program(), c.join(" ")))
                .collect::<Vec<_>>()
                .join("; then ")
        }
    };
    if a.install_method.as_deref() == Some("pip") {
        let pip = |w: &str| format!("{PYTHON} -m pip {w}");
        out.push(format!(
            "run: {}; without pip: {}",
            pip("--version"),
            install_line(PIP_PACKAGE, l.facts)
        ));
        let user = if a.run_user.is_some() { " --user" } else { "" };
        out.push(format!("run: {}{user}", pip("list")));
        out.push(format!(
            "when ansible is not listed: run: {} [--break-system-packages]{user} --upgrade pip; \
             then {} [--break-system-packages]{user} {package}",
            pip("install"),
            pip("install")
        ));
    } else if l.facts.has("ansible") {
        out.push("ansible is installed: nothing to install".into());
    } else {
        out.push(install_line(&package, l.facts));
    }
    for action in a.galaxy.iter().flatten() {
        out.push(shown(action, None));
    }
    for p in &a.pull {
        out.push(shown(&["ansible-pull".into(), "--version".into()], None));
        let together = pull_commands(p, true);
        out.push(format!(
            "{} (one call per playbook before Ansible 2.12)",
            shown(&together[0], None)
        ));
    }
    if let Some(c) = &a.setup_controller {
        for r in &c.repositories {
            out.push(shown(
                &["git", "clone", &r.source, &r.path].map(str::to_string),
                None,
            ));
        }
        for r in &c.run_ansible {
            out.push(shown(&playbook_command(r), r.playbook_dir.as_deref()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    fn ansible(doc: &str) -> Ansible {
        let (cfg, p) = document::from_text(doc);
        assert!(p.iter().all(|p| p.severity == Severity::Warning), "{p:?}");
        cfg.ansible.unwrap()
    }

    #[test]
    fn pull_commands_are_cloud_inits() {
        let a = ansible(
            "ansible:\n  install_method: distro\n  package_name: ansible-core\n  pull:\n  - url: https://git.example/pb.git\n    accept_host_key: true\n    clean: false\n    checkout: main\n    vault_password_file: /etc/vault\n    playbook_names: [site.yml, extra.yml]\n",
        );
        let p = &a.pull[0];
        assert_eq!(
            pull_commands(p, true),
            [[
                "ansible-pull",
                "--url=https://git.example/pb.git",
                "--accept-host-key",
                "--checkout=main",
                "--vault-password-file=/etc/vault",
                "site.yml",
                "extra.yml"
            ]]
        );
        let each = pull_commands(p, false);
        assert_eq!(each.len(), 2);
        assert_eq!(each[1].last().unwrap(), "extra.yml");
        // The deprecated single mapping with playbook_name.
        let a = ansible(
            "ansible: {install_method: pip, package_name: ansible, pull: {url: u, playbook_name: x.yml}}",
        );
        assert_eq!(
            pull_commands(&a.pull[0], true),
            [["ansible-pull", "--url=u", "x.yml"]]
        );
    }

    #[test]
    fn controller_and_run_user() {
        let a = ansible(
            "ansible:\n  install_method: distro\n  package_name: ansible\n  run_user: ops\n  setup_controller:\n    repositories: [{path: /home/ops/pb, source: 'https://git.example/pb.git'}]\n    run_ansible:\n    - {playbook_dir: /home/ops/pb, playbook_name: site.yml, forks: 5, check: true, diff: false, inventory: hosts}\n    - {playbook_dir: /x, playbook_name: y.yml, become_user: root}\n",
        );
        // A key cloud-init's schema does not name is passed on, as cloud-init does.
        assert_eq!(
            playbook_command(&a.setup_controller.as_ref().unwrap().run_ansible[1]),
            ["ansible-playbook", "y.yml", "--become-user=root"]
        );
        assert_eq!(
            as_user("ops", &["x".to_string()], Some("/srv/my pb;reboot"))[4],
            "cd '/srv/my pb;reboot' && env PATH=$PATH x"
        );
        let r = &a.setup_controller.as_ref().unwrap().run_ansible[0];
        assert_eq!(
            playbook_command(r),
            [
                "ansible-playbook",
                "site.yml",
                "--forks=5",
                "--check=True",
                "--inventory=hosts"
            ]
        );
        assert_eq!(
            as_user("ops", &playbook_command(r), r.playbook_dir.as_deref()),
            [
                "su",
                "-",
                "ops",
                "-c",
                "cd /home/ops/pb && env PATH=$PATH ansible-playbook site.yml --forks=5 --check=True --inventory=hosts"
            ]
        );
    }

    #[test]
    fn what_cloud_init_requires() {
        let table: &[(&str, &str)] = &[
            ("ansible: {package_name: a}", "Missing required key 'install_method'"),
            ("ansible: {install_method: pip}", "Missing required key 'package_name'"),
            (
                "ansible: {install_method: pip, package_name: a, pull: [{playbook_names: [x]}]}",
                "'url'",
            ),
            (
                "ansible: {install_method: pip, package_name: a, pull: [{url: u}]}",
                "'playbook_names'",
            ),
            (
                "ansible: {install_method: pip, package_name: a, pull: [{url: u, playbook_name: x, playbook_names: [y]}]}",
                "mutually exclusive",
            ),
            (
                "ansible: {install_method: pip, package_name: a, setup_controller: {}}",
                "repositories or run_ansible",
            ),
        ];
        for (doc, want) in table {
            let why = validate(&ansible(doc)).unwrap_err();
            assert!(why.contains(want), "{doc}: {why}");
        }
        super::super::test_support::assert_refused(&[
            ("ansible: {install_method: apt}", "write distro or pip"),
            (
                "ansible: {galaxy: {actions: [ansible-galaxy]}}",
                "ansible.galaxy.actions[0]",
            ),
            ("ansible: {pull: [{url: u, clean: 'yes'}]}", "true or false"),
            // su would read these as its options or a second word.
            (
                "ansible: {run_user: '-c id'}",
                "ansible.run_user: invalid user name",
            ),
            (
                "ansible: {run_user: '--session-command=x'}",
                "ansible.run_user",
            ),
            ("ansible: {run_user: 'ops x'}", "ansible.run_user"),
        ]);
        let (cfg, _) = crate::cloud_config::document::from_text(
            "ansible: {install_method: distro, package_name: ansible, run_user: -x}",
        );
        assert!(cfg.ansible.is_none(), "{:?}", cfg.ansible);
    }

    #[test]
    fn versions_and_quoting() {
        assert_eq!(shlex_quote("a b"), "'a b'");
        assert_eq!(shlex_quote("it's"), "'it'\"'\"'s'");
        assert_eq!(shlex_quote(""), "''");
        assert_eq!(version("ansible-pull [core 2.14.3]"), Some((2, 14, 3)));
        assert_eq!(version("ansible-pull 2.9.27"), Some((2, 9, 27)));
        assert_eq!(version("ansible-pull 2.11"), Some((2, 11, 0)));
        assert_eq!(version("no version"), None);
    }
}
