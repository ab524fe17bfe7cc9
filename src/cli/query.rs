//! `vmcust query`: what was applied to an instance and from which source — host name,
//! network per NIC, DNS, time zone, accounts, SSH keys by fingerprint, the scripts and
//! commands run and their results, each cloud-config module's outcome, the files written
//! with mode and owner, what was skipped and why — read from the instance's records
//! (`result.json`, `applied.json`, the user-data flag). A key path (`accounts.users`)
//! prints one part of the JSON record, `--all` the whole of it, as cloud-init's `query`.
//! Secrets are never in them: a root password shows as `set`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::Args;
use serde::Serialize;

use super::Format;
use crate::applied::Applied;
use crate::failure::Failure;
use crate::root::Root;
use crate::state::rfc3339;
use crate::state::{read_results, InstanceResult, INSTANCES_DIR};
use crate::state::{POST_PENDING, USER_DATA_DONE};

/// Show what was applied to the current instance, and from which source.
#[derive(Debug, Args)]
pub(crate) struct QueryArgs {
    /// Root directory of the customized system.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// The instance to show (default: the one customized last).
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print only this part of the JSON record, by its key path (`accounts.users`,
    /// `ssh_keys.0.fingerprint`, `result.outcome`); a key of `applied` may be named
    /// without `applied.`. A text value prints as itself, anything else as JSON.
    #[arg(value_name = "KEY", conflicts_with = "all")]
    pub key: Option<String>,
    /// Print the whole record as JSON (as `--format json`).
    #[arg(long)]
    pub all: bool,
}

/// Everything known about one instance's customization.
#[derive(Debug, Serialize)]
pub(super) struct Query {
    /// The instance id.
    pub instance_id: String,
    /// How it ended: `done` or `failed`, the code sent to the host, when, the steps.
    pub result: InstanceResult,
    /// Where the values came from: `imc` for a vSphere spec, else each field's source.
    pub sources: std::collections::BTreeMap<String, String>,
    /// What was applied; `None` for an instance customized before vmcust kept the record.
    pub applied: Option<Applied>,
    /// What the late stage did with the user-data: `ran`, `failed`, `rejected`, `handed
    /// to cloud-init`, or `pending`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_data_result: Option<String>,
    /// The post-customization script is scheduled and has not run yet.
    pub post_script_pending: bool,
}

/// Runs `vmcust query`.
pub(super) fn run(args: QueryArgs) -> Result<()> {
    let root =
        Root::new(&args.root).with_context(|| format!("opening root {}", args.root.display()))?;
    if args.all {
        print!("{}", report(&root, args.instance.as_deref(), Format::Json)?);
        return Ok(());
    }
    let Some(key) = &args.key else {
        print!("{}", report(&root, args.instance.as_deref(), args.format)?);
        return Ok(());
    };
    let Some(q) = query(&root, args.instance.as_deref())? else {
        return Err(Failure::usage("no instance has been customized on this root").into());
    };
    let record = serde_json::to_value(&q)?;
    let value = lookup(&record, key)?;
    print!(
        "{}",
        match (value, args.format) {
            (serde_json::Value::String(t), Format::Text) => format!("{t}\n"),
            (v, Format::Yaml) => crate::yaml::to_string(v)?,
            (v, _) => serde_json::to_string_pretty(v)? + "\n",
        }
    );
    Ok(())
}

/// The value at `key` (dot-separated names, numbers index lists) in `record`; a key path
/// whose first name is not the record's is looked for under `applied`. An unknown key is
/// a usage error naming the keys there are where it stopped.
fn lookup<'v>(record: &'v serde_json::Value, key: &str) -> Result<&'v serde_json::Value> {
    let names: Vec<&str> = key.split('.').collect();
    let first = names.first().copied().unwrap_or_default();
    let start = match record.get(first) {
        Some(_) => record,
        None => record
            .get("applied")
            .filter(|a| a.get(first).is_some())
            .unwrap_or(record),
    };
    let mut at = start;
    for (i, name) in names.iter().enumerate() {
        let next = match at {
            serde_json::Value::Array(items) => {
                name.parse::<usize>().ok().and_then(|n| items.get(n))
            }
            serde_json::Value::Object(map) => map.get(*name),
            _ => None,
        };
        at = match next {
            Some(v) => v,
            None => {
                let so_far = names[..i].join(".");
                let there = match at {
                    serde_json::Value::Object(map) => {
                        format!(
                            "keys there: {}",
                            map.keys().cloned().collect::<Vec<_>>().join(", ")
                        )
                    }
                    serde_json::Value::Array(items) => {
                        format!("a list of {} (index from 0)", items.len())
                    }
                    _ => "a value, not a mapping or list".to_string(),
                };
                let place = if so_far.is_empty() {
                    "the record".to_string()
                } else {
                    so_far
                };
                return Err(Failure::usage(format!(
                    "query: no key {name:?} in {place} ({there}); vmcust query --all shows the whole record"
                ))
                .into());
            }
        };
    }
    Ok(at)
}

