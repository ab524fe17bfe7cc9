//! The renderer table: every network stack vmcust writes for is one [`Entry`] of
//! [`TABLE`] — its name (as the settings file, `--renderer` and `vmcust detect` spell it),
//! how it recognises the root's stack and why it sits where it does in the detection
//! order, how it renders, whether the stack carries DNS to `/etc/resolv.conf`, and which
//! commands make a running system read the new files. Nothing else in vmcust matches on
//! a renderer: it looks its entry up.
//!
//! Detection reads the root's facts ([`detect`] on `NetworkFacts::stacks`), once, when
//! the renderer is chosen: [`choose`] takes the renderer the caller named, or the
//! detected one, or refuses: a root with no stack the table can name is an error that
//! says what was looked for and how to name a renderer, never a silent default.

use std::sync::LazyLock;

use serde::Serialize;

use super::{
    eni, names, netplan, networkd, networkmanager, sysconfig, sysconfig_suse, Device, NetworkError,
    Renderer,
};
use crate::facts::network::{ResolvConf, Stacks};
use crate::facts::NetworkFacts;
use crate::model::{InterfaceId, Network};
use crate::plan::Action;

/// A renderer's own files for a network on the resolved devices of a root.
pub(crate) type RenderFn =
    fn(&Network, &[Device], &NetworkFacts) -> Result<Vec<Action>, NetworkError>;

/// One network stack vmcust writes configuration for.
pub struct Entry {
    /// Which renderer this is.
    pub renderer: Renderer,
    /// Its name in the settings file, on the command line, in JSON and in `detect`/`plan`
    /// output.
    pub name: &'static str,
    /// What it writes, and for which systems (the `--renderer` help).
    pub about: &'static str,
    /// What on a root shows this stack, as a sentence part ("… is enabled").
    pub stack: &'static str,
    /// Why the entry sits where it does in the detection order, for a root that also has
    /// a stack of a later entry.
    pub order: &'static str,
    /// Whether the root's stacks contain this one.
    pub found: fn(&Stacks) -> bool,
    /// Renders the network for the resolved devices (leftovers, the ENI main file and the
    /// resolver are planned around it, the same for every stack).
    pub render: RenderFn,
    /// Whether the stack itself puts our DNS into `/etc/resolv.conf` (then vmcust does
    /// not write the file; `resolv.rs`).
    pub carries_dns: fn(&NetworkFacts) -> bool,
    /// The commands that make the stack take the files of `actions`: before the network
    /// starts (`network_up` false, the early stage) or while it runs (a late hand-over).
    pub reload: fn(&[Action], bool) -> Vec<Vec<String>>,
}

