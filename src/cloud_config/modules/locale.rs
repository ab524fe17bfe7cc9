//! `locale` (`locale`, `locale_configfile`): the system locale, as cloud-init's `cc_locale`
//! sets it per distribution family — Debian: the locale enabled in `/etc/locale.gen`
//! (its line from `/usr/share/i18n/SUPPORTED`), `locale-gen --keep-existing` run in the
//! root, then `LANG=` in `/etc/default/locale`; RHEL and SUSE (systemd): `LANG=` in
//! `/etc/locale.conf`. Files are plan actions (rolled back on a failure); unlike
//! cloud-init, nothing is done without a `locale` key, and `update-locale` is not run
//! (vmcust sets the `LANG=` line it would set).

use serde::Serialize;

use crate::cloud_config::apply::conf_text::set_assignment;
use crate::cloud_config::apply::driver::{absent, failed, from_end, skipped, ModuleOutcome, Step};
use crate::cloud_config::apply::exec::RunEnd;
use crate::cloud_config::apply::preview::{action_lines, run_lines, Look};
use crate::cloud_config::modules::write_files::absolute;
use crate::cloud_config::node::{Node, Value};
use crate::cloud_config::read::Reader;
use crate::cloud_config::CloudConfig;
use crate::facts::{Current, Facts, Family, Wanted};
use crate::model::quote;
use crate::plan::{Action, Contents};

/// Debian's locale file.
pub(crate) const DEBIAN_FILE: &str = "/etc/default/locale";
/// systemd's locale file (RHEL, SUSE).
pub(crate) const SYSTEMD_FILE: &str = "/etc/locale.conf";
/// The locales Debian's `locale-gen` generates.
pub(crate) const LOCALE_GEN: &str = "/etc/locale.gen";
/// The locales glibc supports, one `name charset` line each.
pub const SUPPORTED: &str = "/usr/share/i18n/SUPPORTED";
/// Locales that need no generating.
const BUILT_IN: &[&str] = &["C", "C.UTF-8", "C.utf8", "POSIX"];

/// `locale`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocaleKey {
    /// `false`: the module is skipped.
    Off,
    /// A locale name (`de_DE.UTF-8`).
    Name(String),
}

/// A locale name: letters, digits and `_ . @ -`, as glibc names them.
fn name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.as_bytes()[0].is_ascii_alphabetic()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.@-".contains(&b))
}

/// `locale`.
pub(crate) fn parse(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    match &node.value {
        Value::Bool(false) => cfg.locale = Some(LocaleKey::Off),
        Value::Str(_) => {
            let Some(s) = r.line(node, key, 64) else {
                return;
            };
            if name_ok(&s) {
                cfg.locale = Some(LocaleKey::Name(s));
            } else {
                r.error(
                    node,
                    key,
                    format!(
                        "{} is not a locale name (de_DE.UTF-8, sr_RS@latin, C.UTF-8)",
                        quote(&s)
                    ),
                );
            }
        }
        _ => r.wrong_type(node, key, "a locale name such as de_DE.UTF-8, or false"),
    }
}

/// `locale_configfile`.
pub(crate) fn parse_configfile(cfg: &mut CloudConfig, r: &mut Reader, key: &str, node: &Node) {
    cfg.locale_configfile = absolute(r, key, node);
}

fn config_file(cfg: &CloudConfig, family: Family) -> &str {
    cfg.locale_configfile
        .as_deref()
        .unwrap_or(if family == Family::Debian {
            DEBIAN_FILE
        } else {
            SYSTEMD_FILE
        })
}

/// The files the module reads: its configuration file (either default), `locale.gen`
/// and glibc's list.
pub(crate) fn looked_at(cfg: &CloudConfig) -> Vec<String> {
    if !matches!(cfg.locale, Some(LocaleKey::Name(_))) {
        return Vec::new();
    }
    let mut out = vec![
        config_file(cfg, Family::Debian).to_string(),
        config_file(cfg, Family::Rhel).to_string(),
        LOCALE_GEN.to_string(),
        SUPPORTED.to_string(),
    ];
    out.dedup();
    out
}

