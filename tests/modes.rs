//! Modes that do not depend on the caller (issue 35, point 5): whatever umask vmcust is
//! started with (0 in an image build step or a script, 077 in a careful shell), every
//! file and directory it creates — the state directory, its records, the log, the lock,
//! the files it writes, what the root's programs it runs create — comes out with the
//! same mode as under the usual 022, and nothing is group- or world-writable that should
//! not be. Threat T15 (docs/security.md).

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::{text, vm::Vm, walk, SHELL_DIRS};

/// The umasks a caller may start vmcust with.
const UMASKS: [u32; 3] = [0o000, 0o022, 0o077];

/// `cmd` started with `mask` as its umask.
fn with_umask(cmd: &mut Command, mask: u32) -> &mut Command {
    // SAFETY: umask(2) is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(mask as libc::mode_t);
            Ok(())
        })
    }
}

/// The mode of every path under `root` (links and the test's shell left out).
fn modes(root: &Path) -> BTreeMap<PathBuf, u32> {
    let shell: Vec<PathBuf> = SHELL_DIRS.iter().map(|d| root.join(d)).collect();
    walk(root)
        .into_iter()
        .filter(|p| p != root && !shell.iter().any(|s| p.starts_with(s)))
        .filter_map(|p| {
            let m = fs::symlink_metadata(&p).ok()?;
            (!m.file_type().is_symlink()).then(|| {
                (
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    m.mode() & 0o7777,
                )
            })
        })
        .collect()
}

/// What a run under each umask made: the modes of the paths it created or replaced.
fn created(before: &BTreeMap<PathBuf, u32>, root: &Path) -> BTreeMap<PathBuf, u32> {
    let after = modes(root);
    after
        .into_iter()
        .filter(|(p, m)| before.get(p) != Some(m) || p.starts_with("var/lib/vmcust"))
        .collect()
}

/// The same modes under every umask, none writable by others, the state directory 0755
/// or stricter.
fn check(runs: &[(u32, BTreeMap<PathBuf, u32>)]) {
    let (_, usual) = &runs[1];
    assert!(usual.contains_key(Path::new("var/lib/vmcust")), "{usual:?}");
    for (mask, got) in runs {
        let open: Vec<_> = got.iter().filter(|(_, m)| *m & 0o022 != 0).collect();
        assert!(
            open.is_empty(),
            "umask {mask:03o}: writable by others: {open:?}"
        );
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            usual.keys().collect::<Vec<_>>(),
            "umask {mask:03o}: other paths"
        );
        for (path, mode) in got {
            assert_eq!(
                format!("{mode:o}"),
                format!("{:o}", usual[path]),
                "umask {mask:03o}: {}",
                path.display()
            );
        }
    }
}

/// `vmcust apply --root DIR --imc SPEC` under each umask.
#[test]
fn apply_makes_the_same_modes_under_any_umask() {
    let spec = support::example("static-2nic-ipv6.cfg");
    let runs: Vec<(u32, BTreeMap<PathBuf, u32>)> = UMASKS
        .iter()
        .map(|&mask| {
            let root = support::scratch_root();
            let before = modes(root.path());
            let out = with_umask(&mut Command::new(env!("CARGO_BIN_EXE_vmcust")), mask)
                .args(["apply", "--root"])
                .arg(root.path())
                .arg("--imc")
                .arg(&spec)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            (mask, created(&before, root.path()))
        })
        .collect();
    check(&runs);
}

/// A boot (early and late stage) of raw cloud-init data with `write_files` and a
/// `runcmd` that creates a file and a directory (run sealed inside the root, it inherits
/// vmcust's umask), under each umask.
#[test]
fn a_boot_makes_the_same_modes_under_any_umask() {
    support::require_root("the runcmd runs sealed inside the root");
    let md = "{\"instance-id\": \"modes-1\", \"local-hostname\": \"modes\"}";
    let ud = "#cloud-config\nwrite_files:\n- path: /etc/made-by-write-files\n  content: x\n\
              - path: /opt/new/dir/file\n  content: y\n\
              runcmd:\n- touch /root/made-by-runcmd\n- mkdir /root/dir-by-runcmd\n";
    let runs: Vec<(u32, BTreeMap<PathBuf, u32>)> = UMASKS
        .iter()
        .map(|&mask| {
            let vm = Vm::new();
            fs::create_dir_all(vm.path("/root")).unwrap();
            // The account files a cloud-config's default user needs.
            fs::write(vm.path("/etc/group"), "root:x:0:\n").unwrap();
            fs::create_dir_all(vm.path("/home")).unwrap();
            vm.hand_over(
                &fs::read_to_string(support::example("raw-cloud-init.cfg")).unwrap(),
                &[("metadata", md), ("userdata", ud)],
            );
            let before = modes(vm.root.path());
            for stage in ["early", "late"] {
                let out = with_umask(&mut vm.command(stage, 0), mask)
                    .output()
                    .unwrap();
                assert_eq!(out.status.code(), Some(0), "{stage}: {}", text(&out.stderr));
            }
            let made = created(&before, vm.root.path());
            for p in [
                "etc/made-by-write-files",
                "opt/new/dir",
                "root/made-by-runcmd",
                "root/dir-by-runcmd",
                "var/log/vmcust.log",
            ] {
                assert!(made.contains_key(Path::new(p)), "{p}: {made:?}");
            }
            (mask, made)
        })
        .collect();
    check(&runs);
}
