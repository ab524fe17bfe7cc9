//! The network tests' part of the harness: the example specs, rendering them for each
//! renderer into a scratch root, small parsers that read back what each renderer wrote
//! (addresses, routes, DNS) so the tests can compare renderers, and network namespaces.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use vmcust::test_api::apply::apply;
use vmcust::test_api::facts::NetworkFacts;
use vmcust::test_api::model::{Ipv4Config, Ipv6Config, Network};
use vmcust::test_api::network::{plan_network, Renderer};
use vmcust::test_api::plan::{Action, Plan};
use vmcust::test_api::renderers::TABLE;
use vmcust::test_api::root::Root;

use super::{files, repo, run};

/// Every renderer, in the renderer table's order: a new entry is tested by every test
/// that goes through them all.
pub fn renderers() -> impl Iterator<Item = Renderer> {
    TABLE.iter().map(|e| e.renderer)
}

/// The bundled example specs that configure a network, by file stem.
pub fn specs() -> Vec<(String, Network)> {
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = fs::read_dir(repo().join("examples/specs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cfg"))
        .collect();
    paths.sort();
    for path in paths {
        let parsed = vmcust_imc::Spec::parse(&fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let c = vmcust::test_api::imc::customization(&parsed.spec).unwrap();
        if let Some(net) = c.network {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((stem, net));
        }
    }
    assert!(out.len() >= 3, "expected the example specs with networks");
    out
}

/// The network facts of the bundled template root (its devices carry the examples'
/// MACs; it runs no recognised stack, so the renderer is always given).
pub fn example_facts() -> NetworkFacts {
    let root = Root::new(&repo().join("examples/root")).unwrap();
    NetworkFacts::gather(&root).unwrap()
}

/// The network actions for `net` with `renderer` on the example root.
pub fn render(net: &Network, renderer: Renderer) -> Vec<Action> {
    plan_network(net, &example_facts(), Some(renderer)).unwrap()
}

/// `net` rendered with `renderer` and applied to an empty scratch root.
pub fn render_tree(net: &Network, renderer: Renderer) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path()).unwrap();
    let plan = Plan {
        actions: render(net, renderer),
    };
    apply(&root, &plan).unwrap();
    dir
}

/// What a configuration says, independent of its syntax.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Per interface (by lower-case MAC): addresses with prefix.
    pub addresses: BTreeMap<String, BTreeSet<String>>,
    /// Per interface: routes as (destination, gateway, metric).
    pub routes: BTreeMap<String, BTreeSet<(String, String, Option<u32>)>>,
    /// Name servers anywhere in the configuration.
    pub dns: BTreeSet<String>,
    /// Search domains anywhere in the configuration.
    pub search: BTreeSet<String>,
}

impl Summary {
    fn iface(&mut self, mac: &str) {
        self.addresses.entry(mac.to_lowercase()).or_default();
        self.routes.entry(mac.to_lowercase()).or_default();
    }
    fn address(&mut self, mac: &str, a: &str) {
        self.iface(mac);
        self.addresses
            .get_mut(&mac.to_lowercase())
            .unwrap()
            .insert(a.to_string());
    }
    fn route(&mut self, mac: &str, to: &str, via: &str, metric: Option<u32>) {
        self.iface(mac);
        let to = match to {
            "default" if via.contains(':') => "::/0",
            "default" => "0.0.0.0/0",
            t => t,
        };
        self.routes.get_mut(&mac.to_lowercase()).unwrap().insert((
            to.to_string(),
            via.to_string(),
            metric,
        ));
    }
}