/// The query for `instance` (default the newest) in `format` (also for `collect-logs`).
pub(super) fn report(root: &Root, instance: Option<&str>, format: Format) -> Result<String> {
    let q = query(root, instance)?;
    Ok(match (format, q) {
        (Format::Json, q) => serde_json::to_string_pretty(&q)? + "\n",
        (Format::Yaml, q) => crate::yaml::to_string(&q)?,
        (Format::Text, Some(q)) => text(&q),
        (Format::Text, None) => "no instance has been customized on this root\n".to_string(),
    })
}

/// Reads the records of `instance` (default the newest); `None` when no instance was
/// customized. An unknown `instance` is a usage error naming the ones there are.
pub(super) fn query(root: &Root, instance: Option<&str>) -> Result<Option<Query>> {
    let results = instances(root)?;
    let chosen = match instance {
        None => results.into_iter().next(),
        Some(want) => {
            let names: Vec<String> = results.iter().map(|r| r.instance_id.to_string()).collect();
            let found = results.into_iter().find(|r| r.instance_id.as_str() == want);
            if found.is_none() {
                return Err(Failure::usage(format!(
                    "no instance {want} on this root; customized: {}",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ))
                .into());
            }
            found
        }
    };
    let Some(result) = chosen else {
        return Ok(None);
    };
    let dir_name = result.instance_id.file_name();
    let dir = Path::new(INSTANCES_DIR).join(&dir_name);
    let applied = crate::applied::read(root, &dir_name)?;
    let sources = if result.outcome == APPLIED_BY_APPLY {
        // `vmcust apply` keeps no origins: its sources were the files given to it.
        [(
            "all".to_string(),
            "the files given to vmcust apply".to_string(),
        )]
        .into()
    } else if result.origins.is_empty() {
        // Only a vSphere spec is recorded without per-field origins: it is one source.
        [("all".to_string(), "imc".to_string())].into()
    } else {
        result.origins.clone()
    };
    let user_data_result = match root.read_text(&dir.join(USER_DATA_DONE))? {
        Some(t) => Some(t.trim().chars().take(80).collect()),
        None if root.is_file(&dir.join(crate::state::USER_DATA)) => {
            Some("pending (the late stage has not run yet)".to_string())
        }
        None => None,
    };
    Ok(Some(Query {
        instance_id: result.instance_id.to_string(),
        post_script_pending: root.is_file(&dir.join(POST_PENDING)),
        result,
        sources,
        applied,
        user_data_result,
    }))
}

/// The outcome of an instance that only `vmcust apply` customized: it writes no
/// `result.json` (no boot stage ran, no code went to the host), only `applied.json`.
pub(super) const APPLIED_BY_APPLY: &str = "applied by vmcust apply";

/// Every customized instance, newest first: those a boot stage ended (`result.json`), and
/// those only `vmcust apply` customized (an `applied.json` and no `result.json`).
fn instances(root: &Root) -> Result<Vec<InstanceResult>> {
    let mut all = read_results(root)?;
    for dir_name in root.list_dir(Path::new(INSTANCES_DIR))? {
        let dir = Path::new(INSTANCES_DIR).join(&dir_name);
        if root.is_file(&dir.join(crate::state::RESULT_JSON)) {
            continue;
        }
        let Some(a) = crate::applied::read(root, &dir_name)? else {
            continue;
        };
        // A record whose id is not its directory's is not this instance's: left out.
        match crate::model::InstanceId::parse(&a.instance_id) {
            Ok(id) if id.file_name() == dir_name => all.push(InstanceResult {
                instance_id: id,
                outcome: APPLIED_BY_APPLY.to_string(),
                code: 0,
                error: None,
                finished: a.recorded,
                steps: Vec::new(),
                origins: Default::default(),
                degraded: Vec::new(),
                user_data: None,
                nothing_changed: false,
            }),
            _ => tracing::warn!("ignoring {}: not this instance's record", dir.display()),
        }
    }
    all.sort_by_key(|r| std::cmp::Reverse(r.finished));
    Ok(all)
}

