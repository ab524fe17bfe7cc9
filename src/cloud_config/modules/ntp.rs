//! `ntp`: the servers, pools, peers and client asked for.
//!
//! `ntp` (cloud-init's `cc_ntp`): the client the root has — chrony, systemd-timesyncd or
//! ntp, in cloud-init's order of preference — configured with the servers and pools
//! (cloud-init's `N.<distro>.pool.ntp.org` pools when none are given), in the shape of
//! cloud-init's templates; the service is enabled and restarted in the late stage.

use crate::cloud_config::apply::driver::{absent, failed, from_end, ModuleOutcome, Step};
use crate::cloud_config::apply::error::ModuleError;
use crate::cloud_config::apply::preview::{action_lines, run_lines, Look};
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::{index, join, Reader};
use crate::cloud_config::CloudConfig;
use crate::facts::{Facts, Family, Wanted};
use crate::model::{quote, HostName};
use crate::plan::{Action, Contents};
use serde::Serialize;

/// Most NTP servers or pools.
pub(crate) const MAX_NTP: usize = 64;

/// The NTP clients cloud-init knows by name.
const CLIENTS: &[&str] = &[
    "auto",
    "chrony",
    "ntp",
    "ntpdate",
    "openntpd",
    "systemd-timesyncd",
];

/// `ntp`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ntp {
    /// Configure and enable a client (default true).
    pub enabled: bool,
    /// Which client: `auto` (the default: whichever the root has) or one of cloud-init's.
    pub ntp_client: String,
    /// Servers (host names or addresses).
    pub servers: Vec<String>,
    /// Pools.
    pub pools: Vec<String>,
    /// Peers (chrony's and ntpd's `peer`).
    pub peers: Vec<String>,
    /// Who may use this host as a server (chrony's `allow`): addresses, subnets or `all`.
    pub allow: Vec<String>,
}

/// A server or pool: a host name or an IP address.
fn server(r: &mut Reader, at: &str, node: &Node) -> Option<String> {
    let s = r.line(node, at, 253)?;
    if s.parse::<std::net::IpAddr>().is_ok() || HostName::parse(&s).is_ok() {
        Some(s)
    } else {
        r.error(
            node,
            at,
            format!("{} is not a host name or IP address", quote(&s)),
        );
        None
    }
}

/// An `allow` entry: what chrony's `allow` takes (an address, a subnet `ADDR/LEN`, a host
/// name, or `all`), nothing that could carry a second directive.
fn allowed(r: &mut Reader, at: &str, node: &Node) -> Option<String> {
    let s = r.line(node, at, 253)?;
    let subnet = s.split_once('/').is_some_and(|(addr, len)| {
        addr.parse::<std::net::IpAddr>().is_ok_and(|a| {
            let max = if a.is_ipv4() { 32 } else { 128 };
            len.parse::<u8>().is_ok_and(|l| l <= max)
        })
    });
    if s == "all" || subnet || s.parse::<std::net::IpAddr>().is_ok() || HostName::parse(&s).is_ok()
    {
        Some(s)
    } else {
        r.error(
            node,
            at,
            format!(
                "{} is not an address, subnet (ADDR/LEN), host name or all",
                quote(&s)
            ),
        );
        None
    }
}

/// A list of servers, pools or peers (`entry` = [`server`]) or of `allow` entries.
fn servers(r: &mut Reader, at: &str, node: &Node) -> Vec<String> {
    hosts(r, at, node, server)
}

fn hosts(
    r: &mut Reader,
    at: &str,
    node: &Node,
    entry: fn(&mut Reader, &str, &Node) -> Option<String>,
) -> Vec<String> {
    let Some(items) = r.list(node, at, MAX_NTP) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for (i, n) in items.iter().enumerate() {
        if let Some(s) = entry(r, &index(at, i), n) {
            if out.contains(&s) {
                r.error(n, &index(at, i), format!("{} is listed twice", quote(&s)));
            } else {
                out.push(s);
            }
        }
    }
    out
}

