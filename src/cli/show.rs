//! `vmcust show`: the validated spec, and its network as netplan v2.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::input::{load, InputArgs};
use super::Format;
use crate::facts::NetworkFacts;
use crate::plan::network::{netplan, resolve_devices};
use crate::source::Found;

/// Validate a customization spec and print it, with its network as netplan v2.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The customization spec (cust.cfg) to show (the same as --imc).
    #[arg(value_name = "FILE", conflicts_with = "imc")]
    pub file: Option<PathBuf>,
    /// Other sources to show and merge.
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format: a summary for people (default), or everything as JSON or YAML.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Serialize)]
struct Shown<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    spec: Option<&'a vmcust_imc::Spec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ovf_environment: Option<vmcust_ovf::Environment>,
    found_in: &'a [Found],
    warnings: &'a [String],
    customization: &'a crate::model::Customization,
    origins: &'a std::collections::BTreeMap<&'static str, &'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    netplan: Option<netplan::NetplanDoc>,
}

/// The environment with the values of password-like properties replaced, so that
/// printing it cannot leak a secret (`password`, `root_password`, `guestinfo.passwd`, …).
fn redacted(env: &vmcust_ovf::Environment) -> vmcust_ovf::Environment {
    let mut env = env.clone();
    let hide = |p: &mut vmcust_ovf::Property| {
        let k = p.key.to_ascii_lowercase();
        if ["pass", "secret", "token", "key"]
            .iter()
            .any(|w| k.contains(w))
            && k != "public-keys"
        {
            p.value = vmcust_imc::REDACTED.to_string();
        }
    };
    env.properties.iter_mut().for_each(hide);
    env.entities
        .iter_mut()
        .flat_map(|e| e.properties.iter_mut())
        .for_each(hide);
    env
}

/// Runs `vmcust show`.
pub(super) fn run(mut args: ShowArgs) -> Result<()> {
    if let Some(file) = args.file.take() {
        args.input.imc = Some(file);
    }
    let mut loaded = load(&args.input, None)?;
    // The marker rule needs no root to say that a spec's password or script cannot apply.
    for w in crate::engine::customize::marker_warnings(&loaded.gathered) {
        tracing::warn!("{w}");
        loaded.gathered.warnings.push(w);
    }
    let g = &loaded.gathered;
    let c = &g.customization;
    // No target root here: with no device facts the sources' ids name the devices, as
    // cloud-init does without system devices.
    let netplan = match &c.network {
        Some(net) => Some(netplan::document(
            net,
            &resolve_devices(net, &NetworkFacts::default())?,
        )),
        None => None,
    };
    let shown = Shown {
        spec: loaded.spec.as_ref(),
        ovf_environment: loaded.ovf_environment.as_ref().map(redacted),
        found_in: &g.found,
        warnings: &g.warnings,
        customization: c,
        origins: &g.origins,
        netplan,
    };
    let text = match args.format {
        Format::Text => summary(g),
        Format::Json => serde_json::to_string_pretty(&shown)? + "\n",
        Format::Yaml => crate::yaml::to_string(&shown)?,
    };
    print!("{text}");
    Ok(())
}

