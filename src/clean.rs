//! Sealing a template: remove what one machine's customization left behind so each clone
//! starts as a new instance (`vmcust clean`, and `cloud-init clean` in the stand-in).
//!
//! What each part removes:
//!
//! | part | removes |
//! | --- | --- |
//! | state | `/var/lib/vmcust` (instances, markers, a pending customization), `/run/vmcust/status.json`, and where no real cloud-init is installed the cloud-init records vmcust keeps (`/var/lib/cloud/data/{status,result}.json`, their `/run/cloud-init/` links, `/var/lib/cloud/instance` and each instance's `boot-finished`) |
//! | logs | `/var/log/vmcust.log` and its rotations |
//! | machine-id | empties `/etc/machine-id` (systemd makes a new one at the next boot) and removes a D-Bus copy that is not a symlink |
//! | ssh-host-keys | `/etc/ssh/ssh_host_*_key{,.pub}` |
//! | network configs | the network files vmcust wrote, and puts back the template's own that a customization moved aside or rewrote ([`network`]) |
//!
//! Nothing is followed out of what is removed: a symlink is removed as a link, a tree
//! without traversing the links in it ([`remove`]); a symlinked state directory is
//! removed as a link, never emptied.
//!
//! After removing, the template's machine-id (when kept) and SSH host key types are
//! recorded for [`crate::hygiene`], so a clone is recognised even when the template was
//! sealed without `--machine-id`.

mod network;
mod remove;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::hygiene;
use crate::root::{Existing, Root};

/// What to clean.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CleanOptions {
    /// vmcust's state: instances, markers, pending customization, run status.
    pub state: bool,
    /// vmcust's log.
    pub logs: bool,
    /// Empty the machine-id.
    pub machine_id: bool,
    /// Remove the SSH host keys.
    pub ssh_host_keys: bool,
    /// Remove the network configuration files vmcust wrote.
    pub network_configs: bool,
    /// Only say what would be removed.
    pub dry_run: bool,
}

/// What [`clean`] did (or, in a dry run, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Cleaned {
    /// Files and directories removed, as paths inside the root.
    pub removed: Vec<PathBuf>,
    /// Files emptied or written (the machine-id, hygiene records).
    pub written: Vec<PathBuf>,
    /// Template files put back: (where a customization had kept it, where it belongs).
    pub restored: Vec<(PathBuf, PathBuf)>,
}

use crate::cloud_init::boot_files;

/// vmcust's state directory.
const STATE_DIR: &str = crate::state::STATE_DIR;
/// The run status the stand-in's `cloud-init status` reads.
const STATUS_FILE: &str = crate::state::STATUS_PATH;
/// vmcust's log.
const LOG_FILE: &str = crate::state::LOG_PATH;

/// The network configuration files vmcust wrote in the root, as paths inside it.
pub(crate) fn network_files(root: &Root) -> Vec<PathBuf> {
    network::written_files(root).unwrap_or_default()
}

