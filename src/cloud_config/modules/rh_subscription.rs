//! `rh_subscription`: cloud-init's `cc_rh_subscription`, on RHEL and Fedora only (its
//! `distros: [fedora, rhel]`; CentOS, Rocky, Alma and the rest are skipped by distro,
//! saying why). When `subscription-manager identity` fails (not registered), it
//! registers with an activation key and org or a user name and password, then attaches
//! (`auto_attach`, `service_level`, `add_pool`), enables and disables repositories and
//! sets the release, with cloud-init's command lines, each bounded by the command
//! timeout. As in cloud-init, a step that fails is a warning ("rh_subscription plugin
//! did not complete successfully") and the module does not fail; only the listing of
//! pools and repositories, which cloud-init does not guard, fails it.
//!
//! The password and the activation key are secrets (each is a registration
//! credential): the document's values never serialize, the plan shows `<redacted>`,
//! and the `register` command line (which carries one of them) is never logged or
//! recorded — only how many arguments it had, as cloud-init hides it. While it runs,
//! that command line is readable in `/proc/<pid>/cmdline` (`subscription-manager`
//! takes the credential only as an argument; see docs/security.md).

use serde::{Serialize, Serializer};

use crate::cloud_config::apply::driver::{absent, failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::exec::{self, Program, RunEnd};
use crate::cloud_config::apply::preview::Look;
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader, Severity};
use crate::cloud_config::redact::REDACTED;
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;

/// The program.
pub(crate) const SUBMAN: &str = "subscription-manager";
/// Longest value, in bytes.
pub(crate) const MAX_VALUE: usize = 4096;
/// Most pools or repositories in one list.
pub(crate) const MAX_IDS: usize = 1024;
/// The package caches removed after the release is set.
pub(crate) const CACHES: [&str; 2] = ["/var/cache/dnf", "/var/cache/yum"];

/// A credential (password or activation key): never printed, serialized or shown but
/// as `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, for the one command line that carries it.
    fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(REDACTED)
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(REDACTED)
    }
}

/// `rh_subscription`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RhSubscription {
    /// `username`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// `password` (secret).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<Secret>,
    /// `activation_key` (`activation-key`; secret).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activation_key: Option<Secret>,
    /// `org` (an integer taken as its digits, as cloud-init formats it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    /// `auto_attach` (`auto-attach`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_attach: Option<bool>,
    /// `service_level` (`service-level`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_level: Option<String>,
    /// `add_pool` (`add-pool`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_pool: Option<Vec<String>>,
    /// `enable_repo` (`enable-repo`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_repo: Option<Vec<String>>,
    /// `disable_repo` (`disable-repo`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disable_repo: Option<Vec<String>>,
    /// `release_version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release_version: Option<String>,
    /// `rhsm_baseurl` (`rhsm-baseurl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rhsm_baseurl: Option<String>,
    /// `server_hostname` (`server-hostname`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_hostname: Option<String>,
}

/// The keys, with their deprecated dashed spellings.
const KEYS: &[&str] = &[
    "username",
    "password",
    "activation_key",
    "activation-key",
    "org",
    "auto_attach",
    "auto-attach",
    "service_level",
    "service-level",
    "add_pool",
    "add-pool",
    "enable_repo",
    "enable-repo",
    "disable_repo",
    "disable-repo",
    "release_version",
    "rhsm_baseurl",
    "rhsm-baseurl",
    "server_hostname",
    "server-hostname",
];

fn ids(r: &mut Reader, node: &Node, at: &str) -> Option<Vec<String>> {
    let items = r.list(node, at, MAX_IDS)?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        out.push(r.line(item, &index(at, i), MAX_VALUE)?);
    }
    Some(out)
}