fn text_of(facts: &Facts, path: &str) -> Option<String> {
    match facts.files.get(path) {
        Some(Current::File(b)) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

/// `LANG` of an assignment file, its quotes removed.
fn lang_of(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l
            .trim()
            .strip_prefix("LANG")?
            .trim_start()
            .strip_prefix('=')?;
        Some(v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// The `/etc/locale.gen` line for `locale`, from glibc's `SUPPORTED` list: the exact
/// name, else the name's UTF-8 entry (`fi_FI` → `fi_FI.UTF-8 UTF-8`); a name the list
/// lacks is taken as UTF-8.
pub fn supported_line(supported: Option<&str>, locale: &str) -> String {
    let entries: Vec<(&str, &str)> = supported
        .unwrap_or("")
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?, w.next()?))
        })
        .collect();
    let utf8 = format!("{locale}.UTF-8");
    let preferred = [utf8.as_str(), locale];
    // A name without a charset prefers its UTF-8 entry (`fi_FI` has an ISO-8859-1 one too).
    let order = if locale.contains('.') {
        &preferred[1..]
    } else {
        &preferred[..]
    };
    for want in order {
        if let Some((n, c)) = entries.iter().find(|(n, _)| n == want) {
            return format!("{n} {c}");
        }
    }
    // `fi_FI.ISO-8859-1` is the entry `fi_FI ISO-8859-1`.
    if let Some((base, charset)) = locale.split_once('.') {
        if let Some((n, c)) = entries
            .iter()
            .find(|(n, c)| *n == base && c.eq_ignore_ascii_case(charset))
        {
            return format!("{n} {c}");
        }
    }
    match locale.split_once('.') {
        Some(_) => format!("{locale} UTF-8"),
        None => format!("{utf8} UTF-8"),
    }
}

/// `/etc/locale.gen` with `line` enabled: a commented copy uncommented in place, else the
/// line added; `None` when it is enabled already.
pub(crate) fn enable_in_locale_gen(old: Option<&str>, line: &str) -> Option<String> {
    let old = old.unwrap_or("");
    let norm = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    if old.lines().any(|l| norm(l) == line) {
        return None;
    }
    let mut out = String::with_capacity(old.len() + line.len() + 1);
    let mut done = false;
    for l in old.lines() {
        let uncommented = l.trim_start().strip_prefix('#').map(norm);
        if !done && uncommented.as_deref() == Some(line) {
            out.push_str(line);
            done = true;
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    if !done {
        out.push_str(line);
        out.push('\n');
    }
    Some(out)
}

/// What the module does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LocalePlan {
    /// Files written before the command (`/etc/locale.gen`).
    pub before: Vec<Action>,
    /// The command (`locale-gen --keep-existing`), if any.
    pub commands: Vec<Vec<String>>,
    /// The configuration file, written last.
    pub config: Vec<Action>,
}

const HEADER: &str = "# Created by vmcust (cloud-config locale)\n";

/// Plans the locale; `Ok(Err(why))` when nothing is to be done.
pub fn plan_locale(cfg: &CloudConfig, facts: &Facts) -> Result<Result<LocalePlan, String>, String> {
    let locale = match &cfg.locale {
        None => return Ok(Err("no locale".into())),
        Some(LocaleKey::Off) => return Ok(Err("locale is false".into())),
        Some(LocaleKey::Name(n)) => n,
    };
    let file = config_file(cfg, facts.family);
    let old = text_of(facts, file);
    if !matches!(
        facts.files.get(file),
        None | Some(Current::Missing) | Some(Current::File(_))
    ) {
        return Err(format!("locale: {file} in the root is not a regular file"));
    }
    let mut plan = LocalePlan::default();
    match facts.family {
        Family::Debian => {
            let current = old.as_deref().and_then(lang_of);
            if current.is_some_and(|c| c.eq_ignore_ascii_case(locale)) {
                return Ok(Err(format!("LANG is {locale} in {file} already")));
            }
            if !BUILT_IN.contains(&locale.as_str()) {
                let line = supported_line(text_of(facts, SUPPORTED).as_deref(), locale);
                if let Some(text) =
                    enable_in_locale_gen(text_of(facts, LOCALE_GEN).as_deref(), &line)
                {
                    plan.before.push(Action::write_file(
                        LOCALE_GEN,
                        Contents::text(text),
                        0o644,
                        "the locales to generate (cloud-config locale)",
                    ));
                }
                plan.commands
                    .push(vec!["locale-gen".into(), "--keep-existing".into()]);
            }
            let text = set_assignment(old.as_deref(), "", "LANG", locale)
                .map_err(|e| format!("locale: {e}"))?;
            plan.config.push(Action::write_file(
                file,
                Contents::text(text),
                0o644,
                "the system locale (cloud-config locale)",
            ));
        }
        Family::Rhel | Family::Suse => {
            let text = set_assignment(old.as_deref(), HEADER, "LANG", locale)
                .map_err(|e| format!("locale: {e}"))?;
            if old.as_deref() == Some(text.as_str()) {
                return Ok(Err(format!("LANG is {locale} in {file} already")));
            }
            plan.config.push(Action::write_file(
                file,
                Contents::text(text),
                0o644,
                "the system locale (cloud-config locale)",
            ));
        }
        Family::Other => {
            return Ok(Err(
                "vmcust sets the locale on the Debian, RHEL and SUSE families only; this root \
                 is none of them"
                    .into(),
            ))
        }
    }
    Ok(Ok(plan))
}

/// The program Debian's way runs.
pub(crate) fn programs(cfg: &CloudConfig) -> &'static [&'static str] {
    if matches!(cfg.locale, Some(LocaleKey::Name(_))) {
        &["locale-gen"]
    } else {
        &[]
    }
}