/// What the model asks for, as the parsers should read it back.
pub fn expected(net: &Network) -> Summary {
    let mut s = Summary::default();
    for i in &net.interfaces {
        let mac = i.mac.to_string();
        s.iface(&mac);
        if let Ipv4Config::Static(nets) = &i.ip.ipv4 {
            nets.iter().for_each(|n| s.address(&mac, &n.to_string()));
        }
        if let Ipv6Config::Static(nets) = &i.ip.ipv6 {
            nets.iter().for_each(|n| s.address(&mac, &n.to_string()));
        }
        for r in &i.ip.routes {
            s.route(&mac, &r.to.to_string(), &r.via.to_string(), r.metric);
        }
        s.dns.extend(i.ip.dns.servers.iter().map(|d| d.to_string()));
        s.search
            .extend(i.ip.dns.search.iter().map(|d| d.to_string()));
    }
    s.dns.extend(net.dns.servers.iter().map(|d| d.to_string()));
    s.search
        .extend(net.dns.search.iter().map(|d| d.to_string()));
    s
}

/// Reads back the tree one renderer wrote. `names` maps device names to MACs for the
/// formats that name devices only (ENI, route files, SUSE's files).
pub fn parse(renderer: Renderer, tree: &Path, names: &BTreeMap<String, String>) -> Summary {
    let files = files(tree);
    let mut s = Summary::default();
    for (path, text) in &files {
        let p = path.to_string_lossy();
        match renderer {
            Renderer::Netplan if p.starts_with("etc/netplan/") => parse_netplan(text, &mut s),
            Renderer::Networkd if p.ends_with(".network") => parse_networkd(text, &mut s),
            Renderer::NetworkManager if p.ends_with(".nmconnection") => parse_nm(text, &mut s),
            Renderer::Sysconfig if p.contains("/ifcfg-") => parse_ifcfg(text, &mut s),
            Renderer::Sysconfig if p.contains("/route") => parse_route_file(text, names, &mut s),
            Renderer::Eni if p.starts_with("etc/network/interfaces.d/") => {
                parse_eni(text, names, &mut s)
            }
            Renderer::Suse => {
                if let Some(dev) = p.strip_prefix("etc/sysconfig/network/ifcfg-") {
                    parse_suse_ifcfg(text, &names[dev], &mut s);
                } else if p.starts_with("etc/sysconfig/network/ifroute-") {
                    parse_suse_ifroute(text, names, &mut s);
                } else if p == "etc/sysconfig/network/config" {
                    parse_netconfig(text, &mut s);
                }
            }
            _ if p == "etc/resolv.conf" => parse_resolv(text, &mut s),
            _ => {}
        }
    }
    s
}

fn parse_netplan(text: &str, s: &mut Summary) {
    let doc: serde_norway::Value = serde_norway::from_str(text).unwrap();
    let eths = doc["network"]["ethernets"].as_mapping().unwrap();
    for (_, e) in eths {
        let mac = e["match"]["macaddress"].as_str().unwrap();
        s.iface(mac);
        for a in e["addresses"].as_sequence().into_iter().flatten() {
            s.address(mac, a.as_str().unwrap());
        }
        for r in e["routes"].as_sequence().into_iter().flatten() {
            let metric = r["metric"].as_u64().map(|m| m as u32);
            s.route(
                mac,
                r["to"].as_str().unwrap(),
                r["via"].as_str().unwrap(),
                metric,
            );
        }
        let ns = &e["nameservers"];
        for a in ns["addresses"].as_sequence().into_iter().flatten() {
            s.dns.insert(a.as_str().unwrap().to_string());
        }
        for d in ns["search"].as_sequence().into_iter().flatten() {
            s.search.insert(d.as_str().unwrap().to_string());
        }
    }
}

/// `(section, key, value)` of an INI-style file, comments skipped.
fn ini(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
        } else if let Some((k, v)) = line.split_once('=') {
            out.push((section.clone(), k.to_string(), v.to_string()));
        }
    }
    out
}

