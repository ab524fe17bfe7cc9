//! `resolv_conf` (`manage_resolv_conf`, `resolv_conf`): the resolver's file written from
//! the document, as cloud-init's `cc_resolv_conf` renders it — only when
//! `manage_resolv_conf` is `true`, and only on the distributions cloud-init's module
//! declares (RHEL, Fedora, SUSE, Photon, Alpine, …; not Debian, Ubuntu or the RHEL
//! rebuilds, which cloud-init tells apart by exact name). `/etc/resolv.conf`, or
//! `/etc/systemd/resolved.conf` where the distribution's resolver is systemd-resolved
//! (Photon, Mariner, Azure Linux). Planned as one file action, so it is atomic and rolled
//! back with the stage's other changes on a failure.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::Serialize;

use crate::cloud_config::apply::driver::{failed, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::error::ModuleError;
use crate::cloud_config::apply::preview::{action_lines, Look};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader};
use crate::cloud_config::CloudConfig;
use crate::facts::Facts;
use crate::model::{quote, DnsName, NameServer};
use crate::plan::{Action, Contents};

/// Most entries in one of `resolv_conf`'s lists, and most options.
pub(crate) const MAX_ENTRIES: usize = 64;

/// The `ID`s of `/etc/os-release` cloud-init's module runs on (its `distros`).
pub(crate) const DISTROS: &[&str] = &[
    "alpine",
    "azurelinux",
    "fedora",
    "mariner",
    "openeuler",
    "opensuse",
    "opensuse-leap",
    "opensuse-microos",
    "opensuse-tumbleweed",
    "photon",
    "rhel",
    "sle_hpc",
    "sle-micro",
    "sles",
];

/// The distributions whose resolver file is systemd-resolved's configuration.
const RESOLVED: &[&str] = &["azurelinux", "mariner", "photon"];

/// `/etc/resolv.conf`.
pub(crate) const RESOLV_CONF: &str = "/etc/resolv.conf";
/// systemd-resolved's configuration.
pub(crate) const RESOLVED_CONF: &str = "/etc/systemd/resolved.conf";

/// One `options` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Opt {
    /// `true` writes the bare flag, `false` leaves it out.
    Flag(bool),
    /// Written `key:value`.
    Value(String),
}

/// `resolv_conf`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ResolvConf {
    /// `nameservers`, in order.
    pub nameservers: Vec<NameServer>,
    /// `searchdomains`, in order.
    pub searchdomains: Vec<DnsName>,
    /// `domain`.
    pub domain: Option<DnsName>,
    /// `sortlist`: `address[/netmask]` entries.
    pub sortlist: Vec<String>,
    /// `options`, by name.
    pub options: BTreeMap<String, Opt>,
}

/// `manage_resolv_conf`.
pub(crate) fn parse_manage(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.manage_resolv_conf = r.bool(node, key);
}

/// `resolv_conf`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let Some(map) = r.map(
        node,
        key,
        &[
            "nameservers",
            "searchdomains",
            "domain",
            "sortlist",
            "options",
        ],
    ) else {
        return;
    };
    let mut rc = ResolvConf::default();
    for (k, v) in map {
        let at = join(key, &k.text);
        match k.text.as_str() {
            "nameservers" => {
                rc.nameservers = list(r, &at, v, |s| {
                    let a: IpAddr = s
                        .parse()
                        .map_err(|_| format!("{} is not an IP address", quote(s)))?;
                    NameServer::new(a)
                })
            }
            "searchdomains" => rc.searchdomains = list(r, &at, v, DnsName::parse),
            "domain" => {
                rc.domain = r
                    .line(v, &at, 253)
                    .and_then(|s| ok_or_report(r, v, &at, DnsName::parse(&s)))
            }
            "sortlist" => rc.sortlist = list(r, &at, v, sortlist_entry),
            _ => rc.options = options(r, &at, v),
        }
    }
    cfg.resolv_conf = Some(rc);
}

fn ok_or_report<T>(r: &mut Reader, node: &Node, at: &str, v: Result<T, String>) -> Option<T> {
    match v {
        Ok(v) => Some(v),
        Err(why) => {
            r.error(node, at, why);
            None
        }
    }
}

/// A list of strings, each checked by `check`; a bad entry is reported and left out.
fn list<T>(
    r: &mut Reader,
    at: &str,
    node: &Node,
    check: impl Fn(&str) -> Result<T, String>,
) -> Vec<T> {
    let Some(items) = r.list(node, at, MAX_ENTRIES) else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let at = index(at, i);
            let s = r.line(n, &at, 253)?;
            ok_or_report(r, n, &at, check(&s))
        })
        .collect()
}