/// `ntp`: null (defaults) or a mapping.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    let mut ntp = Ntp {
        enabled: true,
        ntp_client: "auto".into(),
        servers: Vec::new(),
        pools: Vec::new(),
        peers: Vec::new(),
        allow: Vec::new(),
    };
    if !matches!(node.value, Value::Null) {
        let known = [
            "enabled",
            "ntp_client",
            "servers",
            "pools",
            "peers",
            "allow",
        ];
        let Some(map) = r.map(node, key, &known) else {
            return;
        };
        let mut unknown_client = false;
        for (k, v) in map {
            let at = join(key, &k.text);
            match k.text.as_str() {
                "enabled" => ntp.enabled = r.bool(v, &at).unwrap_or(true),
                "ntp_client" => {
                    if let Some(c) = r.line(v, &at, 64) {
                        if CLIENTS.contains(&c.as_str()) {
                            ntp.ntp_client = c;
                        } else {
                            // cloud-init takes any name, and then needs `ntp.config` to
                            // say what the client is; without it the module fails and the
                            // rest of the document applies. vmcust does not take `config`:
                            // ntp is not applied, the rest is.
                            let meant = vmcust_imc::closest(&c, CLIENTS.iter().copied())
                                .map_or(String::new(), |m| format!("; did you mean {m}?"));
                            r.not_applied(
                                v,
                                &at,
                                &format!("{} is not a client vmcust configures (cloud-init needs ntp.config for it)", quote(&c)),
                                &format!("write auto, chrony, systemd-timesyncd or ntp, or write the client's own file with write_files:{meant}"),
                            );
                            unknown_client = true;
                        }
                    }
                }
                "servers" => ntp.servers = servers(r, &at, v),
                "pools" => ntp.pools = servers(r, &at, v),
                "peers" => ntp.peers = servers(r, &at, v),
                "allow" => ntp.allow = hosts(r, &at, v, allowed),
                _ => unreachable!("map() keeps only the known keys"),
            }
        }
        if unknown_client {
            return;
        }
    }
    cfg.ntp = Some(ntp);
}

/// The NTP clients vmcust configures, in cloud-init's order of preference
/// (`PREFERRED_NTP_CLIENTS`, without `ntpdate`, which keeps no running service).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Client {
    /// chrony.
    Chrony,
    /// systemd-timesyncd.
    Timesyncd,
    /// The reference ntpd.
    Ntp,
}

impl Client {
    /// cloud-init's name for it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Client::Chrony => "chrony",
            Client::Timesyncd => "systemd-timesyncd",
            Client::Ntp => "ntp",
        }
    }

    /// The program whose presence says the client is installed (cloud-init's `check_exe`).
    fn program(self) -> &'static str {
        match self {
            Client::Chrony => "chronyd",
            Client::Timesyncd => "systemd-timesyncd",
            Client::Ntp => "ntpd",
        }
    }

    /// Its configuration file on `family`.
    pub(crate) fn config_path(self, family: Family) -> &'static str {
        match (self, family) {
            (Client::Chrony, Family::Debian) => "/etc/chrony/chrony.conf",
            (Client::Chrony, _) => "/etc/chrony.conf",
            (Client::Timesyncd, Family::Debian) => "/etc/systemd/timesyncd.conf.d/cloud-init.conf",
            (Client::Timesyncd, _) => "/etc/systemd/timesyncd.conf",
            (Client::Ntp, _) => "/etc/ntp.conf",
        }
    }

    /// Its systemd service on `family`.
    pub(crate) fn service(self, family: Family) -> &'static str {
        match (self, family) {
            (Client::Chrony, Family::Debian) => "chrony",
            (Client::Chrony, _) => "chronyd",
            (Client::Timesyncd, _) => "systemd-timesyncd",
            (Client::Ntp, Family::Debian) => "ntp",
            (Client::Ntp, _) => "ntpd",
        }
    }
}

/// What `ntp` does: the configuration file, then the late-stage commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NtpPlan {
    /// The client chosen.
    pub client: Client,
    /// The configuration file.
    pub actions: Vec<Action>,
    /// `systemctl enable` and `systemctl reload-or-restart` of its service.
    pub commands: Vec<Vec<String>>,
}