/// Enables and generates the locale, then sets it.
pub(crate) fn run(s: &Step) -> ModuleOutcome {
    if s.cfg.locale.is_none() {
        return absent("locale");
    }
    let p = match plan_locale(s.cfg, s.cc) {
        Err(e) => return failed(e),
        Ok(Err(why)) => return skipped(why),
        Ok(Ok(p)) => p,
    };
    if !p.commands.is_empty() && !s.cc.has("locale-gen") {
        return failed(
            "locale: locale-gen is not in the root; install the locales package in the template",
        );
    }
    let mut notes = Vec::new();
    if !p.before.is_empty() {
        match s.apply(p.before) {
            Err(e) => return failed(e),
            Ok(n) => notes.push(n),
        }
    }
    match s.follow_up("locale", &p.commands) {
        RunEnd::Succeeded => match s.apply(p.config) {
            Err(e) => failed(e),
            Ok(n) => {
                notes.push(n);
                ModuleOutcome::Ran {
                    note: notes.join("; "),
                }
            }
        },
        other => from_end(other, String::new()),
    }
}

/// The files and the command.
pub(crate) fn preview(l: &Look) -> Vec<String> {
    match plan_locale(l.cfg, l.facts) {
        Err(e) => vec![format!("fails: {e}")],
        Ok(Err(why)) => vec![format!("nothing: {why}")],
        Ok(Ok(p)) => p
            .before
            .iter()
            .flat_map(action_lines)
            .chain(run_lines(&p.commands))
            .chain(p.config.iter().flat_map(action_lines))
            .collect(),
    }
}