/// `rh_subscription`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(map) = r.map(node, key, KEYS) else {
        return;
    };
    let mut rh = RhSubscription::default();
    let mut seen = std::collections::BTreeSet::new();
    let mut ok = true;
    for (k, v) in map {
        let at = join(key, &k.text);
        let name = k.text.replace('-', "_");
        if name != k.text {
            r.report(
                Severity::Warning,
                v,
                &at,
                format!("deprecated (cloud-init 25.3); write {name}"),
            );
        }
        if !seen.insert(name.clone()) {
            r.error(
                v,
                &at,
                format!("{name} is given twice (with _ and with -); keep {name}"),
            );
            ok = false;
            continue;
        }
        let line = |r: &mut Reader| r.line(v, &at, MAX_VALUE);
        let good = match name.as_str() {
            "username" => line(r).map(|s| rh.username = Some(s)),
            "password" => secret(r, v, &at).map(|s| rh.password = Some(s)),
            "activation_key" => secret(r, v, &at).map(|s| rh.activation_key = Some(s)),
            "org" => match &v.value {
                Value::Int(n) => {
                    r.report(
                        Severity::Warning,
                        v,
                        &at,
                        "an integer is deprecated (cloud-init 24.2); quote it",
                    );
                    rh.org = Some(n.to_string());
                    Some(())
                }
                _ => line(r).map(|s| rh.org = Some(s)),
            },
            "auto_attach" => r.bool(v, &at).map(|b| rh.auto_attach = Some(b)),
            "service_level" => line(r).map(|s| rh.service_level = Some(s)),
            "add_pool" => ids(r, v, &at).map(|l| rh.add_pool = Some(l)),
            "enable_repo" => ids(r, v, &at).map(|l| rh.enable_repo = Some(l)),
            "disable_repo" => ids(r, v, &at).map(|l| rh.disable_repo = Some(l)),
            "release_version" => line(r).map(|s| rh.release_version = Some(s)),
            "rhsm_baseurl" => line(r).map(|s| rh.rhsm_baseurl = Some(s)),
            _ => line(r).map(|s| rh.server_hostname = Some(s)),
        };
        ok &= good.is_some();
    }
    if ok {
        cfg.rh_subscription = Some(rh);
    }
}

/// A credential: one line of at most [`MAX_VALUE`] bytes. Not through the reader's
/// line messages: they may quote the value.
fn secret(r: &mut Reader, v: &Node, at: &str) -> Option<Secret> {
    match &v.value {
        Value::Str(s) if s.len() <= MAX_VALUE && !s.chars().any(char::is_control) => {
            Some(Secret(s.clone()))
        }
        Value::Str(_) => {
            r.error(
                v,
                at,
                format!("is too long or holds a control character; at most {MAX_VALUE} bytes on one line"),
            );
            None
        }
        _ => {
            r.wrong_type(v, at, "a string");
            None
        }
    }
}

/// Whether the document asks for a registration (cloud-init's `is_configured`: a user
/// name and password, or an activation key).
pub(crate) fn configured(rh: &RhSubscription) -> bool {
    (rh.username.is_some() && rh.password.is_some()) || rh.activation_key.is_some()
}

/// The programs it runs.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.rh_subscription.is_some() {
        &[SUBMAN, "rm"]
    } else {
        &[]
    }
}

/// Why the module does nothing on this system, if it does nothing.
fn idle(cfg: &CloudConfig, facts: &Facts) -> Option<String> {
    let Some(rh) = &cfg.rh_subscription else {
        return Some("rh_subscription is not in the cloud-config".into());
    };
    if !["rhel", "fedora"].contains(&facts.os_id.as_str()) {
        let id = if facts.os_id.is_empty() {
            "not named by /etc/os-release"
        } else {
            facts.os_id.as_str()
        };
        return Some(format!(
            "skipped by distro: cloud-init runs rh_subscription on RHEL and Fedora only \
             (distros: [fedora, rhel]); this system is {id}"
        ));
    }
    if !configured(rh) {
        return Some(
            "rh_subscription is not configured: it needs activation_key (with org) or \
             username and password"
                .into(),
        );
    }
    None
}