/// Every renderer, in detection order: the first entry whose stack the root has wins.
pub static TABLE: [Entry; 6] = [
    Entry {
        renderer: Renderer::Netplan,
        name: "netplan",
        about: "Netplan YAML under /etc/netplan (Ubuntu, Debian with netplan.io)",
        stack: "/etc/netplan exists and netplan is installed",
        order: "netplan comes first: it drives networkd or NetworkManager itself",
        found: |s| s.netplan,
        render: |net, devices, _| Ok(netplan::render(net, devices)?),
        // networkd (netplan's usual backend) hands DNS only to systemd-resolved, which
        // reaches glibc only through a link to its file. A plain file (a template without
        // resolved, keeping its last DHCP server) is never rewritten by anything else.
        carries_dns: |f| !matches!(f.resolv_conf, ResolvConf::File(_)),
        // netplan's systemd generator turned the template's YAML into /run files when
        // systemd started, so even before the network starts it must generate again;
        // `apply` also makes the running backend take them.
        reload: |_, up| {
            if up {
                words(&["netplan", "apply"])
            } else {
                words(&["netplan", "generate"])
            }
        },
    },
    Entry {
        renderer: Renderer::NetworkManager,
        name: "networkmanager",
        about: "NetworkManager keyfiles (RHEL 8+, Fedora, SLES 16, desktops)",
        stack: "NetworkManager.service is enabled",
        order: "an enabled NetworkManager runs the interfaces whatever other trees are there \
                (it reads ifcfg files itself, and SUSE's wicked files are ignored under it)",
        found: |s| s.network_manager,
        render: |net, devices, _| {
            let mut actions = networkmanager::render(net, devices)?;
            actions.extend(names::udev_rules(net, devices)?);
            Ok(actions)
        },
        carries_dns: |_| true,
        reload: |actions, up| {
            if !up {
                return Vec::new();
            }
            let mut cmds = words(&["nmcli", "connection", "reload"]);
            for a in actions {
                let Action::WriteFile { path, .. } = a else {
                    continue;
                };
                if path.parent().and_then(|p| p.to_str()) != Some(networkmanager::CONNECTIONS_DIR) {
                    continue;
                }
                if let Some(id) = path.file_stem().and_then(|s| s.to_str()) {
                    cmds.extend(words(&["nmcli", "connection", "up", "id", id]));
                }
            }
            cmds
        },
    },
    Entry {
        renderer: Renderer::Networkd,
        name: "networkd",
        about: "systemd-networkd .network/.link files (Photon OS, minimal systemd systems)",
        stack: "systemd-networkd.service is enabled",
        order: "an enabled networkd runs the interfaces whatever configuration trees are left",
        found: |s| s.networkd,
        render: |net, devices, _| Ok(networkd::render(net, devices)?),
        carries_dns: |f| !matches!(f.resolv_conf, ResolvConf::File(_)),
        // Re-reads .network files and reconfigures every interface whose file changed.
        reload: |_, up| up_only(up, &["networkctl", "reload"]),
    },
    Entry {
        renderer: Renderer::Sysconfig,
        name: "sysconfig",
        about: "RHEL-style ifcfg-* files under /etc/sysconfig/network-scripts",
        stack: "/etc/sysconfig/network-scripts exists (RHEL ifcfg files)",
        order: "the RHEL network service's tree comes before ifupdown's and SUSE's",
        found: |s| s.sysconfig,
        render: |net, devices, _| {
            let mut actions = sysconfig::render(net, devices)?;
            actions.extend(names::udev_rules(net, devices)?);
            Ok(actions)
        },
        carries_dns: |f| f.stacks.network_manager,
        reload: |_, up| up_only(up, &["systemctl", "restart", "network.service"]),
    },
    Entry {
        renderer: Renderer::Eni,
        name: "eni",
        about: "ifupdown's /etc/network/interfaces (Debian without netplan)",
        stack: "/etc/network/interfaces exists and ifup is installed",
        order: "ifupdown comes before SUSE's sysconfig",
        found: |s| s.ifupdown,
        render: |net, devices, _| {
            let mut actions = eni::render(net, devices)?;
            actions.extend(names::udev_rules(net, devices)?);
            Ok(actions)
        },
        // `dns-*` lines reach /etc/resolv.conf only through resolvconf.
        carries_dns: |f| f.stacks.resolvconf,
        reload: |_, up| up_only(up, &["systemctl", "restart", "networking.service"]),
    },
    Entry {
        renderer: Renderer::Suse,
        name: "suse",
        about: "SUSE's ifcfg-*/ifroute-* under /etc/sysconfig/network, read by wicked \
                (SLES 12/15, openSUSE Leap), with DNS in netconfig's config",
        stack: "/etc/sysconfig/network holds ifcfg files, or wicked is installed or enabled",
        order: "SUSE's sysconfig comes last: a SUSE system running NetworkManager ignores it",
        found: |s| s.suse,
        render: |net, devices, facts| {
            let mut actions = sysconfig_suse::render(net, devices, facts.suse_config.as_deref())?;
            actions.extend(names::udev_rules(net, devices)?);
            Ok(actions)
        },
        // netconfig writes the file from our `config` keys.
        carries_dns: |_| true,
        reload: |_, up| up_only(up, &["wicked", "ifreload", "all"]),
    },
];

fn words(w: &[&str]) -> Vec<Vec<String>> {
    vec![w.iter().map(|s| s.to_string()).collect()]
}