/// `address[/netmask]`, as glibc's `sortlist` takes it.
fn sortlist_entry(s: &str) -> Result<String, String> {
    let (addr, mask) = s.split_once('/').map_or((s, None), |(a, m)| (a, Some(m)));
    let ok = addr.parse::<IpAddr>().is_ok()
        && mask.is_none_or(|m| {
            m.parse::<IpAddr>().is_ok() || m.parse::<u8>().is_ok_and(|n| n <= 128) || inet_aton(m)
        });
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{} is not address[/netmask] (sortlist 10.0.0.0/255.0.0.0)",
            quote(s)
        ))
    }
}

/// Whether glibc's `inet_aton` reads `s`, as its resolver reads a `sortlist` netmask: one
/// to four dot-separated numbers (decimal, `0` octal or `0x` hex), the last filling the
/// bytes left (`255` is 0.0.0.255; cloud-init's example writes `10.0.0.1/255`).
fn inet_aton(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() > 4 {
        return false;
    }
    let number = |p: &str| -> Option<u64> {
        let (digits, radix) = match p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
            Some(h) => (h, 16),
            None if p.len() > 1 && p.starts_with('0') => (&p[1..], 8),
            None => (p, 10),
        };
        if digits.is_empty() || digits.len() > 12 {
            return None;
        }
        u64::from_str_radix(digits, radix).ok()
    };
    let last = parts.len() - 1;
    parts.iter().enumerate().all(|(i, p)| {
        number(p).is_some_and(|n| {
            let max = if i == last {
                (1u64 << (8 * (4 - last))) - 1
            } else {
                255
            };
            n <= max
        })
    })
}

/// `options`: names of letters, digits, `-` and `_`; values `true`, `false`, a number or
/// a word.
fn options(r: &mut Reader, at: &str, node: &Node) -> BTreeMap<String, Opt> {
    let mut out = BTreeMap::new();
    let Value::Map(entries) = &node.value else {
        r.wrong_type(node, at, "a mapping of resolver options");
        return out;
    };
    if entries.len() > MAX_ENTRIES {
        r.error(node, at, format!("more than {MAX_ENTRIES} options"));
        return out;
    }
    let word = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    for (k, v) in entries {
        let here = join(at, &k.text);
        if !word(&k.text) {
            r.error(
                v,
                &here,
                format!("{} is not a resolver option name", quote(&k.text)),
            );
            continue;
        }
        let opt = match &v.value {
            Value::Bool(b) => Opt::Flag(*b),
            Value::Int(i) => Opt::Value(i.to_string()),
            Value::Str(s) if word(s) => Opt::Value(s.clone()),
            Value::Str(s) => {
                r.error(
                    v,
                    &here,
                    format!("{} is not a resolver option value", quote(s)),
                );
                continue;
            }
            _ => {
                r.wrong_type(v, &here, "true, false, a number or a word");
                continue;
            }
        };
        out.insert(k.text.clone(), opt);
    }
    out
}

/// The header vmcust writes atop the file.
const HEADER: &str = "# Written by vmcust: the cloud-config sets manage_resolv_conf: true.\n\
                      # It is written once per instance; to change it for good, change\n\
                      # resolv_conf in the cloud-config (or set manage_resolv_conf to false).\n\
                      #\n";

/// `/etc/resolv.conf` as cloud-init's `resolv.conf.tmpl` lays it out: the name servers,
/// a blank line, `search` and `domain`, a blank line, `sortlist` and `options` (flags
/// first, then `key:value`, each sorted; `false` flags left out). `search` and
/// `sortlist` end with a space, as cloud-init's do.
pub(crate) fn resolv_conf_text(rc: &ResolvConf) -> String {
    let mut s = HEADER.to_string();
    for n in &rc.nameservers {
        s.push_str(&format!("nameserver {n}\n"));
    }
    s.push('\n');
    if !rc.searchdomains.is_empty() {
        s.push_str("search ");
        for d in &rc.searchdomains {
            s.push_str(d.as_str());
            s.push(' ');
        }
        s.push('\n');
    }
    if let Some(d) = &rc.domain {
        s.push_str(&format!("domain {}\n", d.as_str()));
    }
    s.push('\n');
    if !rc.sortlist.is_empty() {
        s.push_str(&format!("sortlist {} \n", rc.sortlist.join(" ")));
    }
    let flags = rc
        .options
        .iter()
        .filter(|(_, o)| **o == Opt::Flag(true))
        .map(|(k, _)| k.clone());
    let values = rc.options.iter().filter_map(|(k, o)| match o {
        Opt::Value(v) => Some(format!("{k}:{v}")),
        Opt::Flag(_) => None,
    });
    let opts: Vec<String> = flags.chain(values).collect();
    if !opts.is_empty() {
        s.push_str(&format!("options {}\n", opts.join(" ")));
    }
    s
}