/// A word of a command line: the secret itself, or shown as `<redacted>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Word {
    /// A plain word.
    Plain(String),
    /// `--password=` and the secret.
    Password(Secret),
    /// `--activationkey=` and the secret.
    ActivationKey(Secret),
}

impl Word {
    fn shown(&self) -> String {
        match self {
            Word::Plain(s) => s.clone(),
            Word::Password(_) => format!("--password={REDACTED}"),
            Word::ActivationKey(_) => format!("--activationkey={REDACTED}"),
        }
    }

    fn real(&self) -> String {
        match self {
            Word::Plain(s) => s.clone(),
            Word::Password(p) => format!("--password={}", p.expose()),
            Word::ActivationKey(k) => format!("--activationkey={}", k.expose()),
        }
    }
}

/// The `register` arguments, or the warning cloud-init gives when it has neither an
/// activation key and org nor a user name and password.
pub(crate) fn register_args(rh: &RhSubscription) -> Result<Vec<Word>, &'static str> {
    let plain = |s: String| Word::Plain(s);
    let mut args = vec![plain("register".into())];
    match (&rh.activation_key, &rh.org, &rh.username, &rh.password) {
        (Some(key), Some(org), _, _) => {
            args.push(Word::ActivationKey(key.clone()));
            args.push(plain(format!("--org={org}")));
        }
        (_, _, Some(user), Some(password)) => {
            args.push(plain(format!("--username={user}")));
            args.push(Word::Password(password.clone()));
        }
        _ => {
            return Err(
                "Unable to register system due to incomplete information: use either \
                 activation_key and org *or* username and password",
            )
        }
    }
    if let Some(url) = &rh.rhsm_baseurl {
        args.push(plain(format!("--baseurl={url}")));
    }
    if let Some(host) = &rh.server_hostname {
        args.push(plain(format!("--serverurl={host}")));
    }
    Ok(args)
}

/// The `attach` arguments for `auto_attach` (with `service_level`), if any.
pub(crate) fn attach_args(rh: &RhSubscription) -> Option<Vec<String>> {
    match (rh.auto_attach, &rh.service_level) {
        (Some(true), Some(level)) => Some(vec![
            "attach".into(),
            "--auto".into(),
            format!("--servicelevel={level}"),
        ]),
        (Some(true), None) => Some(vec!["attach".into(), "--auto".into()]),
        _ => None,
    }
}

/// Repository ids of a `repos --list-…` answer: the `Repo ID:` lines.
pub(crate) fn repo_ids(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.contains("Repo ID:"))
        .filter_map(|l| l.split(':').nth(1).map(|s| s.trim().to_string()))
        .collect()
}

/// The `repos` arguments: the disables of repositories enabled now, then the enables of
/// repositories disabled now, as cloud-init orders them (the others are left, as it
/// leaves them).
pub(crate) fn repos_args(
    rh: &RhSubscription,
    active: &[String],
    inactive: &[String],
) -> Vec<String> {
    let mut args = vec!["repos".to_string()];
    for id in rh.disable_repo.iter().flatten() {
        if active.contains(id) {
            args.push(format!("--disable={id}"));
        }
    }
    for id in rh.enable_repo.iter().flatten() {
        if inactive.contains(id) {
            args.push(format!("--enable={id}"));
        }
    }
    args
}

/// The `attach --pool=` arguments: the pools available and not consumed now.
pub(crate) fn pool_args(
    pools: &[String],
    available: &[String],
    consumed: &[String],
) -> Vec<String> {
    pools
        .iter()
        .filter(|p| !consumed.contains(p) && available.contains(p))
        .map(|p| format!("--pool={p}"))
        .collect()
}

/// How a step ended: on, a warning that ends the work (the module still succeeds), an
/// unguarded failure (the module fails), or stopped.
enum Stop {
    Warn(String),
    Fail(String),
    Interrupted,
}

struct Runner<'s, 'a> {
    s: &'s Step<'a>,
    path: Option<&'s String>,
}

