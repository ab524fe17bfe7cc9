//! Re-sealing the network: the inverse of what a customization did to the template's
//! network configuration, so `clean --network-configs` leaves the template as it was.
//!
//! A customization (`src/plan/network`) does three things, each undone here:
//!
//! | customization | clean |
//! | --- | --- |
//! | writes its own files (first line [`HEADER`], `*vmcust*` names) in the stacks' directories | removes them |
//! | moves a template file that would fight ours into `<dir>/.vmcust-disabled/` | moves it back (a rename: bytes, mode and owner as they were) and removes the empty directory |
//! | rewrites `/etc/network/interfaces`, `/etc/resolv.conf` or SUSE's `config`, keeping the original once as `<file>.vmcust-backup` | renames the backup over the file; a rewritten file with no backup was created by vmcust and is removed |
//!
//! Everything is checked before anything changes: a file in the way that vmcust did not
//! write (someone put it there after the customization) is an error naming both files,
//! and nothing is touched.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::remove::{self, Kind};
use crate::plan::network::neutralise::DISABLED_DIR;
use crate::plan::network::{eni, names, netplan, networkd, networkmanager, resolv, sysconfig};
use crate::plan::network::{sysconfig_suse, HEADER};
use crate::root::Root;

/// The directories vmcust writes network files into and moves template files out of.
fn stack_dirs() -> [&'static Path; 8] {
    let parent = |f: &'static str| Path::new(f).parent().unwrap_or(Path::new("/"));
    [
        parent(netplan::NETPLAN_FILE),
        Path::new(networkd::NETWORKD_DIR),
        Path::new(networkmanager::CONNECTIONS_DIR),
        parent(networkmanager::CONF_FILE),
        Path::new(sysconfig::SCRIPTS_DIR),
        Path::new(sysconfig_suse::NETWORK_DIR),
        parent(eni::ENI_FILE),
        parent(names::UDEV_RULES),
    ]
}

/// Files vmcust rewrites in place, each with the backup of the template's original.
const REWRITTEN: &[(&str, &str)] = &[
    (eni::MAIN_FILE, eni::MAIN_BACKUP),
    (resolv::RESOLV_CONF, resolv::RESOLV_BACKUP),
    (sysconfig_suse::CONFIG_FILE, sysconfig_suse::CONFIG_BACKUP),
];

/// Names vmcust gives its files, for a file whose header line a tool rewrote away
/// (NetworkManager rewrites a keyfile changed with `nmcli`): (directory, prefix, suffix).
const OUR_NAMES: &[(&str, &str, &str)] = &[
    ("/etc/netplan", "50-vmcust", ".yaml"),
    ("/etc/systemd/network", "10-vmcust-", ""),
    (
        "/etc/NetworkManager/system-connections",
        "vmcust-",
        ".nmconnection",
    ),
    ("/etc/NetworkManager/conf.d", "90-vmcust", ".conf"),
    ("/etc/network/interfaces.d", "50-vmcust", ""),
    ("/etc/udev/rules.d", "70-vmcust-net-names", ".rules"),
];

/// What re-sealing the network will do, worked out before anything changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Restore {
    /// vmcust's own files, removed first.
    pub remove: Vec<PathBuf>,
    /// Template files put back: (where the customization kept it, where it belongs).
    pub put_back: Vec<(PathBuf, PathBuf)>,
    /// The `.vmcust-disabled` directories, removed once empty.
    pub dirs: Vec<PathBuf>,
}

/// Whether the file at `path` was written by vmcust: a regular file starting with
/// [`HEADER`] (only that many bytes are read, through no link), or one of its names.
fn ours(root: &Root, path: &Path) -> Result<bool> {
    let (host, kind) = remove::look(root, path)?;
    if kind != Kind::Other {
        return Ok(false);
    }
    let named = OUR_NAMES.iter().any(|(dir, prefix, suffix)| {
        path.parent() == Some(Path::new(dir))
            && path.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with(prefix) && n.ends_with(suffix)
            })
    });
    if named {
        return Ok(true);
    }
    let header = HEADER.trim_end().as_bytes();
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&host)
        .with_context(|| format!("opening {}", path.display()))?;
    if !file.metadata()?.is_file() {
        return Ok(false);
    }
    let start = vmcust_imc::read_at_most(file, header.len() as u64, header.len() as u64)
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(start.bytes == header)
}

/// The network files vmcust wrote in the root (not the rewritten ones), as paths inside it.
pub(super) fn written_files(root: &Root) -> Result<Vec<PathBuf>> {
    let rewritten: BTreeSet<&Path> = REWRITTEN.iter().map(|(f, _)| Path::new(*f)).collect();
    let mut found = Vec::new();
    for dir in stack_dirs() {
        // Listed through a link within the root, as the customization wrote through it;
        // only single files are removed from it.
        for name in root.list_dir(dir).unwrap_or_default() {
            let path = dir.join(&name);
            if !rewritten.contains(path.as_path()) && ours(root, &path)? {
                found.push(path);
            }
        }
    }
    Ok(found)
}