/// Plans `cfg.ntp`; `None` without it or with `enabled: false`.
pub(crate) fn plan_ntp(cfg: &CloudConfig, facts: &Facts) -> Result<Option<NtpPlan>, ModuleError> {
    let Some(ntp) = cfg.ntp.as_ref().filter(|n| n.enabled) else {
        return Ok(None);
    };
    let all = [Client::Chrony, Client::Timesyncd, Client::Ntp];
    let client = match ntp.ntp_client.as_str() {
        "auto" => all
            .into_iter()
            .find(|c| facts.has(c.program()))
            .ok_or_else(|| ModuleError::NoNtpClient {
                wanted: "chrony, systemd-timesyncd or ntp".into(),
            })?,
        name => {
            let c = all
                .into_iter()
                .find(|c| c.name() == name)
                .ok_or_else(|| ModuleError::NtpClientNotSupported(name.to_string()))?;
            if !facts.has(c.program()) {
                return Err(ModuleError::NoNtpClient {
                    wanted: name.to_string(),
                });
            }
            c
        }
    };
    // What the client's configuration cannot say is refused, not dropped as cloud-init's
    // templates drop it: timesyncd has no peers and no serving, ntpd's `restrict` is not
    // chrony's `allow`.
    let unsupported = match client {
        Client::Chrony => None,
        Client::Timesyncd if !ntp.peers.is_empty() => Some("peers"),
        Client::Timesyncd | Client::Ntp if !ntp.allow.is_empty() => Some("allow"),
        Client::Timesyncd | Client::Ntp => None,
    };
    if let Some(option) = unsupported {
        return Err(ModuleError::NtpOptionNotSupported {
            option,
            client: client.name(),
        });
    }
    let pools = if ntp.servers.is_empty() && ntp.pools.is_empty() {
        default_pools(&facts.os_id)
    } else {
        ntp.pools.clone()
    };
    let hosts = Hosts {
        servers: &ntp.servers,
        pools: &pools,
        peers: &ntp.peers,
        allow: &ntp.allow,
    };
    let text = match client {
        Client::Chrony => chrony_conf(facts.family, &hosts),
        Client::Timesyncd => timesyncd_conf(&hosts),
        Client::Ntp => ntp_conf(&hosts),
    };
    let service = client.service(facts.family).to_string();
    let systemctl = |verb: &str| vec!["systemctl".to_string(), verb.to_string(), service.clone()];
    Ok(Some(NtpPlan {
        client,
        actions: vec![Action::write_file(
            client.config_path(facts.family),
            Contents::text(text),
            0o644,
            "cloud-config ntp",
        )],
        commands: vec![systemctl("enable"), systemctl("reload-or-restart")],
    }))
}

/// cloud-init's `generate_server_names`: `0..3.<distro>.pool.ntp.org` (SLES uses
/// openSUSE's pools; an unknown distribution the global ones).
pub(crate) fn default_pools(os_id: &str) -> Vec<String> {
    let distro = match os_id {
        "sles" => "opensuse",
        "" | "alpine" | "eurolinux" => "",
        other => other,
    };
    (0..4)
        .map(|n| match distro {
            "" => format!("{n}.pool.ntp.org"),
            d => format!("{n}.{d}.pool.ntp.org"),
        })
        .collect()
}

const HEADER: &str = "# Written by vmcust from the cloud-config's ntp key.\n";

/// What a client's configuration lists (each entry validated by the reader: a host name,
/// an address or, for `allow`, a subnet or `all`; none can carry a second directive).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hosts<'a> {
    /// Servers.
    pub servers: &'a [String],
    /// Pools (cloud-init's defaults when neither servers nor pools were given).
    pub pools: &'a [String],
    /// Peers.
    pub peers: &'a [String],
    /// chrony's `allow`.
    pub allow: &'a [String],
}

/// chrony.conf in the shape of cloud-init's `chrony.conf.<distro>` templates.
pub(crate) fn chrony_conf(family: Family, h: &Hosts<'_>) -> String {
    let mut s = String::from(HEADER);
    if !h.pools.is_empty() {
        s.push_str("# pools\n");
        for p in h.pools {
            s.push_str(&format!("pool {p} iburst\n"));
        }
    }
    if !h.servers.is_empty() {
        s.push_str("# servers\n");
        for p in h.servers {
            s.push_str(&format!("server {p} iburst\n"));
        }
    }
    for p in h.peers {
        s.push_str(&format!("peer {p}\n"));
    }
    for a in h.allow {
        s.push_str(&format!("allow {a}\n"));
    }
    s.push('\n');
    s.push_str(match family {
        Family::Debian => {
            "keyfile /etc/chrony/chrony.keys\ndriftfile /var/lib/chrony/chrony.drift\n\
             logdir /var/log/chrony\nmaxupdateskew 100.0\nrtcsync\nmakestep 1 3\n"
        }
        _ => {
            "driftfile /var/lib/chrony/drift\nmakestep 1.0 3\nrtcsync\n\
             logdir /var/log/chrony\n"
        }
    });
    s
}