impl Runner<'_, '_> {
    /// Runs `subscription-manager <args>`; `hidden` keeps the arguments out of the log
    /// and the records.
    fn run(&self, args: Vec<String>, hidden: bool) -> (RunEnd, Vec<String>) {
        let Some(path) = self.path else {
            return (
                RunEnd::Failed(format!(
                    "rh_subscription: {SUBMAN} is not in the root; install it (the \
                     subscription-manager package) in the template"
                )),
                Vec::new(),
            );
        };
        let p = Program {
            module: "rh_subscription",
            program: path,
            args,
            env: Vec::new(),
            timeout: self.s.ctx.command_timeout,
            hide_args: hidden,
        };
        exec::run_capturing(&self.s.ctx.root, &p, None, self.s.ctx.stop)
    }

    /// Runs a step whose failure is a warning with `warning`.
    fn step(&self, args: Vec<String>, warning: &str) -> Result<Vec<String>, Stop> {
        match self.run(args, false) {
            (RunEnd::Succeeded, out) => Ok(out),
            (RunEnd::Failed(why), _) => Err(Stop::Warn(format!("{warning}: {why}"))),
            (RunEnd::Interrupted, _) => Err(Stop::Interrupted),
        }
    }

    /// Runs a listing cloud-init does not guard: its failure fails the module.
    fn listing(&self, args: &[&str]) -> Result<Vec<String>, Stop> {
        match self.run(args.iter().map(|s| s.to_string()).collect(), false) {
            (RunEnd::Succeeded, out) => Ok(out),
            (RunEnd::Failed(why), _) => Err(Stop::Fail(why)),
            (RunEnd::Interrupted, _) => Err(Stop::Interrupted),
        }
    }

    /// Registers, attaches, sets repositories and the release.
    fn subscribe(&self, rh: &RhSubscription) -> Result<String, Stop> {
        if rh.service_level.is_some() && rh.auto_attach != Some(true) {
            return Err(Stop::Warn(
                "The service_level key must be used in conjunction with the auto_attach \
                 key. Please re-run with auto_attach: True"
                    .into(),
            ));
        }
        let args = register_args(rh).map_err(|w| Stop::Warn(w.into()))?;
        let real = args.iter().map(Word::real).collect();
        match self.run(real, true) {
            (RunEnd::Succeeded, out) if out.iter().any(|l| l.contains("ID: ")) => {}
            (RunEnd::Succeeded, _) => {
                return Err(Stop::Warn(
                    "Registration failed or did not run completely: subscription-manager \
                     register printed no ID"
                        .into(),
                ))
            }
            (RunEnd::Failed(why), _) => {
                return Err(Stop::Warn(format!(
                    "Registration failed or did not run completely: {why}"
                )))
            }
            (RunEnd::Interrupted, _) => return Err(Stop::Interrupted),
        }
        let mut done = vec!["registered".to_string()];
        if let Some(attach) = attach_args(rh) {
            let what = if rh.service_level.is_some() {
                "Setting of service_level failed"
            } else {
                "Setting auto_attach failed"
            };
            self.step(attach, what)?;
            done.push("attached".into());
        }
        if let Some(pools) = rh.add_pool.as_ref().filter(|p| !p.is_empty()) {
            let available = self.listing(&["list", "--available", "--pool-only"])?;
            let consumed = self.listing(&["list", "--consumed", "--pool-only"])?;
            let trimmed = |v: Vec<String>| {
                v.into_iter()
                    .map(|l| l.trim().to_string())
                    .collect::<Vec<_>>()
            };
            let (available, consumed) = (trimmed(available), trimmed(consumed));
            for p in pools {
                if consumed.contains(p) || !available.contains(p) {
                    tracing::warn!("rh_subscription: Pool {p} is not available");
                }
            }
            let chosen = pool_args(pools, &available, &consumed);
            let unable = format!("Unable to attach pools {pools:?}");
            if chosen.is_empty() {
                return Err(Stop::Warn(unable));
            }
            let mut args = vec!["attach".to_string()];
            args.extend(chosen);
            self.step(args, &unable)?;
            done.push(format!("{} pool(s) attached", pools.len()));
        }
        let wants_repos = rh.enable_repo.as_ref().is_some_and(|l| !l.is_empty())
            || rh.disable_repo.as_ref().is_some_and(|l| !l.is_empty());
        if wants_repos {
            let active = repo_ids(&self.listing(&["repos", "--list-enabled"])?);
            let inactive = repo_ids(&self.listing(&["repos", "--list-disabled"])?);
            for id in rh.enable_repo.iter().flatten() {
                if !inactive.contains(id) && !active.contains(id) {
                    tracing::warn!("rh_subscription: Repo {id} does not appear to exist");
                }
            }
            self.step(
                repos_args(rh, &active, &inactive),
                "Unable to add or remove repos",
            )?;
            done.push("repositories set".into());
        }
        if let Some(v) = &rh.release_version {
            let set = vec!["release".to_string(), format!("--set={v}")];
            self.step(
                set,
                &format!("Unable to set release_version using: ['release', '--set={v}']"),
            )?;
            self.remove_caches()?;
            done.push(format!("release {v}"));
        }
        Ok(done.join(", "))
    }

