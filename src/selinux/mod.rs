//! SELinux labels for what vmcust writes: a replaced file keeps the label it had, and a
//! file, link or directory vmcust creates gets the label the root's own policy gives its
//! path (as `restorecon` would). A root without a policy costs one failed open of
//! `/etc/selinux/config`, once; the policy is read only when a label is first needed.
//! docs/selinux.md.

pub(crate) mod file_contexts;
pub(crate) mod xattr;

use std::io;
use std::path::Path;
use std::sync::OnceLock;

pub(crate) use file_contexts::{Context, FileContexts, Input, Kind};

/// Where a root's policy files are read from. The root type (`root::Root`) implements it (every
/// read confined to the root and capped); this module reads nothing else, and so needs
/// nothing above it.
pub trait PolicyFiles {
    /// The text of `path` (absolute, as seen inside the root), read only up to `max`
    /// bytes; `None` when it does not exist, an error when it is larger.
    fn read_policy_file(&self, path: &Path, max: u64) -> io::Result<Option<String>>;
    /// The root's directory, for messages.
    fn root_dir(&self) -> &Path;
}

/// Where a root says which policy it uses.
pub(crate) const CONFIG: &str = "/etc/selinux/config";
/// The largest policy file read (a full targeted policy's `file_contexts` is under 1 MiB).
const MAX_POLICY_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// libselinux's policy type when the config names none.
const DEFAULT_TYPE: &str = "targeted";

/// The policy of one root, read on first use. `None` inside: the root has no policy (or
/// SELinux is disabled in its config), so nothing is labelled from it.
#[derive(Debug, Default)]
pub struct Labeler {
    policy: OnceLock<Result<Option<FileContexts>, String>>,
}

impl Labeler {
    /// A labeler that has read nothing yet.
    pub fn new() -> Labeler {
        Labeler::default()
    }

    /// The label (attribute bytes) the root's policy gives `path` (absolute, as seen
    /// inside the root) as a new `kind`; `None` when the root has no policy or the policy
    /// gives the path no label.
    pub fn label_for(
        &self,
        root: &dyn PolicyFiles,
        path: &Path,
        kind: Kind,
    ) -> io::Result<Option<Vec<u8>>> {
        let policy = self.policy.get_or_init(|| load(root));
        let policy = match policy {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(None),
            Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e.clone())),
        };
        use std::os::unix::ffi::OsStrExt as _;
        policy
            .lookup(path.as_os_str().as_bytes(), kind)
            .map(|c| c.map(Context::xattr_value))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, policy_error(root, &e)))
    }

    /// Whether the root has a policy that labels files (reading it if not done yet).
    pub fn has_policy(&self, root: &dyn PolicyFiles) -> io::Result<bool> {
        match self.policy.get_or_init(|| load(root)) {
            Ok(p) => Ok(p.is_some()),
            Err(e) => Err(io::Error::new(io::ErrorKind::InvalidData, e.clone())),
        }
    }
}

fn policy_error(root: &dyn PolicyFiles, e: &dyn std::fmt::Display) -> String {
    format!(
        "SELinux file contexts of {}: {e}; fix or remove the line (the same file makes \
         restorecon fail), or set SELINUX=disabled in {CONFIG}",
        root.root_dir().display()
    )
}

/// What `/etc/selinux/config` says: whether SELinux is on and the policy type.
fn policy_type(config: &str) -> Result<Option<String>, String> {
    let mut state = None;
    let mut kind = None;
    for line in config.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            let value = value.trim().trim_matches('"');
            match key.trim() {
                "SELINUX" => state = Some(value.to_ascii_lowercase()),
                "SELINUXTYPE" => kind = Some(value.to_owned()),
                _ => {}
            }
        }
    }
    if state.as_deref() == Some("disabled") {
        return Ok(None);
    }
    let kind = kind.unwrap_or_else(|| DEFAULT_TYPE.to_owned());
    let valid = !kind.is_empty()
        && kind != "."
        && kind != ".."
        && kind
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    if !valid {
        return Err(format!(
            "{CONFIG}: SELINUXTYPE={kind:?} is not a policy name (letters, digits, _ . -)"
        ));
    }
    Ok(Some(kind))
}

/// Reads the policy of `root`; `None` when it has none.
fn load(root: &dyn PolicyFiles) -> Result<Option<FileContexts>, String> {
    let read = |p: &str| {
        root.read_policy_file(Path::new(p), MAX_POLICY_FILE_BYTES)
            .map_err(|e| format!("{p}: {e}"))
    };
    let Some(config) = read(CONFIG)? else {
        return Ok(None);
    };
    let Some(kind) = policy_type(&config).map_err(|e| policy_error(root, &e))? else {
        return Ok(None);
    };
    let base = format!("/etc/selinux/{kind}/contexts/files/file_contexts");
    let Some(base_text) = read(&base)? else {
        return Ok(None);
    };
    let homedirs = format!("{base}.homedirs");
    let local = format!("{base}.local");
    let homedirs_text = read(&homedirs)?;
    let local_text = read(&local)?;
    let mut inputs = vec![Input {
        name: &base,
        text: &base_text,
    }];
    for (name, text) in [(&homedirs, &homedirs_text), (&local, &local_text)] {
        if let Some(text) = text {
            inputs.push(Input { name, text });
        }
    }
    let subs = read(&format!("{base}.subs"))?;
    let dist_subs = read(&format!("{base}.subs_dist"))?;
    FileContexts::parse(&inputs, subs.as_deref(), dist_subs.as_deref())
        .map(Some)
        .map_err(|e| policy_error(root, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_names_the_policy() {
        let cases: &[(&str, Result<Option<&str>, ()>)] = &[
            (
                "SELINUX=enforcing\nSELINUXTYPE=targeted\n",
                Ok(Some("targeted")),
            ),
            ("SELINUX=permissive\nSELINUXTYPE=mls\n", Ok(Some("mls"))),
            ("# c\nSELINUX=enforcing\n", Ok(Some("targeted"))),
            ("SELINUX=disabled\nSELINUXTYPE=targeted\n", Ok(None)),
            ("SELINUX=Disabled\n", Ok(None)),
            ("SELINUXTYPE=\"default\"\n", Ok(Some("default"))),
            ("SELINUXTYPE=../../tmp\n", Err(())),
            ("SELINUXTYPE=..\n", Err(())),
        ];
        for (text, want) in cases {
            let got = policy_type(text).map_err(|_| ());
            assert_eq!(
                got.as_ref().map(Option::as_deref),
                want.as_ref().map(|o| *o),
                "{text:?}"
            );
        }
    }
}