/// Cleans `root` as `opts` asks; see the module documentation.
pub(crate) fn clean(root: &Root, opts: &CleanOptions) -> Result<Cleaned> {
    let mut done = Cleaned::default();
    // Worked out first: a file in the way is an error before anything is removed.
    let restore = if opts.network_configs {
        Some(network::plan(root)?)
    } else {
        None
    };
    let remove = |path: &Path, done: &mut Cleaned| -> Result<()> {
        if remove::remove(root, path, opts.dry_run)? {
            done.removed.push(path.to_path_buf());
        }
        Ok(())
    };
    if opts.state {
        if remove::look(root, Path::new(STATE_DIR))?.1 == remove::Kind::Symlink {
            // Not vmcust's directory: the link goes, whatever it points at stays.
            remove(Path::new(STATE_DIR), &mut done)?;
        }
        for name in remove::names_in(root, Path::new(STATE_DIR))? {
            let path = Path::new(STATE_DIR).join(name);
            // The template's records are what a clone is recognised by; keep them.
            if path != Path::new(crate::state::HYGIENE_DIR) {
                remove(&path, &mut done)?;
            }
        }
        remove(Path::new(crate::state::LAST_ID_RECORD), &mut done)?;
        remove(Path::new(crate::state::INSTANCE_RECORD), &mut done)?;
        remove(Path::new(STATUS_FILE), &mut done)?;
        // cloud-init's records vmcust wrote (docs/boot.md, "What provisioners wait on"),
        // unless a real cloud-init owns them; never through a link.
        if crate::cloud_init::coexist::real_cloud_init(root).is_none() {
            for p in boot_files::RECORDS {
                remove(Path::new(p), &mut done)?;
            }
            let instances = Path::new(boot_files::INSTANCES);
            for id in remove::names_in(root, instances)? {
                if remove::look(root, &instances.join(&id))?.1 == remove::Kind::Dir {
                    remove(&instances.join(id).join("boot-finished"), &mut done)?;
                }
            }
        }
    }
    if opts.logs {
        let dir = Path::new(LOG_FILE).parent().unwrap_or(Path::new("/"));
        let base = Path::new(LOG_FILE)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // /var/log may be a link (to a log volume): listed through it, as the log was
        // written through it; each file is removed without following a link.
        for name in root.list_dir(dir).unwrap_or_default() {
            if name == base || name.starts_with(&format!("{base}.")) {
                remove(&dir.join(name), &mut done)?;
            }
        }
    }
    let removed_types: Vec<&str> = if opts.ssh_host_keys {
        hygiene::present_key_types(root)
    } else {
        Vec::new()
    };
    // Recorded before the machine-id is emptied and the keys go: a template sealed
    // without --machine-id is still recognised in its clones.
    if !opts.dry_run {
        done.written
            .extend(hygiene::record_template(root, &removed_types)?);
    }
    if opts.ssh_host_keys {
        for t in &removed_types {
            let key = hygiene::host_key_path(t);
            remove(&key.with_extension("pub"), &mut done)?;
            remove(&key, &mut done)?;
        }
    }
    if opts.machine_id {
        if hygiene::machine_id(root)?.is_some() {
            if !opts.dry_run {
                // Emptied, not removed: systemd then generates and keeps a new id at the
                // next boot on every version (an absent file can leave /etc read-only
                // systems without one, and "uninitialized" needs systemd 247).
                root.write_file(Path::new(hygiene::MACHINE_ID), b"", 0o444)
                    .with_context(|| format!("emptying {}", hygiene::MACHINE_ID))?;
                // The record of the id just cleared is useless now.
                remove::remove(root, Path::new(crate::state::TEMPLATE_ID_RECORD), false)?;
                done.written
                    .retain(|p| p != Path::new(crate::state::TEMPLATE_ID_RECORD));
            }
            done.written.push(PathBuf::from(hygiene::MACHINE_ID));
        }
        if let Existing::File { .. } = root
            .existing(Path::new(hygiene::DBUS_MACHINE_ID))
            .with_context(|| format!("reading {}", hygiene::DBUS_MACHINE_ID))?
        {
            remove(Path::new(hygiene::DBUS_MACHINE_ID), &mut done)?;
        }
    }
    if let Some(restore) = restore {
        if !opts.dry_run {
            network::carry_out(root, &restore)?;
        }
        done.removed.extend(restore.remove);
        done.removed.extend(restore.dirs);
        done.restored = restore.put_back;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let files: &[(&str, &str)] = &[
            ("/etc/machine-id", "0123456789abcdef0123456789abcdef\n"),
            (
                "/var/lib/dbus/machine-id",
                "0123456789abcdef0123456789abcdef\n",
            ),
            ("/var/lib/vmcust/instances/i-1/result.json", "{}"),
            ("/var/lib/vmcust/.markerfile-m1.txt", ""),
            ("/run/vmcust/status.json", "{}"),
            ("/var/log/vmcust.log", "log"),
            ("/var/log/vmcust.log.1", "old log"),
            ("/var/log/syslog", "not ours"),
            ("/etc/ssh/ssh_host_ed25519_key", "private"),
            ("/etc/ssh/ssh_host_ed25519_key.pub", "public"),
            ("/etc/ssh/sshd_config", "not ours"),
            ("/etc/netplan/50-vmcust.yaml", "network: {}"),
            ("/etc/netplan/01-netcfg.yaml", "not ours"),
        ];
        for (path, text) in files {
            root.write_file(Path::new(path), text.as_bytes(), 0o600)
                .unwrap();
        }
        (dir, root)
    }

    fn all() -> CleanOptions {
        CleanOptions {
            state: true,
            logs: true,
            machine_id: true,
            ssh_host_keys: true,
            network_configs: true,
            dry_run: false,
        }
    }

    #[test]
    fn a_dry_run_changes_nothing() {
        let (_d, root) = template();
        let opts = CleanOptions {
            dry_run: true,
            ..all()
        };
        let done = clean(&root, &opts).unwrap();
        assert_eq!(done.removed.len(), 9, "{done:?}");
        assert!(root.is_file(Path::new("/var/log/vmcust.log")));
        assert!(!root.is_dir(Path::new(crate::state::HYGIENE_DIR)));
        let id = root
            .read_text(Path::new("/etc/machine-id"))
            .unwrap()
            .unwrap();
        assert!(!id.is_empty());
    }

    #[test]
    fn everything_is_sealed_and_the_key_types_recorded() {
        let (_d, root) = template();
        let done = clean(&root, &all()).unwrap();
        for gone in [
            "/var/lib/vmcust/instances",
            "/var/lib/vmcust/.markerfile-m1.txt",
            "/run/vmcust/status.json",
            "/var/log/vmcust.log",
            "/var/log/vmcust.log.1",
            "/etc/ssh/ssh_host_ed25519_key",
            "/etc/ssh/ssh_host_ed25519_key.pub",
            "/var/lib/dbus/machine-id",
            "/etc/netplan/50-vmcust.yaml",
        ] {
            assert!(
                done.removed.contains(&PathBuf::from(gone)),
                "{gone}: {done:?}"
            );
            assert_eq!(
                root.existing(Path::new(gone)).unwrap(),
                Existing::Missing,
                "{gone}"
            );
        }
        for kept in [
            "/var/log/syslog",
            "/etc/ssh/sshd_config",
            "/etc/netplan/01-netcfg.yaml",
        ] {
            assert!(root.is_file(Path::new(kept)), "{kept}");
        }
        assert_eq!(
            root.read_text(Path::new("/etc/machine-id"))
                .unwrap()
                .unwrap(),
            ""
        );
        assert_eq!(
            root.read_text(Path::new(crate::state::KEY_TYPES_RECORD))
                .unwrap()
                .unwrap(),
            "ed25519\n"
        );
        // A cleared id needs no record: systemd makes a new one.
        assert!(!root.is_file(Path::new(crate::state::TEMPLATE_ID_RECORD)));
    }

    #[test]
    fn a_kept_machine_id_is_recorded_as_the_templates() {
        let (_d, root) = template();
        let opts = CleanOptions {
            state: true,
            ..CleanOptions::default()
        };
        let done = clean(&root, &opts).unwrap();
        assert!(done
            .written
            .contains(&PathBuf::from(crate::state::TEMPLATE_ID_RECORD)));
        // The record survives the state clean it was made with.
        assert_eq!(
            root.read_text(Path::new(crate::state::TEMPLATE_ID_RECORD))
                .unwrap()
                .unwrap()
                .trim(),
            "0123456789abcdef0123456789abcdef"
        );
        // And a clone booting with it gets a new one.
        let changed = hygiene::refresh_machine_id(&root).unwrap();
        assert!(changed.contains(&PathBuf::from(hygiene::MACHINE_ID)));
    }
}