    /// Removes the package caches (inside the root, sealed in it when it is not `/`).
    fn remove_caches(&self) -> Result<(), Stop> {
        let Some(rm) = self.s.cc.programs.get("rm") else {
            return Err(Stop::Warn(
                "Unable to delete the package manager cache: the root has no rm".into(),
            ));
        };
        let p = Program {
            module: "rh_subscription",
            program: rm,
            args: std::iter::once("-rf".to_string())
                .chain(CACHES.iter().map(|c| c.to_string()))
                .collect(),
            env: Vec::new(),
            timeout: self.s.ctx.tool_timeout,
            hide_args: false,
        };
        match exec::run(&self.s.ctx.root, &p, self.s.ctx.stop) {
            RunEnd::Succeeded => Ok(()),
            RunEnd::Failed(why) => Err(Stop::Warn(format!(
                "Unable to delete the package manager cache: {why}"
            ))),
            RunEnd::Interrupted => Err(Stop::Interrupted),
        }
    }
}

/// Registers the system unless `subscription-manager identity` says it is.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    let Some(rh) = &s.cfg.rh_subscription else {
        return absent("rh_subscription");
    };
    if let Some(why) = idle(s.cfg, s.cc) {
        return skipped(why);
    }
    if let Err(o) = s.start() {
        return o;
    }
    let r = Runner {
        s,
        path: s.cc.programs.get(SUBMAN),
    };
    match r.run(vec!["identity".into()], false).0 {
        RunEnd::Succeeded => {
            return ModuleOutcome::Ran {
                note: "System is already registered".into(),
            }
        }
        RunEnd::Interrupted => return ModuleOutcome::Interrupted,
        RunEnd::Failed(_) => {}
    }
    match r.subscribe(rh) {
        Ok(done) => ModuleOutcome::Ran {
            note: format!("rh_subscription plugin completed successfully: {done}"),
        },
        Err(Stop::Warn(why)) => {
            tracing::warn!("rh_subscription: {why}");
            tracing::warn!("rh_subscription plugin did not complete successfully");
            ModuleOutcome::Ran {
                note: format!(
                    "rh_subscription plugin did not complete successfully (a warning, as \
                     in cloud-init): {why}"
                ),
            }
        }
        Err(Stop::Fail(why)) => failed(why),
        Err(Stop::Interrupted) => ModuleOutcome::Interrupted,
    }
}