/// One command, only while the network runs: before it starts, the stack reads the
/// files anyway.
fn up_only(up: bool, w: &[&str]) -> Vec<Vec<String>> {
    if up {
        words(w)
    } else {
        Vec::new()
    }
}

impl Renderer {
    /// This renderer's entry in [`TABLE`].
    pub fn entry(self) -> &'static Entry {
        TABLE
            .iter()
            .find(|e| e.renderer == self)
            .expect("every renderer has an entry (tested)")
    }

    /// The name used in the settings file, on the command line and in messages.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// The renderer called `name` (any case), as the settings file spells it.
    pub fn from_name(name: &str) -> Option<Renderer> {
        TABLE
            .iter()
            .find(|e| e.name.eq_ignore_ascii_case(name))
            .map(|e| e.renderer)
    }
}

/// Every renderer in table order, for the command line's list of values.
static ALL: LazyLock<Vec<Renderer>> = LazyLock::new(|| TABLE.iter().map(|e| e.renderer).collect());

/// `--renderer` takes the entry's name (case as written) and shows its `about` as help.
impl clap::ValueEnum for Renderer {
    fn value_variants<'a>() -> &'a [Self] {
        ALL.as_slice()
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.entry().about))
    }
}

/// JSON and YAML output spell a renderer as its entry's name.
impl Serialize for Renderer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Every renderer's name, in table order, for messages: `netplan, networkd, …`.
pub(crate) fn names() -> String {
    TABLE.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}

/// The first entry of [`TABLE`] whose stack `stacks` has, or `None`; the reason says
/// what was found, and why it wins over any later entry's stack found too.
pub fn detect(stacks: &Stacks) -> Option<Chosen> {
    let mut found = TABLE.iter().filter(|e| (e.found)(stacks));
    let first = found.next()?;
    let others: Vec<&str> = found.map(|e| e.name).collect();
    let reason = if others.is_empty() {
        format!("detected: {}", first.stack)
    } else {
        format!(
            "detected: {}; also found {}, but {}",
            first.stack,
            others.join(", "),
            first.order
        )
    };
    Some(Chosen {
        renderer: first.renderer,
        reason,
    })
}

/// A renderer named by the caller rather than detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Named {
    /// The renderer.
    pub renderer: Renderer,
    /// Who named it, for the reason.
    pub by: NamedBy,
}

/// Where a renderer was named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NamedBy {
    /// `--renderer` of `plan` and `apply`.
    CommandLine,
    /// `[network] renderer` in the settings file.
    Settings,
}

impl std::fmt::Display for NamedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NamedBy::CommandLine => f.write_str("--renderer"),
            NamedBy::Settings => write!(f, "[network] renderer in {}", crate::state::SETTINGS_PATH),
        }
    }
}

/// A renderer and why it was chosen: the one detected on a root, or the one a
/// customization is written for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chosen {
    /// The renderer.
    pub renderer: Renderer,
    /// Why this one (detected from what, or named and by whom), for `detect` and `plan`.
    pub reason: String,
}

/// The renderer named, or else the one detected in `facts`; an error when neither
/// exists, saying what was looked for and how to name one.
pub(crate) fn choose(named: Option<Named>, facts: &NetworkFacts) -> Result<Chosen, NetworkError> {
    let detected = detect(&facts.stacks);
    if let Some(n) = named {
        let mut reason = format!("set by {}", n.by);
        match &detected {
            Some(d) if d.renderer != n.renderer => {
                reason.push_str(&format!("; the root's own stack is {}", d.renderer.name()));
            }
            _ => {}
        }
        return Ok(Chosen {
            renderer: n.renderer,
            reason,
        });
    }
    match detected {
        Some(d) => Ok(d),
        None => Err(NetworkError::NoStack {
            looked_for: looked_for(),
            names: names(),
            settings: crate::state::SETTINGS_PATH,
        }),
    }
}