/// The query for people.
fn text(q: &Query) -> String {
    let mut s = String::new();
    let r = &q.result;
    let _ = writeln!(s, "instance: {}", q.instance_id);
    let _ = if r.outcome == APPLIED_BY_APPLY {
        // No code went to the host.
        writeln!(s, "outcome: {} at {}", r.outcome, rfc3339(r.finished))
    } else {
        writeln!(
            s,
            "outcome: {} at {}",
            super::status::outcome_words(r),
            rfc3339(r.finished)
        )
    };
    // The reason's first line is in the outcome; the rest of it below.
    if let Some(e) = r.error.as_deref().filter(|_| r.outcome == "failed") {
        for line in e.lines().skip(1) {
            let _ = writeln!(s, "  {line}");
        }
    } else if let Some(e) = &r.error {
        let _ = writeln!(s, "  error: {e}");
    }
    // What was asked for and not applied, each with what vmcust offers instead, as
    // `status` and `plan` name it.
    for d in &r.degraded {
        let _ = writeln!(s, "degraded: {d}");
    }
    let sources: Vec<String> = q
        .sources
        .iter()
        .map(|(field, source)| match field.as_str() {
            "all" => source.clone(),
            _ => format!("{field} from {source}"),
        })
        .collect();
    let _ = writeln!(s, "source: {}", sources.join(", "));
    let Some(a) = &q.applied else {
        let _ = writeln!(
            s,
            "applied: no record (customized before vmcust kept one, or nothing was applied)"
        );
        return s;
    };
    let _ = writeln!(s, "applied by: {} at {}", a.by, rfc3339(a.recorded));
    let _ = match (&a.host_name, &a.fqdn) {
        (Some(h), Some(f)) => writeln!(s, "host name: {h} ({f})"),
        (Some(h), None) => writeln!(s, "host name: {h}"),
        _ => writeln!(s, "host name: not set"),
    };
    let _ = match (&a.time_zone, &a.hardware_clock) {
        (Some(tz), Some(c)) => writeln!(s, "time zone: {tz} (hardware clock {c})"),
        (Some(tz), None) => writeln!(s, "time zone: {tz}"),
        (None, Some(c)) => writeln!(s, "time zone: not set (hardware clock {c})"),
        (None, None) => writeln!(s, "time zone: not set"),
    };
    let _ = writeln!(
        s,
        "root password: {}",
        a.root_password.as_deref().unwrap_or("not changed")
    );
    if let Some(m) = &a.marker {
        let _ = writeln!(s, "marker: {m}");
    }
    if a.accounts.is_empty() {
        let _ = writeln!(s, "accounts: none created or changed");
    } else {
        let _ = writeln!(s, "accounts:");
        for (kind, list) in [("user", &a.accounts.users), ("group", &a.accounts.groups)] {
            for acc in list {
                let _ = writeln!(s, "  {kind} {}: {}", acc.name, acc.change);
            }
        }
    }
    if a.ssh_keys.is_empty() {
        let _ = writeln!(s, "ssh keys: none");
    } else if a.ssh_keys.iter().any(|k| k.user.is_some()) {
        let _ = writeln!(s, "ssh keys:");
        for k in &a.ssh_keys {
            let _ = writeln!(
                s,
                "  for {}: {} {} {}",
                k.user
                    .as_deref()
                    .or(a.ssh_user.as_deref())
                    .unwrap_or("root"),
                k.key_type,
                k.fingerprint,
                k.comment.as_deref().unwrap_or("(no comment)")
            );
        }
    } else {
        let _ = writeln!(
            s,
            "ssh keys for {}:",
            a.ssh_user.as_deref().unwrap_or("root")
        );
        for k in &a.ssh_keys {
            let _ = writeln!(
                s,
                "  {} {} {}",
                k.key_type,
                k.fingerprint,
                k.comment.as_deref().unwrap_or("(no comment)")
            );
        }
    }
    match &a.network {
        None => {
            let _ = writeln!(s, "network: left as it was");
        }
        Some(n) => {
            let _ = writeln!(
                s,
                "network ({}):",
                a.renderer.as_deref().unwrap_or("no renderer")
            );
            for nic in &n.interfaces {
                let _ = writeln!(
                    s,
                    "  {} {}: ipv4 {}, ipv6 {}",
                    nic.id, nic.mac, nic.ipv4, nic.ipv6
                );
                for route in &nic.routes {
                    let _ = writeln!(s, "    route {route}");
                }
                if !nic.dns.is_empty() {
                    let _ = writeln!(s, "    dns {}", dns_text(&nic.dns));
                }
            }
            let _ = writeln!(s, "dns: {}", dns_text(&n.dns));
        }
    }
    if a.scripts.is_empty() {
        let _ = writeln!(s, "scripts: none run (custom scripts, user-data #! script)");
    } else {
        let _ = writeln!(s, "scripts:");
        for sc in &a.scripts {
            let _ = writeln!(
                s,
                "  {} {}: {} ({} ms, at {})",
                sc.phase,
                sc.script,
                sc.result,
                sc.ms,
                rfc3339(sc.finished)
            );
        }
    }
    if q.post_script_pending {
        let _ = writeln!(s, "  postcustomization: scheduled for the late stage");
    }
    match &a.user_data {
        None => {
            let _ = writeln!(s, "user-data: none");
        }
        Some(u) => {
            let _ = writeln!(
                s,
                "user-data: {} bytes from {}, {}; {}",
                u.bytes,
                u.from,
                u.disposition,
                q.user_data_result.as_deref().unwrap_or("not handled yet")
            );
        }
    }
    if !a.modules.is_empty() {
        let _ = writeln!(s, "cloud-config modules:");
        for m in &a.modules {
            let _ = match m.detail.as_str() {
                "" => writeln!(s, "  {} ({}): {}", m.module, m.stage, m.outcome),
                d => writeln!(s, "  {} ({}): {}: {d}", m.module, m.stage, m.outcome),
            };
        }
    }
    if a.commands.is_empty() {
        let _ = writeln!(s, "commands: none run");
    } else {
        let _ = writeln!(s, "commands:");
        for c in &a.commands {
            let _ = match c.exit_status {
                Some(code) if c.result == "succeeded" => writeln!(
                    s,
                    "  {}: {}: succeeded (exit status {code})",
                    c.module, c.command
                ),
                _ => writeln!(s, "  {}: {}: {}", c.module, c.command, c.result),
            };
        }
    }
    let written: Vec<_> = a
        .files
        .iter()
        .filter(|f| f.change != "unchanged" && f.change != "skip")
        .collect();
    let _ = writeln!(
        s,
        "files: {} written, {} already as wanted",
        written.len(),
        a.files.len() - written.len()
    );
    for f in written {
        let by = f
            .module
            .as_deref()
            .filter(|m| !f.purpose.contains(m))
            .map(|m| format!(", by {m}"))
            .unwrap_or_default();
        let _ = match (&f.mode, &f.owner) {
            (Some(mode), Some(owner)) => writeln!(
                s,
                "  {:<8} {} ({}{by}; mode {mode}, owner {owner})",
                f.change, f.path, f.purpose
            ),
            _ => writeln!(s, "  {:<8} {} ({}{by})", f.change, f.path, f.purpose),
        };
    }
    let skipped = a.left_out();
    if skipped.is_empty() {
        let _ = writeln!(s, "skipped: nothing");
    } else {
        let _ = writeln!(s, "skipped:");
        for (what, why) in skipped {
            let _ = match why {
                Some(why) => writeln!(s, "  {what}: {why}"),
                None => writeln!(s, "  {what}"),
            };
        }
    }
    s
}

fn dns_text(d: &crate::applied::DnsRecord) -> String {
    match (d.servers.is_empty(), d.search.is_empty()) {
        (true, true) => "none".to_string(),
        (false, true) => format!("servers {}", d.servers.join(", ")),
        (true, false) => format!("search {}", d.search.join(", ")),
        (false, false) => format!(
            "servers {}; search {}",
            d.servers.join(", "),
            d.search.join(", ")
        ),
    }
}