/// systemd-resolved's configuration as cloud-init's `systemd.resolved.conf.tmpl` has it:
/// LLMNR off, the servers and the search domains (other keys have no place there).
pub(crate) fn resolved_conf_text(rc: &ResolvConf) -> String {
    let mut s = format!("{HEADER}[Resolve]\nLLMNR=false\n");
    if !rc.nameservers.is_empty() {
        let servers: Vec<String> = rc.nameservers.iter().map(ToString::to_string).collect();
        s.push_str(&format!("DNS={}\n", servers.join(" ")));
    }
    if !rc.searchdomains.is_empty() {
        let domains: Vec<&str> = rc.searchdomains.iter().map(DnsName::as_str).collect();
        s.push_str(&format!("Domains={}\n", domains.join(" ")));
    }
    s
}

/// What the module does with this document on this root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Nothing, and why.
    Nothing(String),
    /// Write this file.
    Write(Action),
}

/// Plans the file, or says why nothing is written.
pub(crate) fn plan_resolv_conf(cfg: &CloudConfig, facts: &Facts) -> Result<Plan, ModuleError> {
    match cfg.manage_resolv_conf {
        None => {
            return Ok(Plan::Nothing(
                "manage_resolv_conf is not in the cloud-config".into(),
            ))
        }
        Some(false) => return Ok(Plan::Nothing("manage_resolv_conf is false".into())),
        Some(true) => {}
    }
    let Some(rc) = &cfg.resolv_conf else {
        return Ok(Plan::Nothing(
            "warning: manage_resolv_conf is true but resolv_conf is not given".into(),
        ));
    };
    let id = facts.os_id.as_str();
    if !DISTROS.contains(&id) {
        let id = if id.is_empty() {
            "an unknown distribution"
        } else {
            id
        };
        return Ok(Plan::Nothing(format!(
            "cloud-init's resolv_conf does not run on {id} (it runs on {})",
            DISTROS.join(", ")
        )));
    }
    let (path, text, purpose) = if RESOLVED.contains(&id) {
        (
            RESOLVED_CONF,
            resolved_conf_text(rc),
            "systemd-resolved's servers (manage_resolv_conf: true)",
        )
    } else {
        (
            RESOLV_CONF,
            resolv_conf_text(rc),
            "the resolver (manage_resolv_conf: true)",
        )
    };
    Ok(Plan::Write(Action::write_file(
        path,
        Contents::text(text),
        0o644,
        purpose,
    )))
}

/// Writes the file.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    match plan_resolv_conf(s.cfg, s.cc) {
        Err(e) => failed(e.to_string()),
        Ok(Plan::Nothing(why)) => skipped(why),
        Ok(Plan::Write(a)) => s.apply_outcome(vec![a]),
    }
}

