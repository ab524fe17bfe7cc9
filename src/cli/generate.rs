//! `vmcust generate` (hidden): the man pages and shell completions the packages ship.
//! The command pages are made from the same clap definitions as `--help`, so they can
//! never drift from it, with the sections clap cannot know (EXIT STATUS, ENVIRONMENT,
//! FILES, EXAMPLES) appended from the roff sources in man/sections/; vmcust.conf(5) is
//! written whole from man/vmcust.conf.5. Run at package time by scripts/package.sh
//! (docs/packaging.md); the pages it makes are also kept in man/, so that they read
//! from a checkout (`man ./man/vmcust.1`), and a test keeps them the same.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::{Args, CommandFactory, Subcommand};

use super::Cli;

/// The sections appended to vmcust(1).
const VMCUST_SECTIONS: &str = include_str!("../../man/sections/vmcust.1.roff");
/// The sections appended to the stand-in's page.
const STAND_IN_SECTIONS: &str = include_str!("../../man/sections/vmcust-cloud-init.8.roff");
/// The settings file's page, whole.
const SETTINGS_PAGE: &str = include_str!("../../man/vmcust.conf.5");

/// The stand-in's page name: not `cloud-init`, which a real cloud-init's page owns.
pub(super) const STAND_IN_PAGE: &str = "vmcust-cloud-init";

/// Write the man pages or shell completions (for packaging).
#[derive(Debug, Args)]
pub(crate) struct GenerateArgs {
    /// What to generate.
    #[command(subcommand)]
    pub what: What,
}

/// The generated files.
#[derive(Debug, Subcommand)]
pub(crate) enum What {
    /// Man pages: vmcust.1, one vmcust-COMMAND.1 per sub-command, vmcust.conf.5 and
    /// vmcust-cloud-init.8.
    Man {
        /// Directory to write them to (created if missing).
        dir: PathBuf,
    },
    /// Completions for bash, zsh and fish (vmcust.bash, _vmcust, vmcust.fish).
    Completions {
        /// Directory to write them to (created if missing).
        dir: PathBuf,
    },
}

/// Runs `vmcust generate`.
pub(super) fn run(args: GenerateArgs) -> Result<()> {
    match args.what {
        What::Man { dir } => man(&dir),
        What::Completions { dir } => completions(&dir),
    }
}

fn create(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

fn write(dir: &Path, name: &str, page: &[u8]) -> Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))
}

fn man(dir: &Path) -> Result<()> {
    create(dir)?;
    // Sub-command pages are named vmcust-COMMAND.1, as git's are.
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("writing man pages to {}", dir.display()))?;
    // vmcust.1 again, with the sections a page needs after the generated ones.
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let sections = format!("{}{VMCUST_SECTIONS}", exit_status_section());
    let vmcust = page(clap_mangen::Man::new(cmd), &sections, true)?;
    write(dir, "vmcust.1", &vmcust)?;
    let stand_in = clap_mangen::Man::new(super::stand_in::command())
        .title(STAND_IN_PAGE)
        .section("8")
        .source(format!("vmcust {}", super::VERSION))
        .manual("System Administration");
    let sections = format!(
        "{}{}{STAND_IN_SECTIONS}",
        commands_section(&super::stand_in::command()),
        equivalents_section()
    );
    let stand_in = page(stand_in, &sections, false)?;
    write(dir, &format!("{STAND_IN_PAGE}.8"), &stand_in)?;
    write(dir, "vmcust.conf.5", SETTINGS_PAGE.as_bytes())
}

/// A command's page: clap's title, name, synopsis, description, options and commands,
/// then `sections` (roff), then the version (for a command that has one).
fn page(man: clap_mangen::Man, sections: &str, version: bool) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    if version {
        // Links to one page per sub-command, which only vmcust has.
        man.render_subcommands_section(&mut out)?;
    }
    out.extend_from_slice(sections.as_bytes());
    if version {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}

/// vmcust(1)'s EXIT STATUS section, from the one table of exit statuses.
fn exit_status_section() -> String {
    use roff::{roman, Roff};
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    roff.text([roman("The same in every command, run included:")]);
    for s in crate::failure::EXIT_STATUSES {
        roff.control("TP", []);
        roff.control("B", [s.code.to_string().as_str()]);
        roff.text([roman(s.meaning)]);
    }
    roff.to_roff()
}

