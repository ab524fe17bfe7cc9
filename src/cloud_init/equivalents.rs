//! What the `cloud-init` stand-in says for a cloud-init command it does not answer: the
//! vmcust command that does the same, or that there is none and why. One table, read by
//! the stand-in's refusal, its man page (vmcust-cloud-init(8)) and the tests.

/// One cloud-init command the stand-in does not answer, and what to use instead.
#[derive(Debug, Clone, Copy)]
pub struct Equivalent {
    /// The command's words after `cloud-init`, such as `["analyze", "blame"]`.
    pub words: &'static [&'static str],
    /// The vmcust command line that does it, if there is one.
    pub vmcust: Option<&'static str>,
    /// What that command does, or why there is none.
    pub why: &'static str,
}

/// Every command of cloud-init 22.4–23.x's command line that the stand-in may be asked, the
/// commands it answers aside; a group (`analyze`, `devel`) before its subcommands.
pub const EQUIVALENTS: &[Equivalent] = &[
    Equivalent {
        words: &["init"],
        vmcust: Some("vmcust run --stage early"),
        why: "vmcust's early boot stage (identity, network, password, pre-script, the \
              cloud-config modules that come before the network); systemd starts it as \
              vmcust-early.service",
    },
    Equivalent {
        words: &["modules"],
        vmcust: Some("vmcust run --stage late"),
        why: "vmcust's late boot stage (post-script, user-data scripts and the later \
              cloud-config modules); systemd starts it as vmcust-late.service",
    },
    Equivalent {
        words: &["single"],
        vmcust: None,
        why: "vmcust runs each cloud-config module once per instance inside its boot stage, \
              never one alone; `vmcust plan` shows what each would change, and a new \
              instance id runs them again",
    },
    Equivalent {
        words: &["features"],
        vmcust: None,
        why: "vmcust has no feature flags; what it does is set in /etc/vmcust/vmcust.conf, \
              which `vmcust settings` checks",
    },
    Equivalent {
        words: &["analyze"],
        vmcust: Some("vmcust analyze show"),
        why: "each recorded boot's stages and steps with their times (`vmcust analyze \
              blame`: slowest first)",
    },
    Equivalent {
        words: &["analyze", "show"],
        vmcust: Some("vmcust analyze show"),
        why: "each recorded boot's stages and steps in order, with their times",
    },
    Equivalent {
        words: &["analyze", "blame"],
        vmcust: Some("vmcust analyze blame"),
        why: "the last boot's steps, slowest first",
    },
    Equivalent {
        words: &["analyze", "dump"],
        vmcust: Some("vmcust analyze show --format json"),
        why: "every recorded boot's stages and steps as JSON",
    },
    Equivalent {
        words: &["analyze", "boot"],
        vmcust: None,
        why: "the kernel's and systemd's boot times are `systemd-analyze`'s; `vmcust \
              analyze show` gives vmcust's own stages",
    },
    Equivalent {
        words: &["schema"],
        vmcust: Some("vmcust schema FILE"),
        why: "checks user-data (cloud-config, scripts, MIME multipart) offline, each \
              problem at its line and key path",
    },
    Equivalent {
        words: &["devel"],
        vmcust: None,
        why: "cloud-init's developer tools have no vmcust command as a group; `cloud-init \
              devel schema` is `vmcust schema FILE`",
    },
    Equivalent {
        words: &["devel", "schema"],
        vmcust: Some("vmcust schema FILE"),
        why: "checks user-data (cloud-config, scripts, MIME multipart) offline, each \
              problem at its line and key path",
    },
    Equivalent {
        words: &["devel", "render"],
        vmcust: Some("vmcust schema --instance-data FILE USER-DATA"),
        why: "renders each `## template: jinja` part with that instance data (`cloud-init \
              query --all`'s output) and checks what it renders to; `--format yaml` shows \
              the document it made",
    },
    Equivalent {
        words: &["devel", "make-mime"],
        vmcust: None,
        why: "vmcust reads MIME multipart user-data but does not write it; build the \
              message with a MIME tool (Python's email package) and check it with `vmcust \
              schema FILE`",
    },
    Equivalent {
        words: &["devel", "net-convert"],
        vmcust: Some("vmcust plan --root ROOT --guestinfo-dir DIR --renderer NAME"),
        why: "the files a network configuration becomes for a renderer (netplan, \
              networkmanager, networkd, sysconfig, eni, suse), written nowhere",
    },
    Equivalent {
        words: &["devel", "hotplug-hook"],
        vmcust: None,
        why: "vmcust configures the network once per customization; a device added later is \
              its network stack's to configure",
    },
    Equivalent {
        words: &["hotplug-hook"],
        vmcust: None,
        why: "vmcust configures the network once per customization; a device added later is \
              its network stack's to configure",
    },
    Equivalent {
        words: &["dhclient-hook"],
        vmcust: None,
        why: "vmcust reads no DHCP leases; its data comes from VMware (the customization \
              spec, the OVF environment, guestinfo)",
    },
];