/// Reads back networkd `.network` files (ours, or those netplan generates).
pub fn parse_networkd(text: &str, s: &mut Summary) {
    let entries = ini(text);
    let mac = entries
        .iter()
        .find(|(sec, k, _)| sec == "Match" && k.ends_with("MACAddress"))
        .map(|e| e.2.clone())
        .unwrap();
    s.iface(&mac);
    let mut route: Option<(String, String, Option<u32>)> = None;
    let flush = |route: &mut Option<(String, String, Option<u32>)>, s: &mut Summary| {
        if let Some((to, via, m)) = route.take() {
            s.route(&mac, &to, &via, m);
        }
    };
    let mut last_section = String::new();
    for (sec, k, v) in &entries {
        if *sec != last_section || (sec == "Route" && k == "Destination") {
            flush(&mut route, s);
        }
        last_section = sec.clone();
        match (sec.as_str(), k.as_str()) {
            ("Network", "Address") => s.address(&mac, v),
            ("Network", "DNS") => {
                s.dns.insert(v.clone());
            }
            ("Network", "Domains") => s.search.extend(v.split_whitespace().map(String::from)),
            ("Route", "Destination") => route = Some((v.clone(), String::new(), None)),
            ("Route", "Gateway") => route.as_mut().unwrap().1 = v.clone(),
            ("Route", "Metric") => route.as_mut().unwrap().2 = Some(v.parse().unwrap()),
            _ => {}
        }
    }
    flush(&mut route, s);
}

/// Reads back a NetworkManager keyfile.
pub fn parse_nm(text: &str, s: &mut Summary) {
    let entries = ini(text);
    let mac = entries
        .iter()
        .find(|(sec, k, _)| sec == "ethernet" && k == "mac-address")
        .map(|e| e.2.clone())
        .unwrap();
    s.iface(&mac);
    for (sec, k, v) in &entries {
        if sec != "ipv4" && sec != "ipv6" {
            continue;
        }
        if k.starts_with("address") {
            s.address(&mac, v.split(',').next().unwrap());
        } else if k.starts_with("route") && k[5..].chars().all(|c| c.is_ascii_digit()) {
            let parts: Vec<&str> = v.split(',').collect();
            s.route(
                &mac,
                parts[0],
                parts[1],
                parts.get(2).map(|m| m.parse().unwrap()),
            );
        } else if k == "dns" {
            s.dns
                .extend(v.split(';').filter(|d| !d.is_empty()).map(String::from));
        } else if k == "dns-search" {
            s.search
                .extend(v.split(';').filter(|d| !d.is_empty()).map(String::from));
        }
    }
}

/// The variables a shell-sourced file sets, as bash itself reads them (the way RHEL's
/// network scripts and SUSE's wicked helpers read them): `env -i bash` sources the file
/// with `set -a` and prints its environment. Sourcing must not fail or print anything.
pub fn sourced_vars(text: &str) -> BTreeMap<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sourced");
    fs::write(&file, text).unwrap();
    let out = std::process::Command::new("env")
        .args([
            "-i",
            "bash",
            "--noprofile",
            "--norc",
            "-c",
            "set -a; . \"$1\"; env -0",
            "_",
        ])
        .arg(&file)
        .current_dir(dir.path())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "sourcing failed: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "sourcing made a file"
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| !matches!(*k, "PWD" | "SHLVL" | "_" | "OLDPWD"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn parse_ifcfg(text: &str, s: &mut Summary) {
    let owned = sourced_vars(text);
    let vars: BTreeMap<&str, &str> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mac = vars["HWADDR"];
    s.iface(mac);
    for (k, v) in &vars {
        if let Some(idx) = k.strip_prefix("IPADDR") {
            s.address(
                mac,
                &format!("{v}/{}", vars[format!("PREFIX{idx}").as_str()]),
            );
        } else if *k == "IPV6ADDR" {
            s.address(mac, v);
        } else if *k == "IPV6ADDR_SECONDARIES" {
            v.split_whitespace().for_each(|a| s.address(mac, a));
        } else if k.starts_with("DNS") && k[3..].chars().all(|c| c.is_ascii_digit()) {
            s.dns.insert(v.to_string());
        } else if *k == "DOMAIN" {
            s.search.extend(v.split_whitespace().map(String::from));
        }
    }
    let metric = |k: &str| vars.get(k).map(|m| m.parse().unwrap());
    if let Some(gw) = vars.get("GATEWAY") {
        s.route(mac, "0.0.0.0/0", gw, metric("IPV4_ROUTE_METRIC"));
    }
    if let Some(gw) = vars.get("IPV6_DEFAULTGW") {
        s.route(mac, "::/0", gw, metric("IPV6_ROUTE_METRIC"));
    }
}

/// `up ip route add`-style arguments: `<to> via <gw> dev <name> [metric <m>]`.
fn ip_route_args(words: &[&str], names: &BTreeMap<String, String>, s: &mut Summary) {
    let after = |w: &str| words.iter().position(|x| *x == w).map(|i| words[i + 1]);
    let mac = &names[after("dev").unwrap()];
    let metric = after("metric").map(|m| m.parse().unwrap());
    s.route(mac, words[0], after("via").unwrap(), metric);
}

fn parse_route_file(text: &str, names: &BTreeMap<String, String>, s: &mut Summary) {
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let words: Vec<&str> = line.split_whitespace().collect();
        ip_route_args(&words, names, s);
    }
}