/// A timesyncd drop-in in the shape of cloud-init's `timesyncd.conf` template (no peers,
/// no `allow`: [`plan_ntp`] refuses them for timesyncd).
pub(crate) fn timesyncd_conf(h: &Hosts<'_>) -> String {
    let all: Vec<&str> = h
        .servers
        .iter()
        .chain(h.pools)
        .map(String::as_str)
        .collect();
    format!(
        "{HEADER}# See timesyncd.conf(5) for details.\n\n[Time]\nNTP={}\n",
        all.join(" ")
    )
}

/// ntp.conf in the shape of cloud-init's `ntp.conf.<distro>` templates (no `allow`:
/// [`plan_ntp`] refuses it for ntpd).
pub(crate) fn ntp_conf(h: &Hosts<'_>) -> String {
    let mut s = String::from(HEADER);
    s.push_str(
        "driftfile /var/lib/ntp/ntp.drift\n\
         restrict -4 default kod notrap nomodify nopeer noquery limited\n\
         restrict -6 default kod notrap nomodify nopeer noquery limited\n\
         restrict 127.0.0.1\nrestrict ::1\nrestrict source notrap nomodify noquery\n",
    );
    for p in h.pools {
        s.push_str(&format!("pool {p} iburst\n"));
    }
    for p in h.servers {
        s.push_str(&format!("server {p} iburst\n"));
    }
    for p in h.peers {
        s.push_str(&format!("peer {p}\n"));
    }
    s
}

/// The clients it looks for, and the service manager that restarts them.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if cfg.ntp.is_some() {
        &["chronyd", "ntpd", "systemctl"]
    } else {
        &[]
    }
}

/// Writes the client's configuration, then restarts it.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    match plan_ntp(s.cfg, s.cc) {
        Err(e) => failed(e.to_string()),
        Ok(None) => absent("ntp (enabled)"),
        Ok(Some(p)) => match s.apply(p.actions) {
            Err(e) => failed(e),
            Ok(note) => from_end(
                s.follow_up("ntp", &p.commands),
                format!("{}: {note}", p.client.name()),
            ),
        },
    }
}

/// The client, its files and commands.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    match plan_ntp(l.cfg, l.facts) {
        Err(e) => vec![format!("fails: {e}")],
        Ok(None) => vec!["nothing: no ntp, or enabled: false".into()],
        Ok(Some(p)) => std::iter::once(format!("client {}", p.client.name()))
            .chain(p.actions.iter().flat_map(action_lines))
            .chain(run_lines(&p.commands))
            .collect(),
    }
}

/// What it needs of the root's facts beyond its programs on `PATH`: where systemd keeps
/// `systemd-timesyncd`.
pub(crate) fn wants(cfg: &CloudConfig, w: &mut Wanted) {
    if cfg.ntp.is_some() {
        w.programs.insert("systemd-timesyncd".into());
    }
}

#[cfg(test)]
mod tests {
    use crate::cloud_config::document;
    use crate::cloud_config::read::Severity;