/// The customization for people: one line per setting with the source it came from, each
/// interface on its own lines. Secrets show as `<redacted>`; warnings go to the log (stderr).
fn summary(g: &crate::source::SourceData) -> String {
    use crate::model::{Ipv4Config, Ipv6Config};
    use std::fmt::Write as _;
    let c = &g.customization;
    let mut out = String::new();
    let from = |field: &str| {
        g.origins
            .get(field)
            .map_or(String::new(), |k| format!("  (from {k})"))
    };
    let mut line = |label: &str, value: String, field: &str| {
        let _ = writeln!(out, "{label:<16}{value}{}", from(field));
    };
    if let Some(id) = &c.instance_id {
        let id = match g.origins.contains_key("instance-id") {
            true => id.to_string(),
            false => format!("{id}  (no source names one: the VM's BIOS UUID)"),
        };
        line("instance id", id, "instance-id");
    }
    let id = &c.identity;
    if let Some(h) = &id.host_name {
        let name = id.fqdn().unwrap_or_else(|| h.to_string());
        line("host name", name, "host-name");
    }
    if let Some(tz) = &id.time_zone {
        line("time zone", tz.to_string(), "time-zone");
    }
    if let Some(clock) = id.hardware_clock {
        line(
            "hardware clock",
            format!("{clock:?}").to_lowercase(),
            "hardware-clock",
        );
    }
    if let Some(pw) = &id.root_password {
        let what = match (&pw.password, pw.expire) {
            (Some(_), true) => "set to <redacted>, change forced at next login",
            (Some(_), false) => "set to <redacted>",
            (None, _) => "change forced at next login",
        };
        let what = match (g.imc, &c.marker_id) {
            // The marker rule; `marker_warnings` says why.
            (Some(o), None) if !o.raw_cloud_init => format!("{what}, not applied: no MARKER-ID"),
            _ => what.to_string(),
        };
        line("root password", what, "root-password");
    }
    if !id.ssh_authorized_keys.is_empty() {
        let user = id.ssh_user.as_ref().map_or("root", |u| u.as_str());
        line(
            "ssh keys",
            format!("{} for {user}", id.ssh_authorized_keys.len()),
            "ssh-keys",
        );
    }
    if let Some(m) = &c.marker_id {
        line("marker id", m.to_string(), "marker-id");
    }
    if let Some(s) = &c.custom_script {
        line("custom script", s.to_string(), "custom-script");
    }
    if let Some(net) = &c.network {
        line(
            "network",
            format!("{} interface(s)", net.interfaces.len()),
            "network",
        );
        for i in &net.interfaces {
            let v4 = match &i.ip.ipv4 {
                Ipv4Config::Dhcp => "dhcp".to_string(),
                Ipv4Config::Static(a) => a
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                Ipv4Config::Disabled => "off".to_string(),
            };
            let v6 = match &i.ip.ipv6 {
                Ipv6Config::Auto => "auto".to_string(),
                Ipv6Config::Dhcp => "dhcp".to_string(),
                Ipv6Config::Static(a) => a
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                Ipv6Config::Disabled => "off".to_string(),
            };
            let _ = writeln!(out, "  {} {}: ipv4 {v4}; ipv6 {v6}", i.id, i.mac);
            for r in &i.ip.routes {
                let metric = r.metric.map_or(String::new(), |m| format!(" metric {m}"));
                let _ = writeln!(out, "    route {} via {}{metric}", r.to, r.via);
            }
            if !i.ip.dns.is_empty() {
                let _ = writeln!(out, "    dns {}", dns_text(&i.ip.dns));
            }
        }
        for m in &net.matched {
            let _ = writeln!(out, "  {}", m.describe());
        }
        for v in &net.vlans {
            let _ = writeln!(
                out,
                "  vlan {}: id {} on ethernets.{}: ipv4 {}; ipv6 {}",
                v.name,
                v.vlan_id,
                v.link_entry,
                v.ip.ipv4.describe(),
                v.ip.ipv6.describe()
            );
        }
        if !net.dns.is_empty() {
            let _ = writeln!(out, "  dns {}", dns_text(&net.dns));
        }
    }
    if let Some(ud) = &g.user_data {
        let _ = writeln!(
            out,
            "{:<16}{} bytes  (from {})",
            "user-data",
            ud.bytes.len(),
            ud.from
        );
        // Its script parts, when vmcust would run them: name, module, stage, frequency
        // (never a body). User-data it cannot read is reported by `plan` and the boot.
        let vendor = g.vendor_data.as_ref().map(|v| v.bytes.as_slice());
        // (A top-level `#!` user-data is run whole by the late stage, not split.)
        let read = (!ud.bytes.starts_with(b"#!"))
            .then(|| {
                // No target root: the running system's os-release and host name, as a
                // template rendered here would see them.
                let vars = crate::root::Root::new(std::path::Path::new("/")).map_or_else(
                    |_| crate::cloud_config::jinja::Vars::empty(),
                    |root| {
                        crate::cloud_config::jinja::Vars::new(
                            &crate::engine::native::instance_data(&root, g),
                        )
                    },
                );
                crate::cloud_config::userdata::read_rendered(&ud.bytes, vendor, &vars).ok()
            })
            .flatten();
        if let Some(read) = read {
            let plan = crate::cloud_config::apply::scripts::plan(&read.scripts, &[]);
            for s in &plan.scripts {
                let _ = writeln!(out, "  script {}", s.describe());
            }
            for n in plan.notes.iter().chain(&plan.not_run) {
                let _ = writeln!(out, "  script {n}");
            }
        }
    }
    if c.instance_id.is_some() && g.is_empty() {
        let _ = writeln!(out, "nothing to do: the sources ask for no change");
    }
    // Warnings are not repeated here: `load` has logged each one, once, on stderr.
    out
}

fn dns_text(dns: &crate::model::Dns) -> String {
    let servers: Vec<String> = dns.servers.iter().map(|s| s.to_string()).collect();
    let search: Vec<String> = dns.search.iter().map(|s| s.to_string()).collect();
    format!(
        "servers [{}] search [{}]",
        servers.join(" "),
        search.join(" ")
    )
}