/// The network reload a boot does once the files are written: the renderer's commands
/// for the moment it applies at. Planned with the files (`vmcust plan` shows it) and run
/// from here by the boot stage, only when the root is the running system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Reload {
    /// The renderer whose stack reloads.
    pub renderer: Renderer,
    /// The network is up already (a late hand-over), not about to start.
    pub network_up: bool,
    /// The root is `/`, the running system; any other root is never reloaded.
    pub running_system: bool,
    /// The commands, in order; none when the stack reads the files when it starts.
    pub commands: Vec<Vec<String>>,
}

impl Reload {
    /// The reload of `renderer`'s stack for the files of `actions`, after the running
    /// NICs a `set-name` renames (`renames`: kernel's name now, new name) are renamed:
    /// udev named them before our rules or `.link` files existed, and a NIC can only be
    /// renamed while it is down (the stack brings it up under its new name).
    pub(crate) fn plan(
        renderer: Renderer,
        actions: &[Action],
        renames: &[(InterfaceId, InterfaceId)],
        network_up: bool,
        running_system: bool,
    ) -> Reload {
        let mut commands = Vec::new();
        for (from, to) in renames {
            let ip = |args: &[&str]| {
                let mut cmd = vec!["ip".to_string(), "link".into(), "set".into(), "dev".into()];
                cmd.push(from.to_string());
                cmd.extend(args.iter().map(|a| a.to_string()));
                cmd
            };
            commands.push(ip(&["down"]));
            commands.push(ip(&["name", to.as_str()]));
        }
        commands.extend((renderer.entry().reload)(actions, network_up));
        Reload {
            renderer,
            network_up,
            running_system,
            commands,
        }
    }

    /// One line for people (`vmcust plan`).
    pub(crate) fn describe(&self) -> String {
        let name = self.renderer.name();
        let when = if self.network_up {
            "the network is up"
        } else {
            "before the network starts"
        };
        let what = if self.commands.is_empty() {
            format!("nothing to run: {name} reads the new files when it starts")
        } else {
            let cmds: Vec<String> = self.commands.iter().map(|c| c.join(" ")).collect();
            format!("run {}", cmds.join("; "))
        };
        let only = if self.running_system || self.commands.is_empty() {
            ""
        } else {
            " (only on the running system: not for this root)"
        };
        format!("network reload ({name}, {when}): {what}{only}")
    }
}