/// The entry for a command line (the words after `cloud-init`): the longest entry whose
/// words begin it, options left out. `None` when cloud-init has no such command.
pub(crate) fn lookup(args: &[String]) -> Option<&'static Equivalent> {
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .take_while(|w| !w.starts_with('-'))
        .collect();
    EQUIVALENTS
        .iter()
        .filter(|e| words.starts_with(e.words))
        .max_by_key(|e| e.words.len())
}

/// The refusal for `args`, naming the vmcust equivalent or why there is none, and the
/// commands the stand-in does answer (`answered`, from its command line).
pub(crate) fn refusal(args: &[String], version: &str, answered: &[String]) -> String {
    let shown: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .take_while(|w| !w.starts_with('-'))
        .collect();
    let what = match lookup(args) {
        Some(Equivalent {
            vmcust: Some(cmd),
            why,
            ..
        }) => format!("the vmcust equivalent is `{cmd}`: {why}"),
        Some(Equivalent {
            vmcust: None, why, ..
        }) => format!("vmcust has no equivalent: {why}"),
        None => "this is not a cloud-init command".to_string(),
    };
    let answered: Vec<String> = answered
        .iter()
        .map(|c| format!("`cloud-init {c}`"))
        .collect();
    format!(
        "cloud-init {}: not answered by the stand-in; {what}. This is vmcust {version} \
         standing in for cloud-init, which answers `cloud-init --version`, {}; see \
         `cloud-init --help` and `vmcust --help`",
        shown.join(" "),
        answered.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// Each command line finds its entry: the longest one, options left out.
    #[test]
    fn lookup_takes_the_longest_entry() {
        for (line, want) in [
            ("schema -c user-data", Some("schema")),
            ("analyze blame -i cloud-init.log", Some("analyze blame")),
            ("analyze", Some("analyze")),
            ("analyze --help-me", Some("analyze")),
            ("single --name cc_runcmd", Some("single")),
            (
                "devel make-mime -a f:text/x-shellscript",
                Some("devel make-mime"),
            ),
            ("devel", Some("devel")),
            ("devel unheard-of", Some("devel")),
            ("init --local", Some("init")),
            ("frobnicate", None),
            ("", None),
        ] {
            let got = lookup(&words(line)).map(|e| e.words.join(" "));
            assert_eq!(got.as_deref(), want, "{line:?}");
        }
    }

    /// Every entry is named once, and a group comes before its subcommands.
    #[test]
    fn the_table_is_in_order_without_repeats() {
        for (i, e) in EQUIVALENTS.iter().enumerate() {
            assert!(!e.why.is_empty() && !e.words.is_empty(), "{e:?}");
            let before = &EQUIVALENTS[..i];
            assert!(before.iter().all(|b| b.words != e.words), "{e:?} twice");
            if e.words.len() > 1 {
                assert!(
                    before.iter().any(|b| b.words == &e.words[..1]),
                    "{e:?} before its group"
                );
            }
            if let Some(cmd) = e.vmcust {
                assert!(cmd.starts_with("vmcust "), "{cmd}");
            }
        }
    }

    /// docs/boot.md has the table, row for row.
    #[test]
    fn the_boot_page_has_every_entry() {
        let page = include_str!("../../docs/boot.md");
        let missing: Vec<String> = EQUIVALENTS
            .iter()
            .map(|e| {
                let cmd = e.vmcust.map_or("none".to_string(), |c| format!("`{c}`"));
                format!("| `cloud-init {}` | {cmd} | {} |", e.words.join(" "), e.why)
            })
            .filter(|row| !page.contains(row.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "docs/boot.md lacks these rows:\n{}",
            missing.join("\n")
        );
    }

    #[test]
    fn the_refusal_names_the_equivalent_or_why_not() {
        let answered = words("status clean");
        let say = |line: &str| refusal(&words(line), "1.0", &answered);
        let m = say("analyze blame");
        assert!(
            m.starts_with("cloud-init analyze blame: not answered by the stand-in; the vmcust equivalent is `vmcust analyze blame`"),
            "{m}"
        );
        assert!(
            m.contains("answers `cloud-init --version`, `cloud-init status`, `cloud-init clean`"),
            "{m}"
        );
        let m = say("devel make-mime -a x");
        assert!(
            m.contains("vmcust has no equivalent: vmcust reads MIME"),
            "{m}"
        );
        assert!(!m.contains("-a x"), "{m}");
        let m = say("frobnicate");
        assert!(m.contains("this is not a cloud-init command"), "{m}");
    }
}