/// The file, or why nothing.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    match plan_resolv_conf(l.cfg, l.facts) {
        Err(e) => vec![format!("fails: {e}")],
        Ok(Plan::Nothing(why)) => vec![format!("nothing: {why}")],
        Ok(Plan::Write(a)) => action_lines(&a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
    use crate::cloud_config::modules::test_support::clean_config;
    use crate::cloud_config::read::Severity;

    fn facts(os_id: &str) -> Facts {
        Facts {
            os_id: os_id.into(),
            ..Default::default()
        }
    }

    fn written(doc: &str, os_id: &str) -> Plan {
        let cfg = clean_config(doc);
        plan_resolv_conf(&cfg, &facts(os_id)).unwrap()
    }

    const FULL: &str = "manage_resolv_conf: true\nresolv_conf:\n  nameservers: [10.0.0.1, 10.0.0.2]\n  searchdomains: [a.example, b.example]\n  domain: a.example\n  sortlist: [10.0.0.0/8]\n  options: {rotate: true, edns0: false, timeout: 1, attempts: 2}\n";

    #[test]
    fn resolv_conf_is_laid_out_as_cloud_init_renders_it() {
        let Plan::Write(Action::WriteFile {
            path,
            mode,
            contents,
            ..
        }) = written(FULL, "rhel")
        else {
            panic!()
        };
        assert_eq!((path.to_str().unwrap(), mode), (RESOLV_CONF, 0o644));
        let text = String::from_utf8(contents.bytes().to_vec()).unwrap();
        let body = text.strip_prefix(HEADER).unwrap();
        assert_eq!(
            body,
            "nameserver 10.0.0.1\nnameserver 10.0.0.2\n\nsearch a.example b.example \ndomain a.example\n\nsortlist 10.0.0.0/8 \noptions rotate attempts:2 timeout:1\n"
        );
        let Plan::Write(Action::WriteFile { contents, .. }) = written(
            "manage_resolv_conf: true\nresolv_conf: {nameservers: [10.0.0.1]}\n",
            "sles",
        ) else {
            panic!()
        };
        assert!(
            String::from_utf8_lossy(contents.bytes()).ends_with("nameserver 10.0.0.1\n\n\n"),
            "{contents:?}"
        );
    }

    #[test]
    fn resolved_distributions_get_resolved_conf() {
        let Plan::Write(Action::WriteFile { path, contents, .. }) = written(FULL, "photon") else {
            panic!()
        };
        assert_eq!(path.to_str().unwrap(), RESOLVED_CONF);
        let text = String::from_utf8(contents.bytes().to_vec()).unwrap();
        assert_eq!(
            text.strip_prefix(HEADER).unwrap(),
            "[Resolve]\nLLMNR=false\nDNS=10.0.0.1 10.0.0.2\nDomains=a.example b.example\n"
        );
    }

    #[test]
    fn nothing_unless_asked_and_on_a_distribution_it_runs_on() {
        let rc = "resolv_conf: {nameservers: [10.0.0.1]}\n";
        let table: &[(String, &str, &str)] = &[
            (rc.to_string(), "rhel", "manage_resolv_conf is not in"),
            (
                format!("manage_resolv_conf: false\n{rc}"),
                "rhel",
                "manage_resolv_conf is false",
            ),
            (
                "manage_resolv_conf: true\n".into(),
                "rhel",
                "resolv_conf is not given",
            ),
            (
                format!("manage_resolv_conf: true\n{rc}"),
                "debian",
                "does not run on debian",
            ),
            (
                format!("manage_resolv_conf: true\n{rc}"),
                "rocky",
                "does not run on rocky",
            ),
            (
                format!("manage_resolv_conf: true\n{rc}"),
                "",
                "does not run on an unknown distribution",
            ),
        ];
        for (doc, os, want) in table {
            match written(doc, os) {
                Plan::Nothing(why) => assert!(why.contains(want), "{doc} on {os}: {why}"),
                other => panic!("{doc} on {os}: {other:?}"),
            }
        }
    }

    /// glibc reads a sortlist netmask with `inet_aton`, so cloud-init's example
    /// `10.0.0.1/255` is a netmask (0.0.0.255) it takes; what `inet_aton` refuses is
    /// refused here.
    #[test]
    fn sortlist_netmasks_are_what_inet_aton_reads() {
        for good in [
            "10.0.0.1/255",
            "10.0.0.0/255.0.0.0",
            "10.0.0.0/8",
            "10.0.0.0/0xff000000",
            "10.0.0.0/255.0xff00",
            "10.0.0.0/0377.0.0.0",
            "10.0.0.1",
        ] {
            assert!(sortlist_entry(good).is_ok(), "{good}");
        }
        for bad in [
            "10.0.0.0/256.0.0.0",
            "10.0.0.0/1.2.3.4.5",
            "10.0.0.0/",
            "10.0.0.0/x",
            "10.0.0.0/4294967296",
            "10.0.0.0/1.16777216",
            "10.0.0.0/255 options",
        ] {
            assert!(sortlist_entry(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hostile_values_are_refused_at_their_key() {
        let table: &[(&str, &str)] = &[
            ("manage_resolv_conf: 'yes'", "manage_resolv_conf"),
            ("resolv_conf: [a]", "resolv_conf"),
            (
                "resolv_conf: {nameservers: [dns.example]}",
                "resolv_conf.nameservers[0]",
            ),
            (
                "resolv_conf: {nameservers: [0.0.0.0]}",
                "resolv_conf.nameservers[0]",
            ),
            (
                "resolv_conf: {searchdomains: ['a b']}",
                "resolv_conf.searchdomains[0]",
            ),
            (
                "resolv_conf: {domain: \"x\\nnameserver 6.6.6.6\"}",
                "resolv_conf.domain",
            ),
            (
                "resolv_conf: {sortlist: ['10.0.0.0/8 evil']}",
                "resolv_conf.sortlist[0]",
            ),
            (
                "resolv_conf: {options: {'rotate\\nnameserver': true}}",
                "resolv_conf.options",
            ),
            (
                "resolv_conf: {options: {timeout: 'a b'}}",
                "resolv_conf.options.timeout",
            ),
            (
                "resolv_conf: {options: {timeout: [1]}}",
                "resolv_conf.options.timeout",
            ),
        ];
        for (doc, path) in table {
            let (_, p) = document::from_text(doc);
            assert!(
                p.iter()
                    .any(|p| p.severity == Severity::Error && p.path.starts_with(path)),
                "{doc}: {p:?}"
            );
        }
        let (cfg, p) = document::from_text("resolv_conf: {nameserver: [10.0.0.1]}");
        assert_eq!(p[0].severity, Severity::Unknown);
        assert_eq!(cfg.unknown[0].did_you_mean.as_deref(), Some("nameservers"));
    }
}