fn parse_eni(text: &str, names: &BTreeMap<String, String>, s: &mut Summary) {
    let mut current: Option<(String, bool)> = None; // (mac, inet6)
    let mut gateway: Option<(String, String, Option<u32>)> = None;
    let flush = |gw: &mut Option<(String, String, Option<u32>)>, s: &mut Summary| {
        if let Some((mac, via, m)) = gw.take() {
            let to = if via.contains(':') {
                "::/0"
            } else {
                "0.0.0.0/0"
            };
            s.route(&mac, to, &via, m);
        }
    };
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["iface", name, family, _] => {
                flush(&mut gateway, s);
                let mac = names[*name].clone();
                s.iface(&mac);
                current = Some((mac, *family == "inet6"));
            }
            ["address", a] => s.address(&current.as_ref().unwrap().0, a),
            ["gateway", g] => {
                gateway = Some((current.as_ref().unwrap().0.clone(), g.to_string(), None))
            }
            ["metric", m] => gateway.as_mut().unwrap().2 = Some(m.parse().unwrap()),
            ["up", "ip", "route", "add", rest @ ..] => ip_route_args(rest, names, s),
            ["dns-nameservers", rest @ ..] => s.dns.extend(rest.iter().map(|d| d.to_string())),
            ["dns-search", rest @ ..] => s.search.extend(rest.iter().map(|d| d.to_string())),
            _ => {}
        }
    }
    flush(&mut gateway, s);
}

fn parse_resolv(text: &str, s: &mut Summary) {
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["nameserver", n] => {
                s.dns.insert(n.to_string());
            }
            ["search", rest @ ..] => s.search.extend(rest.iter().map(|d| d.to_string())),
            _ => {}
        }
    }
}

/// SUSE's `ifcfg-<dev>`: every `IPADDR*` holds an address with its prefix.
fn parse_suse_ifcfg(text: &str, mac: &str, s: &mut Summary) {
    s.iface(mac);
    for (k, v) in sourced_vars(text) {
        if k.starts_with("IPADDR") {
            s.address(mac, &v);
        }
    }
}

/// SUSE's `ifroute-<dev>`: `DESTINATION GATEWAY NETMASK INTERFACE [metric N]`.
fn parse_suse_ifroute(text: &str, names: &BTreeMap<String, String>, s: &mut Summary) {
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[2], "-", "netmask column of {line:?}");
        let metric = match &words[4..] {
            [] => None,
            ["metric", m] => Some(m.parse().unwrap()),
            other => panic!("unexpected options {other:?} in {line:?}"),
        };
        s.route(&names[words[3]], words[0], words[1], metric);
    }
}