    #[test]
    fn ntp_and_timezone_good_and_hostile() {
        let (cfg, p) = document::from_text("ntp:\n  enabled: true\n  ntp_client: chrony\n  servers: [ntp.example.com, 192.0.2.1]\n  pools: [0.pool.ntp.org]\ntimezone: Europe/Berlin\n");
        assert!(p.is_empty(), "{p:?}");
        let n = cfg.ntp.unwrap();
        assert_eq!(
            (n.ntp_client.as_str(), n.servers.len(), n.pools.len()),
            ("chrony", 2, 1)
        );
        assert_eq!(cfg.timezone.unwrap().as_str(), "Europe/Berlin");
        let (cfg, p) = document::from_text("ntp: ~");
        assert!(p.is_empty());
        assert_eq!(cfg.ntp.unwrap().ntp_client, "auto");
        let table: &[(&str, &str)] = &[
            ("timezone: Asia/Tokio", "did you mean Asia/Tokyo?"),
            ("timezone: ../../etc/passwd", "timezone"),
            ("timezone: 5", "is an integer"),
            ("ntp: {servers: ['bad host']}", "ntp.servers[0]"),
            ("ntp: {servers: [a.example, a.example]}", "listed twice"),
            ("ntp: {enabled: 1}", "ntp.enabled: is an integer"),
            ("ntp: [a]", "is a list; write a mapping"),
            ("ntp: {peers: ['peer x; server y']}", "ntp.peers[0]"),
            (
                "ntp: {allow: ['10.0.0.0/33']}",
                "ntp.allow[0]: \"10.0.0.0/33\" is not",
            ),
            ("ntp: {allow: [\"all\\nport 1\"]}", "ntp.allow[0]"),
            ("ntp: {allow: [a, a]}", "listed twice"),
        ];
        super::super::test_support::assert_refused(table);
        let (cfg, p) = document::from_text(
            "ntp: {peers: [peer.example, 192.0.2.7], allow: [all, 10.0.0.0/8, 'fd00::/64', 192.0.2.9]}",
        );
        assert!(p.is_empty(), "{p:?}");
        let n = cfg.ntp.unwrap();
        assert_eq!(n.peers, ["peer.example", "192.0.2.7"]);
        assert_eq!(n.allow, ["all", "10.0.0.0/8", "fd00::/64", "192.0.2.9"]);
        let (_, p) = document::from_text("ntp: {peer: [x]}");
        assert_eq!(
            (p[0].severity, p[0].path.as_str()),
            (Severity::Unknown, "ntp.peer")
        );
    }

    use super::*;

    fn facts(family: Family, os_id: &str, programs: &[&str]) -> Facts {
        Facts {
            family,
            os_id: os_id.into(),
            programs: programs
                .iter()
                .map(|p| (p.to_string(), format!("/usr/sbin/{p}")))
                .collect(),
            ..Default::default()
        }
    }

    fn file(p: &NtpPlan) -> (String, String) {
        match &p.actions[0] {
            Action::WriteFile { path, contents, .. } => {
                (path.display().to_string(), contents.display().into_owned())
            }
            other => panic!("{other:?}"),
        }
    }

