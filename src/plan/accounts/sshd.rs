//! `ssh_pwauth`: sshd's `PasswordAuthentication`, set where cloud-init sets it — in
//! `/etc/ssh/sshd_config.d/50-cloud-init.conf` (0600) when `sshd_config` includes
//! `sshd_config.d/*.conf`, else in `sshd_config` itself: the line for the keyword is
//! changed, or one is added (before the first `Match` block, where it still applies to
//! every connection). Checked with `sshd -t` before it is installed ([`super::check`]).

use crate::facts::accounts::AccountDbFacts;
use crate::plan::{Action, Contents};

pub(crate) use crate::facts::accounts::{
    SSHD_CONFIG, SSHD_DROP_IN as DROP_IN, SSHD_DROP_IN_DIR as DROP_IN_DIR,
};
const KEY: &str = "PasswordAuthentication";

/// Whether the main file includes the drop-in directory (cloud-init's `_includes_dconf`).
fn includes_dconf(f: &AccountDbFacts) -> bool {
    match &f.sshd_config {
        None => f.sshd_config_d,
        Some(text) => text
            .lines()
            .any(|l| l.starts_with(&format!("Include {DROP_IN_DIR}/*.conf"))),
    }
}

/// `text` with `PasswordAuthentication value`; `None` when it already says so.
pub(crate) fn set_option(text: &str, value: &str) -> Option<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut found = false;
    let mut changed = false;
    let mut first_match = None;
    for (i, l) in lines.iter_mut().enumerate() {
        let t = l.trim_start();
        let mut words = t.split_whitespace();
        let Some(key) = words.next().filter(|k| !k.starts_with('#')) else {
            continue;
        };
        if key.eq_ignore_ascii_case("match") && first_match.is_none() {
            first_match = Some(i);
        }
        if key.eq_ignore_ascii_case(KEY) && first_match.is_none() {
            found = true;
            if words.next() != Some(value) || words.next().is_some() {
                *l = format!("{KEY} {value}");
                changed = true;
            }
        }
    }
    if !found {
        let line = format!("{KEY} {value}");
        match first_match {
            Some(i) => lines.insert(i, line),
            None => lines.push(line),
        }
        changed = true;
    }
    changed.then(|| {
        let mut out = lines.join("\n");
        out.push('\n');
        out
    })
}

/// Plans the change; empty when sshd already has it.
pub(crate) fn plan(yes: bool, f: &AccountDbFacts) -> Vec<Action> {
    let value = if yes { "yes" } else { "no" };
    // An existing file keeps its mode; a new drop-in is 0600 (cloud-init's), a new main
    // file 0644.
    let (path, current, mode) = if includes_dconf(f) {
        (
            DROP_IN,
            f.sshd_dropin.as_deref(),
            f.sshd_modes.1.unwrap_or(0o600),
        )
    } else {
        (
            SSHD_CONFIG,
            f.sshd_config.as_deref(),
            f.sshd_modes.0.unwrap_or(0o644),
        )
    };
    match set_option(current.unwrap_or(""), value) {
        None => Vec::new(),
        Some(text) => vec![Action::write_file(
            path,
            Contents::text(text),
            mode,
            "sshd PasswordAuthentication (cloud-config ssh_pwauth)",
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_is_changed_or_added_before_match() {
        let table: &[(&str, &str, Option<&str>)] = &[
            ("", "no", Some("PasswordAuthentication no\n")),
            ("PasswordAuthentication no\n", "no", None),
            ("passwordauthentication  yes\nPort 22\n", "no", Some("PasswordAuthentication no\nPort 22\n")),
            ("#PasswordAuthentication yes\n", "yes", Some("#PasswordAuthentication yes\nPasswordAuthentication yes\n")),
            (
                "Port 22\nMatch User x\n  PasswordAuthentication yes\n",
                "no",
                Some("Port 22\nPasswordAuthentication no\nMatch User x\n  PasswordAuthentication yes\n"),
            ),
        ];
        for (text, v, want) in table {
            assert_eq!(set_option(text, v).as_deref(), *want, "{text:?}");
        }
    }

    #[test]
    fn drop_in_when_included() {
        let f = AccountDbFacts {
            sshd_config: Some("Include /etc/ssh/sshd_config.d/*.conf\n".into()),
            ..Default::default()
        };
        assert_eq!(plan(true, &f)[0].path(), std::path::Path::new(DROP_IN));
        let f = AccountDbFacts {
            sshd_config: Some("Port 22\n".into()),
            sshd_modes: (Some(0o600), None),
            ..Default::default()
        };
        let a = plan(true, &f);
        assert_eq!(a[0].path(), std::path::Path::new(SSHD_CONFIG));
        assert!(matches!(a[0], Action::WriteFile { mode: 0o600, .. }));
    }
}