/// The commands, the password and activation key shown as `<redacted>`.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    if let Some(why) = idle(l.cfg, l.facts) {
        return vec![format!("nothing: {why}")];
    }
    let Some(rh) = &l.cfg.rh_subscription else {
        return Vec::new();
    };
    let run = |args: &[String]| format!("run: {SUBMAN} {}", args.join(" "));
    let mut out = vec![format!(
        "run: {SUBMAN} identity (when it succeeds the system is registered and nothing \
         else runs)"
    )];
    match register_args(rh) {
        Err(w) => {
            out.push(format!("warns: {w}"));
            return out;
        }
        Ok(args) => {
            let shown: Vec<String> = args.iter().map(Word::shown).collect();
            out.push(format!("{} (not logged)", run(&shown)));
        }
    }
    if let Some(a) = attach_args(rh) {
        out.push(run(&a));
    }
    if let Some(pools) = rh.add_pool.as_ref().filter(|p| !p.is_empty()) {
        out.push(format!("run: {SUBMAN} list --available --pool-only"));
        out.push(format!("run: {SUBMAN} list --consumed --pool-only"));
        out.push(format!(
            "run: {SUBMAN} attach --pool=… for each of {} available and not consumed",
            pools.join(", ")
        ));
    }
    let (e, d) = (
        rh.enable_repo.clone().unwrap_or_default(),
        rh.disable_repo.clone().unwrap_or_default(),
    );
    if !e.is_empty() || !d.is_empty() {
        out.push(format!("run: {SUBMAN} repos --list-enabled"));
        out.push(format!("run: {SUBMAN} repos --list-disabled"));
        out.push(format!(
            "run: {SUBMAN} repos --disable=… for each of [{}] enabled, --enable=… for each of [{}] disabled",
            d.join(", "),
            e.join(", ")
        ));
    }
    if let Some(v) = &rh.release_version {
        out.push(format!("run: {SUBMAN} release --set={v}"));
        out.push(format!("run: rm -rf {}", CACHES.join(" ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;

    fn rhel() -> Facts {
        Facts {
            os_id: "rhel".into(),
            ..Default::default()
        }
    }

    fn look_lines(doc: &str, facts: &Facts) -> Vec<String> {
        let (cfg, p) = document::from_text(doc);
        assert!(p.iter().all(|p| p.severity == Severity::Warning), "{p:?}");
        preview(&Look {
            cfg: &cfg,
            facts,
            fallback: None,
            scripts: &Default::default(),
        })
    }

    /// `doc` read, then shown every way vmcust shows a document (JSON, `Debug`, the plan's
    /// lines), none of which may hold `secret`; the JSON, the lines and the register
    /// command's real words are returned for the caller's own checks.
    fn shown_without(doc: &str, secret: &str) -> (String, String, Vec<String>) {
        let (cfg, _) = document::from_text(doc);
        let json = serde_json::to_string(&cfg).unwrap();
        let debug = format!("{cfg:?}");
        let lines = look_lines(doc, &rhel()).join("\n");
        for shown in [&json, &debug, &lines] {
            assert!(!shown.contains(secret), "{shown}");
        }
        let real = register_args(cfg.rh_subscription.as_ref().unwrap())
            .unwrap()
            .iter()
            .map(Word::real)
            .collect();
        (json, lines, real)
    }

    /// A value with a line break in `doc` is refused with a message that quotes none of
    /// `secret`.
    fn refused_without_quoting(doc: &str, secret: &str) {
        let (_, p) = document::from_text(doc);
        assert!(
            p.iter().all(|p| !p.message.contains(secret)) && !p.is_empty(),
            "{p:?}"
        );
    }

    #[test]
    fn the_password_is_never_shown() {
        let doc = "rh_subscription: {username: joe, password: 'Pa55-SECRET', rhsm_baseurl: 'https://cdn.example', server_hostname: sub.example, auto_attach: true, service_level: self-support, enable_repo: [a], release_version: '9.2'}";
        let (json, lines, real) = shown_without(doc, "Pa55-SECRET");
        assert!(json.contains("\"password\":\"<redacted>\""), "{json}");
        assert!(
            lines.contains("run: subscription-manager register --username=joe --password=<redacted> --baseurl=https://cdn.example --serverurl=sub.example (not logged)"),
            "{lines}"
        );
        assert!(
            lines.contains("run: subscription-manager attach --auto --servicelevel=self-support"),
            "{lines}"
        );
        assert!(
            lines.contains("run: subscription-manager release --set=9.2"),
            "{lines}"
        );
        // The one place the secret goes: the command line that is run, unlogged.
        assert_eq!(real[2], "--password=Pa55-SECRET");
        // A bad password's error does not quote it.
        refused_without_quoting(
            "rh_subscription: {username: a, password: \"SEC\\nRET\"}",
            "SEC",
        );
    }

    #[test]
    fn the_activation_key_is_never_shown() {
        let doc = "rh_subscription: {activation_key: 'AK-SECRET-1', org: '7'}";
        let (json, lines, real) = shown_without(doc, "AK-SECRET-1");
        assert!(json.contains("\"activation_key\":\"<redacted>\""), "{json}");
        assert!(
            lines.contains(
                "run: subscription-manager register --activationkey=<redacted> --org=7 (not logged)"
            ),
            "{lines}"
        );
        assert_eq!(real, ["register", "--activationkey=AK-SECRET-1", "--org=7"]);
        refused_without_quoting(
            "rh_subscription: {activation_key: \"AK-S\\nECRET\", org: o}",
            "AK-S",
        );
    }

    #[test]
    fn activation_key_and_dashed_keys() {
        let (cfg, p) = document::from_text(
            "rh_subscription: {activation-key: k1, org: 12345, add-pool: [p1, p2], enable-repo: [r1], disable-repo: [r2]}",
        );
        assert_eq!(p.len(), 5, "{p:?}");
        let rh = cfg.rh_subscription.unwrap();
        let args: Vec<String> = register_args(&rh)
            .unwrap()
            .iter()
            .map(Word::shown)
            .collect();
        assert_eq!(
            args,
            ["register", "--activationkey=<redacted>", "--org=12345"]
        );
        assert_eq!(
            pool_args(
                &rh.add_pool.clone().unwrap(),
                &["p1".into(), "p2".into()],
                &["p2".into()]
            ),
            ["--pool=p1"]
        );
        let listed = ["Repo ID:   r2".to_string(), "Repo Name: two".into()];
        assert_eq!(repo_ids(&listed), ["r2"]);
        assert_eq!(
            repos_args(&rh, &["r2".into()], &["r1".into()]),
            ["repos", "--disable=r2", "--enable=r1"]
        );
        super::super::test_support::assert_refused(&[
            (
                "rh_subscription: {activation_key: a, activation-key: b}",
                "given twice",
            ),
            ("rh_subscription: {auto_attach: 'yes'}", "true or false"),
            (
                "rh_subscription: {add_pool: p1}",
                "rh_subscription.add_pool",
            ),
            (
                "rh_subscription: {password: [x]}",
                "rh_subscription.password",
            ),
        ]);
    }

    #[test]
    fn gated_by_distro_and_configuration() {
        let doc = "rh_subscription: {activation_key: k, org: o}";
        for (id, want) in [
            ("centos", "skipped by distro"),
            ("rocky", "skipped by distro"),
            ("debian", "skipped by distro"),
        ] {
            let f = Facts {
                os_id: id.into(),
                ..Default::default()
            };
            let l = look_lines(doc, &f);
            assert!(
                l[0].starts_with("nothing: ") && l[0].contains(want),
                "{l:?}"
            );
        }
        let l = look_lines("rh_subscription: {username: u}", &rhel());
        assert!(l[0].contains("not configured"), "{l:?}");
        let l = look_lines("rh_subscription: {activation_key: k}", &rhel());
        assert!(l[1].starts_with("warns: Unable to register"), "{l:?}");
        let f = Facts {
            os_id: "fedora".into(),
            ..Default::default()
        };
        assert!(look_lines(doc, &f)[0].starts_with("run: subscription-manager identity"));
    }
}