/// Works out how to put the template's network configuration back; an error, with
/// nothing changed, when a file vmcust did not write is in the way.
pub(super) fn plan(root: &Root) -> Result<Restore> {
    let mut r = Restore {
        remove: written_files(root)?,
        ..Restore::default()
    };
    let mut conflicts = Vec::new();
    for (file, backup) in REWRITTEN {
        let (file, backup) = (Path::new(file), Path::new(backup));
        let file_ours = ours(root, file)?;
        match remove::look(root, backup)?.1 {
            Kind::Missing => {
                if file_ours {
                    r.remove.push(file.to_path_buf());
                }
            }
            Kind::Dir => conflicts.push(format!(
                "{} is a directory, not vmcust's backup of {}",
                backup.display(),
                file.display()
            )),
            Kind::Symlink | Kind::Other => {
                if file_ours || remove::look(root, file)?.1 == Kind::Missing {
                    r.put_back.push((backup.to_path_buf(), file.to_path_buf()));
                } else {
                    conflicts.push(in_the_way(file, backup));
                }
            }
        }
    }
    for dir in stack_dirs() {
        let disabled = dir.join(DISABLED_DIR);
        match remove::look(root, &disabled)?.1 {
            Kind::Missing => continue,
            Kind::Dir => {}
            Kind::Symlink | Kind::Other => {
                conflicts.push(format!(
                    "{} is not a directory vmcust made (it is a link or a file); remove it by hand",
                    disabled.display()
                ));
                continue;
            }
        }
        for name in remove::names_in(root, &disabled)? {
            let (from, to) = (disabled.join(&name), dir.join(&name));
            let free = remove::look(root, &to)?.1 == Kind::Missing || r.remove.contains(&to);
            if free {
                r.put_back.push((from, to));
            } else {
                conflicts.push(in_the_way(&to, &from));
            }
        }
        r.dirs.push(disabled);
    }
    if conflicts.is_empty() {
        return Ok(r);
    }
    Err(crate::failure::Failure::invalid(format!(
        "cannot put the template's network configuration back, nothing was changed: {}",
        conflicts.join("; ")
    ))
    .into())
}

fn in_the_way(file: &Path, kept: &Path) -> String {
    format!(
        "{} was not written by vmcust and is in the way of the template's copy {}; \
         keep one of them (move the other out of the directory) and run clean again",
        file.display(),
        kept.display()
    )
}

/// Carries out `r`: vmcust's files removed, the template's renamed back (bytes, mode and
/// owner unchanged), the empty backup directories removed. Each step is one rename or
/// unlink; a run cut short is finished by running clean again.
pub(super) fn carry_out(root: &Root, r: &Restore) -> Result<()> {
    for path in &r.remove {
        remove::remove(root, path, false)?;
    }
    for (from, to) in &r.put_back {
        root.rename(from, to)
            .with_context(|| format!("moving {} back to {}", from.display(), to.display()))?;
    }
    for dir in &r.dirs {
        let (host, _) = remove::look(root, dir)?;
        fs::remove_dir(&host).with_context(|| format!("removing {}", dir.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn a_file_in_the_way_is_an_error_and_nothing_changes() {
        let (_d, root) = root();
        let put = |p: &str, t: &str| root.write_file(Path::new(p), t.as_bytes(), 0o600).unwrap();
        put("/etc/netplan/.vmcust-disabled/01-netcfg.yaml", "template");
        put("/etc/netplan/01-netcfg.yaml", "the admin's since");
        put(
            "/etc/netplan/50-vmcust.yaml",
            &format!("{HEADER}network: {{}}\n"),
        );
        let e = plan(&root).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("/etc/netplan/01-netcfg.yaml was not written by vmcust")
                && msg.contains("/etc/netplan/.vmcust-disabled/01-netcfg.yaml"),
            "{msg}"
        );
        assert_eq!(crate::failure::exit_code(&e), crate::failure::EXIT_INVALID);
        assert!(root.is_file(Path::new("/etc/netplan/50-vmcust.yaml")));
    }

    #[test]
    fn our_files_are_told_by_their_header_or_name() {
        let (_d, root) = root();
        let put = |p: &str, t: &str| root.write_file(Path::new(p), t.as_bytes(), 0o600).unwrap();
        put(
            "/etc/sysconfig/network-scripts/ifcfg-ens192",
            &format!("{HEADER}DEVICE=ens192\n"),
        );
        put(
            "/etc/sysconfig/network-scripts/ifcfg-ens224",
            "DEVICE=ens224\n",
        );
        put(
            "/etc/NetworkManager/system-connections/vmcust-ens192.nmconnection",
            "[connection]\n",
        );
        put("/etc/sysconfig/network/config", &format!("{HEADER}X=1\n"));
        assert_eq!(
            written_files(&root).unwrap(),
            [
                PathBuf::from("/etc/NetworkManager/system-connections/vmcust-ens192.nmconnection"),
                PathBuf::from("/etc/sysconfig/network-scripts/ifcfg-ens192"),
            ]
        );
    }
}