/// The stand-in's OTHER CLOUD-INIT COMMANDS section: what it says for each cloud-init
/// command it does not answer, from the one table its refusals come from.
fn equivalents_section() -> String {
    use roff::{bold, roman, Roff};
    let mut roff = Roff::new();
    roff.control("SH", ["OTHER CLOUD-INIT COMMANDS"]);
    roff.text([roman(
        "Any other cloud-init command exits 1 with a message that names the vmcust command \
         doing the same, or says why there is none:",
    )]);
    for e in crate::cloud_init::equivalents::EQUIVALENTS {
        roff.control("TP", []);
        roff.text([bold(format!("cloud-init {}", e.words.join(" ")))]);
        let said = match e.vmcust {
            Some(cmd) => format!("{cmd}: {}.", e.why),
            None => format!("No vmcust equivalent: {}.", e.why),
        };
        roff.text([roman(said)]);
    }
    roff.to_roff()
}

/// A COMMANDS section for a command whose sub-commands have no pages of their own: each
/// one's usage, description and options, from its clap definition.
fn commands_section(cmd: &clap::Command) -> String {
    use roff::{bold, roman, Roff};
    let mut cmd = cmd.clone();
    cmd.build();
    let mut roff = Roff::new();
    roff.control("SH", ["COMMANDS"]);
    for sub in cmd.get_subcommands_mut() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let usage = sub.render_usage().to_string();
        let usage = usage.trim_start_matches("Usage:").trim().to_string();
        roff.control("SS", [usage.as_str()]);
        if let Some(about) = sub.get_long_about().or_else(|| sub.get_about()) {
            roff.text([roman(about.to_string())]);
        }
        for arg in sub.get_arguments() {
            if arg.is_hide_set() {
                continue;
            }
            let mut names = Vec::new();
            if let Some(s) = arg.get_short() {
                names.push(format!("-{s}"));
            }
            if let Some(l) = arg.get_long() {
                names.push(format!("--{l}"));
            }
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            let mut flag = names.join(", ");
            if arg.get_action().takes_values() {
                flag.push_str(&if values.is_empty() {
                    " VALUE".to_string()
                } else {
                    format!(" {}", values.join("|"))
                });
            }
            roff.control("TP", []);
            roff.text([bold(flag)]);
            let help = arg.get_long_help().or_else(|| arg.get_help());
            roff.text([roman(help.map(|h| h.to_string()).unwrap_or_default())]);
        }
    }
    roff.to_roff()
}

