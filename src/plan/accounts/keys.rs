//! `authorized_keys` merging as cloud-init's `ssh_util.update_authorized_keys`: a line
//! holding the same key (type and base64) is replaced by the new one in place, the other
//! new keys are appended, everything else is kept as it is.

use crate::model::{SshKey, SSH_KEY_TYPES};

/// The `type base64` of a key line (after any options); `None` for what is not a key.
fn identity(line: &str) -> Option<(String, String)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    words
        .windows(2)
        .find(|w| SSH_KEY_TYPES.contains(&w[0]))
        .map(|w| (w[0].to_string(), w[1].to_string()))
}

/// The key line without its options: from its type on.
fn bare(line: &str) -> &str {
    let line = line.trim();
    SSH_KEY_TYPES
        .iter()
        .filter_map(|t| {
            line.match_indices(t).map(|(i, _)| i).find(|&i| {
                (i == 0 || line[..i].ends_with(char::is_whitespace))
                    && line[i + t.len()..].starts_with(char::is_whitespace)
            })
        })
        .min()
        .map_or(line, |i| &line[i..])
}

/// `key` with its own options replaced by `options` (none when empty), checked again as a
/// whole line.
pub(crate) fn with_options(key: &str, options: &str) -> Result<String, String> {
    let line = if options.is_empty() {
        bare(key).to_string()
    } else {
        format!("{options} {}", bare(key))
    };
    SshKey::parse(&line).map(|k| k.as_str().to_string())
}

/// `current` with `wanted` merged in; ends with a newline.
pub(crate) fn merge(current: &str, wanted: &[String]) -> String {
    let mut lines: Vec<String> = current.lines().map(str::to_string).collect();
    let mut appended: Vec<String> = Vec::new();
    for w in wanted {
        let id = identity(w);
        let mut found = false;
        for l in lines.iter_mut() {
            if id.is_some() && identity(l) == id {
                l.clone_from(w);
                found = true;
            }
        }
        if !found && !appended.iter().any(|a| identity(a) == id) {
            appended.push(w.clone());
        } else if !found {
            if let Some(a) = appended.iter_mut().find(|a| identity(a) == id) {
                a.clone_from(w);
            }
        }
    }
    lines.extend(appended);
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKwQShPXkfntT8srVCK4T0fXZM7NCXBG7X+sOMK3icWI";

    #[test]
    fn same_key_replaced_in_place_new_appended() {
        let rsa_like =
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINsUXJA2LBj50bAK3Pp5k8BptpXUjjq1uMLFrhzGEc/M";
        let current = format!("# mine\n{ED} old\n{rsa_like} other\n");
        let merged = merge(&current, &[format!("no-pty {ED} new"), format!("{ED} new")]);
        assert_eq!(merged, format!("# mine\n{ED} new\n{rsa_like} other\n"));
        assert_eq!(merge("", &[format!("{ED} a")]), format!("{ED} a\n"));
        assert_eq!(
            merge(&format!("{ED} a"), &[format!("{ED} a")]),
            format!("{ED} a\n")
        );
    }

    #[test]
    fn options_replace_the_keys_own() {
        assert_eq!(
            with_options(
                &format!("no-pty,from=\"a b\" {ED} c"),
                "no-agent-forwarding"
            )
            .unwrap(),
            format!("no-agent-forwarding {ED} c")
        );
        assert_eq!(
            with_options(&format!("{ED} c"), "").unwrap(),
            format!("{ED} c")
        );
        assert!(with_options(&format!("{ED} c"), "bad\"quote").is_err());
    }
}