/// netconfig's static DNS keys in `/etc/sysconfig/network/config`.
fn parse_netconfig(text: &str, s: &mut Summary) {
    for (k, v) in sourced_vars(text) {
        let v = v.as_str();
        match k.as_str() {
            "NETCONFIG_DNS_STATIC_SERVERS" => s.dns.extend(v.split_whitespace().map(String::from)),
            "NETCONFIG_DNS_STATIC_SEARCHLIST" => {
                s.search.extend(v.split_whitespace().map(String::from))
            }
            _ => {}
        }
    }
}

/// Device name → lower-case MAC on the example root.
pub fn example_names() -> BTreeMap<String, String> {
    example_facts()
        .devices
        .unwrap()
        .into_iter()
        .map(|(mac, name)| (name, mac.to_string()))
        .collect()
}

/// A network namespace that is deleted, with its devices, when dropped — also when an
/// assertion fails half-way.
pub struct Netns(pub String);

impl Netns {
    /// A fresh namespace named after the test and this process.
    pub fn new(test: &str) -> Netns {
        let name = format!("vmcust-{test}-{}", std::process::id());
        // A namespace left by a killed earlier run would make `add` fail.
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        run("ip", &["netns", "add", &name]);
        Netns(name)
    }

    /// Runs a command inside the namespace; fails the test if it fails.
    pub fn exec(&self, program: &str, args: &[&str]) -> String {
        let mut all = vec!["netns", "exec", &self.0, program];
        all.extend_from_slice(args);
        let out = run("ip", &all);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Adds a NIC `name` with `mac`: one end of a veth pair whose other end (`peer`) is
    /// up, so the NIC has carrier and IPv6 DAD completes. Both ends live in the
    /// namespace, so the host's network is never touched.
    pub fn add_nic(&self, name: &str, mac: &str, peer: &str) {
        self.exec(
            "ip",
            &["link", "add", peer, "type", "veth", "peer", "name", name],
        );
        self.exec("ip", &["link", "set", name, "address", mac]);
        self.exec("ip", &["link", "set", peer, "up"]);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}

/// Applies `actions` to the tree at `dir` and checks that every file's original text is
/// still somewhere in it (moved aside or backed up, never lost); returns the new files.
pub fn apply_keeping_originals(
    dir: &Path,
    actions: &[Action],
    before: &BTreeMap<PathBuf, String>,
) -> BTreeMap<PathBuf, String> {
    let root = Root::new(dir).unwrap();
    apply(
        &root,
        &Plan {
            actions: actions.to_vec(),
        },
    )
    .unwrap();
    let after = files(dir);
    for (path, text) in before {
        assert!(
            after.values().any(|t| t == text),
            "{} was lost",
            path.display()
        );
    }
    after
}

/// Whether `ip route` / `ip -6 route` output shows a route to `to` (a default route
/// appears as `default`) via `via`, with `metric` when one is wanted.
pub fn shows_route(routes: &str, to: &str, via: &str, metric: Option<u32>) -> bool {
    let to = if to == "0.0.0.0/0" || to == "::/0" {
        "default"
    } else {
        to
    };
    routes.lines().any(|l| {
        l.starts_with(&format!("{to} via {via} "))
            && metric.is_none_or(|m| l.contains(&format!(" metric {m}")))
    })
}

/// A network config v2 in CAPV's per-NIC shape with the link keys (`mtu`,
/// `accept-ra`, `dhcp4-overrides`) on the example root's three NICs: DHCPv4 with RA
/// off and CAPV's overrides, static IPv4 and IPv6 with RA on, and static IPv4 with IPv6 left to router
/// advertisements that are turned off.
pub fn link_keys_network() -> Network {
    let doc = "version: 2
ethernets:
  id0:
    match: {macaddress: '00:50:56:a6:8c:08'}
    dhcp4: true
    mtu: 9000
    accept-ra: false
    dhcp4-overrides: {use-dns: false, use-ntp: false, use-mtu: true, route-metric: 100, send-hostname: true, hostname: node-a}
  id1:
    match: {macaddress: '00:50:56:a6:ef:7d'}
    addresses: [10.0.0.5/24, 'fd00::5/64']
    gateway4: 10.0.0.1
    mtu: 1400
    accept-ra: true
  id2:
    match: {macaddress: '00:50:56:a6:5a:de'}
    addresses: [10.1.0.5/24]
    mtu: 1280
    accept-ra: false
";
    let value: serde_norway::Value = serde_norway::from_str(doc).unwrap();
    let t = vmcust::test_api::netconfig::translate(&value).unwrap();
    assert_eq!(
        t.warnings,
        ["ethernets.id0.dhcp4-overrides: hostname, route-metric, send-hostname, use-mtu, use-ntp applied by the netplan and networkd renderers only; the others ignore them"]
    );
    t.network.unwrap()
}

/// A network config v2 with VLANs (`vlans`, as VM Service sends them) on the example
/// root: `eth0.100` on the NIC `id0` renames to `eth0` (a name ifupdown reads as
/// `<link>.<id>`), with static IPv4 and IPv6, a gateway, a further route, DNS, an MTU
/// and accept-ra off; `storage` (VLAN 200, a name that says nothing of its link) on
/// `id1`, an entry matched by name at plan time.
pub fn vlan_network() -> Network {
    let doc = "version: 2
ethernets:
  id0:
    match: {macaddress: '00:50:56:a6:8c:08'}
    set-name: eth0
    addresses: [10.0.0.5/24]
  id1:
    match: {name: ens224}
    addresses: [10.2.0.5/24]
vlans:
  eth0.100:
    id: 100
    link: id0
    addresses: [10.100.0.5/24, 'fd00:100::5/64']
    gateway4: 10.100.0.1
    routes: [{to: 192.168.0.0/16, via: 10.100.0.254, metric: 50}]
    nameservers: {addresses: [10.100.0.2], search: [vlan.example]}
    mtu: 1400
    accept-ra: false
  storage:
    id: 200
    link: id1
    addresses: [10.200.0.5/24]
";
    let value: serde_norway::Value = serde_norway::from_str(doc).unwrap();
    let t = vmcust::test_api::netconfig::translate(&value).unwrap();
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    t.network.unwrap()
}

/// Runs `nmcli --offline connection modify` on a keyfile: nmcli parses it, verifies
/// the profile, applies the (harmless) change and prints the profile as NetworkManager
/// would store it.
pub fn nmcli_roundtrip(keyfile: &str) -> Result<String, String> {
    let mut child = Command::new("nmcli")
        .args([
            "--offline",
            "connection",
            "modify",
            "connection.autoconnect-retries",
            "0",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running nmcli");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(keyfile.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Runs `vmcust <cmd> --root <root> --guestinfo-dir <host> <extra>` where the host
/// directory's guestinfo metadata is `head` (its other keys, whole lines) and a
/// `network` key holding the document `network`.
pub fn vmcust_guestinfo_network(
    cmd: &str,
    root: &Path,
    head: &str,
    network: &str,
    extra: &[&str],
) -> Output {
    let host = tempfile::tempdir().unwrap();
    let mut md = format!("{head}network:\n");
    for line in network.lines() {
        md.push_str("  ");
        md.push_str(line);
        md.push('\n');
    }
    fs::write(host.path().join("guestinfo.metadata"), md).unwrap();
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .arg(cmd)
        .arg("--root")
        .arg(root)
        .arg("--guestinfo-dir")
        .arg(host.path())
        .args(extra)
        .env("VMCUST_LOG", "error")
        .output()
        .unwrap()
}