/// What it needs of the root's facts: what the files it looks at hold now, and their
/// modes.
pub(crate) fn wants(cfg: &CloudConfig, w: &mut Wanted) {
    w.files.extend(looked_at(cfg));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::document;
    use crate::cloud_config::read::Severity;

    fn facts(family: Family, files: &[(&str, &str)]) -> Facts {
        let mut f = Facts {
            family,
            ..Default::default()
        };
        for (p, t) in files {
            f.files
                .insert(p.to_string(), Current::File(t.as_bytes().to_vec()));
        }
        f
    }

    fn shown(doc: &str, f: &Facts) -> String {
        let (cfg, p) = document::from_text(doc);
        assert!(p.iter().all(|p| p.severity != Severity::Error), "{p:?}");
        match plan_locale(&cfg, f).unwrap() {
            Err(why) => format!("nothing: {why}"),
            Ok(p) => p
                .before
                .iter()
                .chain(&p.config)
                .map(|a| match a {
                    Action::WriteFile { path, contents, .. } => {
                        format!("{}={:?}", path.display(), contents.display())
                    }
                    o => format!("{o:?}"),
                })
                .chain(p.commands.iter().map(|c| c.join(" ")))
                .collect::<Vec<_>>()
                .join(" | "),
        }
    }

    const SUPP: &str = "de_DE.UTF-8 UTF-8\nde_DE ISO-8859-1\nfi_FI ISO-8859-1\nfi_FI.UTF-8 UTF-8\nsr_RS@latin UTF-8\n";

    #[test]
    fn per_family_as_cloud_init() {
        let deb = facts(
            Family::Debian,
            &[
                (SUPPORTED, SUPP),
                (LOCALE_GEN, "# de_DE.UTF-8 UTF-8\n# en_US.UTF-8 UTF-8\n"),
                (DEBIAN_FILE, "LANG=en_US.UTF-8\n"),
            ],
        );
        let table: &[(&str, &Facts, &str)] = &[
            (
                "locale: de_DE.UTF-8",
                &deb,
                "/etc/locale.gen=\"de_DE.UTF-8 UTF-8\\n# en_US.UTF-8 UTF-8\\n\" | /etc/default/locale=\"LANG=de_DE.UTF-8\\n\" | locale-gen --keep-existing",
            ),
            (
                "locale: fi_FI",
                &deb,
                "/etc/locale.gen=\"# de_DE.UTF-8 UTF-8\\n# en_US.UTF-8 UTF-8\\nfi_FI.UTF-8 UTF-8\\n\" | /etc/default/locale=\"LANG=fi_FI\\n\" | locale-gen --keep-existing",
            ),
            ("locale: en_us.utf-8", &deb, "nothing: LANG is en_us.utf-8 in /etc/default/locale already"),
            ("locale: C.UTF-8", &deb, "/etc/default/locale=\"LANG=C.UTF-8\\n\""),
            (
                "locale: xx_YY\nlocale_configfile: /etc/locale.d/lang",
                &deb,
                "/etc/locale.gen=\"# de_DE.UTF-8 UTF-8\\n# en_US.UTF-8 UTF-8\\nxx_YY.UTF-8 UTF-8\\n\" | /etc/locale.d/lang=\"LANG=xx_YY\\n\" | locale-gen --keep-existing",
            ),
            (
                "locale: de_DE.UTF-8",
                &facts(Family::Rhel, &[(SYSTEMD_FILE, "LANG=\"en_US.UTF-8\"\nLC_TIME=C\n")]),
                "/etc/locale.conf=\"LANG=de_DE.UTF-8\\nLC_TIME=C\\n\"",
            ),
            (
                "locale: de_DE.UTF-8",
                &facts(Family::Suse, &[]),
                "/etc/locale.conf=\"# Created by vmcust (cloud-config locale)\\nLANG=de_DE.UTF-8\\n\"",
            ),
            ("locale: de_DE.UTF-8", &facts(Family::Rhel, &[(SYSTEMD_FILE, "LANG=de_DE.UTF-8\n")]), "nothing: LANG is"),
            ("locale: de_DE.UTF-8", &facts(Family::Other, &[]), "nothing: vmcust sets the locale"),
            ("locale: false", &deb, "nothing: locale is false"),
            ("{}", &deb, "nothing: no locale"),
        ];
        for (doc, f, want) in table {
            let got = shown(doc, f);
            assert!(got.starts_with(want), "{doc}:\n got {got}\nwant {want}");
        }
    }

    #[test]
    fn locale_gen_lines_from_the_supported_list() {
        let table: &[(Option<&str>, &str, &str)] = &[
            (Some(SUPP), "de_DE.UTF-8", "de_DE.UTF-8 UTF-8"),
            (Some(SUPP), "fi_FI", "fi_FI.UTF-8 UTF-8"),
            (Some(SUPP), "de_DE", "de_DE.UTF-8 UTF-8"),
            (Some(SUPP), "de_DE.iso-8859-1", "de_DE ISO-8859-1"),
            (Some(SUPP), "sr_RS@latin", "sr_RS@latin UTF-8"),
            (Some(SUPP), "xx_YY", "xx_YY.UTF-8 UTF-8"),
            (None, "de_DE.UTF-8", "de_DE.UTF-8 UTF-8"),
        ];
        for (supp, name, want) in table {
            assert_eq!(supported_line(*supp, name), *want, "{name}");
        }
        let table: &[(Option<&str>, Option<&str>)] = &[
            (None, Some("de_DE.UTF-8 UTF-8\n")),
            (
                Some("#  de_DE.UTF-8   UTF-8\n"),
                Some("de_DE.UTF-8 UTF-8\n"),
            ),
            (Some("de_DE.UTF-8 UTF-8\n"), None),
            (
                Some("en_US.UTF-8 UTF-8"),
                Some("en_US.UTF-8 UTF-8\nde_DE.UTF-8 UTF-8\n"),
            ),
        ];
        for (old, want) in table {
            assert_eq!(
                enable_in_locale_gen(*old, "de_DE.UTF-8 UTF-8").as_deref(),
                *want,
                "{old:?}"
            );
        }
    }

    #[test]
    fn hostile_locales_are_refused_at_their_key() {
        super::super::test_support::assert_refused(&[
            ("locale: \"de_DE\\nLC_ALL=x\"", "locale: "),
            ("locale: 'de DE'", "not a locale name"),
            ("locale: '$(reboot)'", "not a locale name"),
            ("locale: true", "or false"),
            ("locale_configfile: etc/x", "not an absolute path"),
        ]);
    }
}