fn completions(dir: &Path) -> Result<()> {
    use clap_complete::Shell;
    create(dir)?;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let mut cmd = Cli::command();
        clap_complete::generate_to(shell, &mut cmd, "vmcust", dir)
            .with_context(|| format!("writing {shell} completions to {}", dir.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generated() -> (tempfile::TempDir, impl Fn(&str) -> String) {
        let dir = tempfile::tempdir().unwrap();
        man(dir.path()).unwrap();
        let path = dir.path().to_path_buf();
        (dir, move |name: &str| {
            std::fs::read_to_string(path.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
        })
    }

    /// Each page and the sections it must have, in order.
    #[test]
    fn pages_have_the_sections_of_a_page() {
        let (_dir, read) = generated();
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "vmcust.1",
                ".TH vmcust 1",
                &[
                    ".SH NAME",
                    ".SH SYNOPSIS",
                    ".SH DESCRIPTION",
                    ".SH OPTIONS",
                    ".SH SUBCOMMANDS",
                    ".SH \"EXIT STATUS\"",
                    ".SH ENVIRONMENT",
                    ".SH FILES",
                    ".SH EXAMPLES",
                    ".SH \"SEE ALSO\"",
                    ".SH VERSION",
                ],
            ),
            (
                "vmcust-cloud-init.8",
                ".TH vmcust-cloud-init 8",
                &[
                    ".SH NAME",
                    ".SH SYNOPSIS",
                    ".SH DESCRIPTION",
                    ".SH OPTIONS",
                    ".SH COMMANDS",
                    ".SS \"cloud-init status [OPTIONS]\"",
                    "\\fB\\-w, \\-\\-wait\\fR",
                    ".SS \"cloud-init clean [OPTIONS]\"",
                    "\\fB\\-c, \\-\\-configs all|ssh_config|network\\fR",
                    ".SH \"OTHER CLOUD-INIT COMMANDS\"",
                    "\\fBcloud\\-init analyze blame\\fR",
                    ".SH STATUS",
                    ".SH \"EXIT STATUS\"",
                    ".SH ENVIRONMENT",
                    ".SH FILES",
                    ".SH EXAMPLES",
                ],
            ),
            (
                "vmcust.conf.5",
                ".TH VMCUST.CONF 5",
                &[".SH NAME", ".SH DESCRIPTION", ".SH EXAMPLE", ".SH FILES"],
            ),
        ];
        for (name, title, sections) in cases {
            let page = read(name);
            assert!(
                page.contains(title),
                "{name}: {}",
                &page[..200.min(page.len())]
            );
            let mut from = 0;
            for s in *sections {
                let at = page[from..]
                    .find(&format!("{s}\n"))
                    .unwrap_or_else(|| panic!("{name}: no {s} after byte {from}"));
                from += at + s.len();
            }
        }
    }

    /// vmcust(1) lists every exit code the commands use.
    #[test]
    fn the_exit_codes_are_all_on_the_page() {
        let (_dir, read) = generated();
        let page = read("vmcust.1");
        let section = page.split(".SH \"EXIT STATUS\"").nth(1).unwrap();
        let section = section.split("\n.SH ").next().unwrap();
        for code in [
            crate::failure::EXIT_OK,
            crate::failure::EXIT_FAILURE,
            crate::failure::EXIT_DEGRADED,
            crate::failure::EXIT_USAGE,
            crate::failure::EXIT_INVALID,
            crate::failure::EXIT_IO,
            crate::failure::EXIT_INTERRUPTED,
        ] {
            assert!(
                section.contains(&format!(".TP\n.B {code}\n")),
                "exit status {code} is not described"
            );
        }
    }

    /// Every key the settings file takes is described in vmcust.conf(5), under its
    /// section, and the page names no key the settings do not know.
    #[test]
    fn the_settings_page_describes_every_key() {
        let keys = crate::settings::known_keys();
        assert!(keys.len() >= 10);
        for (section, key) in &keys {
            let heading = format!(".SH \"[{section}] ");
            let body = SETTINGS_PAGE
                .split(&heading)
                .nth(1)
                .unwrap_or_else(|| panic!("no section [{section}]"));
            let body = body.split("\n.SH ").next().unwrap();
            assert!(
                body.contains(&format!(".TP\n.BR {key} \" (default ")),
                "[{section}] {key} is not described"
            );
        }
        let described = SETTINGS_PAGE.matches(" \" (default ").count();
        assert_eq!(
            described,
            keys.len(),
            "a key on the page the settings do not know"
        );
    }

    /// groff, which man uses to show them, reads every page without a warning (`-ww`:
    /// all warnings, such as an unknown macro or a bad escape).
    #[test]
    fn groff_reads_every_page_without_warnings() {
        let (dir, _) = generated();
        let mut pages = 0;
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            let out = std::process::Command::new("groff")
                .args(["-man", "-Tutf8", "-ww", "-z"])
                .arg(&path)
                .output()
                .expect("groff missing: apt-get install groff-base (scripts/test-packages.txt)");
            let warnings = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && warnings.is_empty(),
                "{}: {warnings}",
                path.display()
            );
            pages += 1;
        }
        assert!(pages >= 16, "{pages} pages");
    }

    /// The pages kept in man/ are the ones `vmcust generate man` makes now, and no
    /// others: a change to a command's options or to a section in man/sections/ shows
    /// in them. They carry the version without the build's git revision (as a build
    /// outside git prints it), so a new commit alone does not change them.
    /// `UPDATE_GOLDEN=1 cargo test --lib generate` writes them anew.
    #[test]
    fn the_pages_in_the_checkout_are_the_generated_ones() {
        let (dir, read) = generated();
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
        let pages = |d: &Path| -> std::collections::BTreeSet<String> {
            std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    n.rsplit_once('.')
                        .is_some_and(|(_, s)| matches!(s, "1" | "5" | "8"))
                })
                .collect()
        };
        let plain_version = env!("CARGO_PKG_VERSION");
        let unrevised = |page: String| page.replace(super::super::VERSION, plain_version);
        let made = pages(dir.path());
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            for stale in pages(&checkout).difference(&made) {
                std::fs::remove_file(checkout.join(stale)).unwrap();
            }
            for name in &made {
                std::fs::write(checkout.join(name), unrevised(read(name))).unwrap();
            }
        }
        assert_eq!(
            pages(&checkout),
            made,
            "man/ holds other pages than vmcust generate man makes; \
             UPDATE_GOLDEN=1 cargo test --lib generate"
        );
        for name in &made {
            let kept = std::fs::read_to_string(checkout.join(name)).unwrap();
            assert!(
                kept == unrevised(read(name)),
                "man/{name} is not what vmcust generate man makes now; \
                 UPDATE_GOLDEN=1 cargo test --lib generate, then read the diff"
            );
        }
    }

    /// The units link only pages the packages ship.
    #[test]
    fn units_link_only_shipped_pages() {
        let (dir, _) = generated();
        for unit in std::fs::read_dir("systemd").unwrap() {
            let path = unit.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines().filter(|l| l.starts_with("Documentation=")) {
                for link in line["Documentation=".len()..].split_whitespace() {
                    let Some(page) = link.strip_prefix("man:") else {
                        continue;
                    };
                    let (name, section) = page.trim_end_matches(')').split_once('(').unwrap();
                    let file = dir.path().join(format!("{name}.{section}"));
                    assert!(file.is_file(), "{}: {link} is not shipped", path.display());
                }
            }
        }
    }
}