    /// cloud-init's schema takes any client name (its example: `myntpclient` with a
    /// `config`); cloud-init's module then needs `config`. vmcust does not take `config`:
    /// ntp is not applied, named with the nearest client, and the rest of the document is.
    #[test]
    fn any_client_name_is_taken_and_ntp_is_then_not_applied() {
        for (doc, meant) in [
            (
                "ntp: {ntp_client: myntpclient, servers: [ntp.example.com]}\nruncmd: [ls]",
                None,
            ),
            ("ntp: {ntp_client: crony}\nruncmd: [ls]", Some("chrony")),
        ] {
            let (cfg, p) = document::from_text(doc);
            assert!(
                p.iter().all(|p| p.severity != Severity::Error),
                "{doc}: {p:?}"
            );
            assert_eq!(cfg.ntp, None, "{doc}");
            assert_eq!(cfg.runcmd.len(), 1, "{doc}");
            let u = &cfg.unknown[0];
            assert_eq!(
                (
                    u.key.as_str(),
                    u.cloud_init_knows,
                    u.did_you_mean.as_deref()
                ),
                ("ntp.ntp_client", true, meant),
                "{doc}"
            );
            assert!(p[0].message.contains("not applied"), "{doc}: {p:?}");
        }
        // With `config`, as cloud-init's example writes it: both named.
        let (cfg, p) = document::from_text(
            "ntp: {ntp_client: myntpclient, config: {confpath: /etc/x.conf, check_exe: x, service_name: x}}",
        );
        assert!(p.iter().all(|p| p.severity == Severity::Unknown), "{p:?}");
        let keys: Vec<&str> = cfg.unknown.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["ntp.config", "ntp.ntp_client"]);
        assert!(cfg.unknown.iter().all(|u| u.cloud_init_knows));
    }

    #[test]
    fn client_choice_and_files() {
        let deb = facts(Family::Debian, "debian", &["chronyd", "systemd-timesyncd"]);
        let (cfg, _) =
            document::from_text("ntp: {servers: [ntp.example.com], pools: [pool.example.org]}");
        let p = plan_ntp(&cfg, &deb).unwrap().unwrap();
        assert_eq!(p.client, Client::Chrony);
        let (path, text) = file(&p);
        assert_eq!(path, "/etc/chrony/chrony.conf");
        assert!(
            text.starts_with(&format!("{HEADER}# pools\npool pool.example.org iburst\n# servers\nserver ntp.example.com iburst\n\nkeyfile /etc/chrony/chrony.keys\n")),
            "{text}"
        );
        assert_eq!(
            p.commands,
            [
                ["systemctl", "enable", "chrony"],
                ["systemctl", "reload-or-restart", "chrony"]
            ]
        );

        let only_timesyncd = facts(Family::Debian, "debian", &["systemd-timesyncd"]);
        let (cfg, _) = document::from_text("ntp: {}");
        let p = plan_ntp(&cfg, &only_timesyncd).unwrap().unwrap();
        let (path, text) = file(&p);
        assert_eq!(path, "/etc/systemd/timesyncd.conf.d/cloud-init.conf");
        assert!(text.ends_with("[Time]\nNTP=0.debian.pool.ntp.org 1.debian.pool.ntp.org 2.debian.pool.ntp.org 3.debian.pool.ntp.org\n"), "{text}");

        let rhel = facts(Family::Rhel, "rocky", &["chronyd", "ntpd"]);
        let (cfg, _) = document::from_text("ntp: {ntp_client: ntp, servers: [192.0.2.1]}");
        let p = plan_ntp(&cfg, &rhel).unwrap().unwrap();
        let (path, text) = file(&p);
        assert_eq!(path, "/etc/ntp.conf");
        assert!(text.ends_with("server 192.0.2.1 iburst\n"), "{text}");
        assert_eq!(p.commands[1][2], "ntpd");

        for (doc, f, want) in [
            (
                "ntp: {}",
                facts(Family::Debian, "debian", &[]),
                "no NTP client",
            ),
            (
                "ntp: {ntp_client: chrony}",
                only_timesyncd.clone(),
                "no NTP client (chrony)",
            ),
            (
                "ntp: {ntp_client: openntpd}",
                deb.clone(),
                "not configured by vmcust",
            ),
        ] {
            let (cfg, _) = document::from_text(doc);
            let e = plan_ntp(&cfg, &f).unwrap_err().to_string();
            assert!(e.contains(want), "{doc}: {e}");
        }
        let (cfg, _) = document::from_text(
            "ntp: {servers: [ntp.example.com], peers: [peer.example], allow: [10.0.0.0/8]}",
        );
        let (_, text) = file(&plan_ntp(&cfg, &deb).unwrap().unwrap());
        assert!(
            text.contains("server ntp.example.com iburst\npeer peer.example\nallow 10.0.0.0/8\n\n"),
            "{text}"
        );
        let (cfg, _) = document::from_text("ntp: {ntp_client: ntp, peers: [peer.example]}");
        let (_, text) = file(&plan_ntp(&cfg, &rhel).unwrap().unwrap());
        assert!(text.ends_with("peer peer.example\n"), "{text}");
        for (doc, f, want) in [
            (
                "ntp: {peers: [peer.example]}",
                &only_timesyncd,
                "ntp.peers: systemd-timesyncd cannot",
            ),
            (
                "ntp: {ntp_client: ntp, allow: [all]}",
                &rhel,
                "ntp.allow: ntp cannot",
            ),
        ] {
            let (cfg, _) = document::from_text(doc);
            let e = plan_ntp(&cfg, f).unwrap_err().to_string();
            assert!(e.contains(want), "{doc}: {e}");
        }
        let (cfg, _) = document::from_text("ntp: {enabled: false}");
        assert_eq!(plan_ntp(&cfg, &deb).unwrap(), None);
        assert_eq!(default_pools("sles")[0], "0.opensuse.pool.ntp.org");
        assert_eq!(default_pools("")[3], "3.pool.ntp.org");
    }
}