/// What detection looks for, entry by entry, for the error of a root with no stack.
pub(crate) fn looked_for() -> String {
    TABLE
        .iter()
        .map(|e| format!("{} ({})", e.name, e.stack))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum as _;

    /// Every variant; the match makes a new variant fail to compile here until listed.
    fn every_variant() -> [Renderer; 6] {
        let all = [
            Renderer::Netplan,
            Renderer::Networkd,
            Renderer::NetworkManager,
            Renderer::Sysconfig,
            Renderer::Eni,
            Renderer::Suse,
        ];
        for r in all {
            match r {
                Renderer::Netplan
                | Renderer::Networkd
                | Renderer::NetworkManager
                | Renderer::Sysconfig
                | Renderer::Eni
                | Renderer::Suse => {}
            }
        }
        all
    }

    #[test]
    fn every_renderer_has_one_entry_named_as_on_the_command_line() {
        assert_eq!(Renderer::value_variants().len(), every_variant().len());
        for r in &every_variant() {
            let entries: Vec<&Entry> = TABLE.iter().filter(|e| e.renderer == *r).collect();
            assert_eq!(entries.len(), 1, "{r:?}");
            let clap_name = r.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(entries[0].name, clap_name, "{r:?}");
            assert_eq!(Renderer::from_name(&clap_name.to_uppercase()), Some(*r));
            // serde (plan --format json) spells it the same way.
            assert_eq!(
                serde_json::to_value(r).unwrap(),
                serde_json::Value::String(clap_name)
            );
        }
        assert_eq!(TABLE.len(), Renderer::value_variants().len());
        assert_eq!(Renderer::from_name("wicked"), None);
        // The command line parses each name, as written.
        for e in &TABLE {
            assert_eq!(Renderer::from_str(e.name, false), Ok(e.renderer));
            assert_eq!(e.name, e.name.to_lowercase());
        }
    }

    #[test]
    fn a_named_renderer_says_who_named_it_and_what_the_root_has() {
        let mut facts = NetworkFacts::default();
        let named = Named {
            renderer: Renderer::Eni,
            by: NamedBy::CommandLine,
        };
        let c = choose(Some(named), &facts).unwrap();
        assert_eq!(c.renderer, Renderer::Eni);
        assert_eq!(c.reason, "set by --renderer");
        facts.stacks.networkd = true;
        let c = choose(Some(named), &facts).unwrap();
        assert_eq!(
            c.reason,
            "set by --renderer; the root's own stack is networkd"
        );
        let c = choose(None, &facts).unwrap();
        assert_eq!(c.renderer, Renderer::Networkd);
        assert_eq!(c.reason, "detected: systemd-networkd.service is enabled");
        let by_settings = Named {
            by: NamedBy::Settings,
            ..named
        };
        assert_eq!(
            choose(Some(by_settings), &facts).unwrap().reason,
            "set by [network] renderer in /etc/vmcust/vmcust.conf; the root's own stack is networkd"
        );
    }

    #[test]
    fn no_stack_and_no_name_is_an_error_that_says_how_to_choose() {
        let err = choose(None, &NetworkFacts::default()).unwrap_err();
        let msg = err.to_string();
        for e in &TABLE {
            assert!(msg.contains(e.name), "{msg}");
            assert!(msg.contains(e.stack), "{msg}");
        }
        assert!(msg.contains("[network] renderer"), "{msg}");
        assert!(msg.contains(crate::state::SETTINGS_PATH), "{msg}");
    }

    /// A `set-name` renames the running NIC while it is down, before the stack's own
    /// commands, at either moment; a root not running is only shown the commands.
    #[test]
    fn renames_come_first_and_take_the_nic_down() {
        let id = |s: &str| InterfaceId::parse(s).unwrap();
        let renames = [(id("ens192"), id("eth0"))];
        for (up, stack) in [
            (false, vec!["netplan", "generate"]),
            (true, vec!["netplan", "apply"]),
        ] {
            let r = Reload::plan(Renderer::Netplan, &[], &renames, up, true);
            assert_eq!(
                r.commands,
                [
                    vec!["ip", "link", "set", "dev", "ens192", "down"],
                    vec!["ip", "link", "set", "dev", "ens192", "name", "eth0"],
                    stack
                ]
            );
        }
        let r = Reload::plan(Renderer::Networkd, &[], &renames, false, false);
        assert_eq!(r.commands.len(), 2);
        assert!(
            r.describe().ends_with(
                "run ip link set dev ens192 down; ip link set dev ens192 name eth0 \
                 (only on the running system: not for this root)"
            ),
            "{}",
            r.describe()
        );
    }

    #[test]
    fn reload_commands_follow_the_stack_and_the_moment() {
        use crate::plan::Contents;
        let actions = vec![Action::write_file(
            format!(
                "{}/vmcust-ens192.nmconnection",
                networkmanager::CONNECTIONS_DIR
            ),
            Contents::text(String::new()),
            0o600,
            "test",
        )];
        let reload = |r: Renderer, up| (r.entry().reload)(&actions, up);
        assert_eq!(
            reload(Renderer::NetworkManager, true),
            [
                vec!["nmcli", "connection", "reload"],
                vec!["nmcli", "connection", "up", "id", "vmcust-ens192"]
            ]
        );
        assert_eq!(reload(Renderer::Netplan, true), [["netplan", "apply"]]);
        // Before any stack starts only netplan's generator must run again.
        assert_eq!(reload(Renderer::Netplan, false), [["netplan", "generate"]]);
        for r in [
            Renderer::NetworkManager,
            Renderer::Networkd,
            Renderer::Sysconfig,
            Renderer::Eni,
            Renderer::Suse,
        ] {
            assert!(reload(r, false).is_empty(), "{r:?}");
            assert!(!reload(r, true).is_empty(), "{r:?}");
        }
    }
}
