//! The integration tests' one harness: scratch roots (a copy of the example template
//! root, a shell inside it), the one tree walker ([`walk`]) and what is built on it
//! (snapshots, file maps), golden files and trees updated by one variable
//! ([`UPDATE_GOLDEN`]), and the rule for what a test needs from this machine: a missing
//! tool or privilege fails the test and says what to install ([`require_tool`],
//! [`require_root`]); nothing is skipped. `vm` is the fake VMware host of the boot tests,
//! `network` the renderers' helpers, `kill` the kill loops', `tools` open-vm-tools' side
//! of the cloud-init exchange.

#![allow(dead_code)]

pub mod kill;
pub mod network;
pub mod tools;
pub mod vm;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the vmcust binary under test with `args` and waits for it.
pub fn vmcust(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(args)
        .output()
        .unwrap()
}

/// [`vmcust`] with these environment variables set (e.g. `PATH=/nonexistent` for a run
/// that must find none of this machine's tools, `VMCUST_LOG` for the log level).
pub fn vmcust_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// A process's output as text, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The repository's top directory.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A bundled example spec.
pub fn example(name: &str) -> PathBuf {
    repo().join("examples/specs").join(name)
}

/// One of our cust.cfg test inputs in `tests/data/imc` (see docs/testing.md, "Test inputs").
pub fn imc_input(name: &str) -> PathBuf {
    repo().join("tests/data/imc").join(name)
}

/// One of our OVF environment test inputs in `tests/data/ovf`.
pub fn ovf_input(name: &str) -> PathBuf {
    repo().join("tests/data/ovf").join(name)
}

/// An OVF environment document with these properties (values already XML-escaped) and one
/// adapter with the example root's first MAC, as vSphere writes it.
pub fn ovf_env(props: &[(&str, &str)]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" \
         xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\" \
         xmlns:ve=\"http://www.vmware.com/schema/ovfenv\" oe:id=\"\">\n<PropertySection>\n",
    );
    for (k, v) in props {
        xml.push_str(&format!("  <Property oe:key=\"{k}\" oe:value=\"{v}\"/>\n"));
    }
    xml.push_str(
        "</PropertySection>\n<ve:EthernetAdapterSection>\n  <ve:Adapter ve:mac=\"00:50:56:a6:8c:08\" \
         ve:network=\"VM Network\" ve:unitNumber=\"7\"/>\n</ve:EthernetAdapterSection>\n</Environment>\n",
    );
    xml
}

/// A scratch copy of the bundled template root.
pub fn scratch_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/root"), dir.path());
    // As on a real system (Debian's 0640 root:shadow); git keeps no modes but the
    // executable bit, so the copy sets it.
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(
        dir.path().join("etc/shadow"),
        fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    dir
}

/// Copies a directory tree, symlinks as symlinks.
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let ty = entry.file_type().unwrap();
        if ty.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if ty.is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Top-level directories of a scratch root that hold the shell [`install_shell`] copied
/// from this machine; snapshots leave them out (they are the test's tools, not the
/// customization's work, and large).
pub const SHELL_DIRS: [&str; 3] = ["bin", "lib", "lib64"];

/// The programs [`install_shell`] gives a scratch root.
const SHELL_TOOLS: [&str; 8] = [
    "sh", "dirname", "sleep", "cat", "echo", "touch", "mkdir", "rm",
];

/// Gives a scratch root what a real one has for running its scripts inside it (they run
/// chrooted there, docs/custom-scripts.md): `/bin/sh` and a few tools copied from this
/// machine with the libraries they load (from `ldd`), and `/proc`, `/sys`, `/dev` to
/// mount on.
pub fn install_shell(root: &Path) {
    use std::process::Command;
    for dir in ["proc", "sys", "dev", "bin"] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    // Which libraries the tools load, asked of `ldd` once per test process.
    static LIBS: std::sync::OnceLock<std::collections::BTreeSet<PathBuf>> =
        std::sync::OnceLock::new();
    let libs = LIBS.get_or_init(|| {
        let mut libs = std::collections::BTreeSet::new();
        for tool in SHELL_TOOLS {
            let real = fs::canonicalize(Path::new("/bin").join(tool)).unwrap();
            let ldd = Command::new("ldd").arg(&real).output().unwrap();
            for word in String::from_utf8_lossy(&ldd.stdout).split_whitespace() {
                if word.starts_with('/') {
                    libs.insert(PathBuf::from(word));
                }
            }
        }
        libs
    });
    for tool in SHELL_TOOLS {
        let real = fs::canonicalize(Path::new("/bin").join(tool)).unwrap();
        fs::copy(&real, root.join("bin").join(tool)).unwrap();
    }
    for lib in libs {
        let to = root.join(lib.strip_prefix("/").unwrap());
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(fs::canonicalize(lib).unwrap(), &to).unwrap();
    }
}

/// Copies one more program of this machine (an absolute path) into a scratch root at the
/// same path, with the libraries it loads (from `ldd`): a tool a test's script needs
/// inside the root (`bash`, `setsid`, `hostname`, `visudo`).
pub fn install_tool(root: &Path, program: &str) {
    use std::process::Command;
    let real = fs::canonicalize(program).unwrap_or_else(|e| panic!("{program}: {e}"));
    let mut files = vec![(PathBuf::from(program), real.clone())];
    let ldd = Command::new("ldd").arg(&real).output().unwrap();
    for word in String::from_utf8_lossy(&ldd.stdout).split_whitespace() {
        if word.starts_with('/') {
            files.push((PathBuf::from(word), fs::canonicalize(word).unwrap()));
        }
    }
    for (at, real) in files {
        let to = root.join(at.strip_prefix("/").unwrap());
        if fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(&real, &to).unwrap();
    }
}

/// Every path at and under `top`, parents before children, in name order, without
/// following symlinks; nothing when `top` does not exist. The one tree walker: snapshots,
/// file maps and label checks are all built on it.
pub fn walk(top: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![top.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            let mut children: Vec<PathBuf> = fs::read_dir(&p)
                .unwrap_or_else(|e| panic!("listing {}: {e}", p.display()))
                .map(|e| e.unwrap().path())
                .collect();
            children.sort();
            stack.extend(children.into_iter().rev());
        }
        out.push(p);
    }
    out
}

/// What one path is, as a snapshot shows it: `uid:gid mode contents` for a file,
/// `uid:gid mode dir`, `uid:gid -> target` for a link.
pub fn describe(path: &Path) -> String {
    let meta = fs::symlink_metadata(path).unwrap();
    let owner = format!("{}:{}", meta.uid(), meta.gid());
    if meta.file_type().is_symlink() {
        format!("{owner} -> {}", fs::read_link(path).unwrap().display())
    } else if meta.is_dir() {
        format!("{owner} {:o} dir", meta.mode() & 0o7777)
    } else {
        let bytes = fs::read(path).unwrap();
        format!(
            "{owner} {:o} {}",
            meta.mode() & 0o7777,
            String::from_utf8_lossy(&bytes)
        )
    }
}

/// Every path under `dir` (relative to it) with what it is ([`describe`]). The
/// [`SHELL_DIRS`] at its top are left out.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let shell: Vec<PathBuf> = SHELL_DIRS.iter().map(|d| dir.join(d)).collect();
    walk(dir)
        .into_iter()
        .filter(|p| p != dir && !shell.iter().any(|s| p.starts_with(s)))
        .map(|p| (p.strip_prefix(dir).unwrap().to_path_buf(), describe(&p)))
        .collect()
}

/// [`snapshot`] of only these paths of `root` (files or directories, missing ones
/// skipped), keyed relative to `root`.
pub fn snapshot_of(root: &Path, paths: &[&str]) -> BTreeMap<PathBuf, String> {
    paths
        .iter()
        .flat_map(|p| walk(&root.join(p)))
        .map(|p| (p.strip_prefix(root).unwrap().to_path_buf(), describe(&p)))
        .collect()
}

/// The files under `dir` (a link to a file counts as one), relative paths → text.
pub fn files(dir: &Path) -> BTreeMap<PathBuf, String> {
    walk(dir)
        .into_iter()
        .filter(|p| fs::metadata(p).is_ok_and(|m| m.is_file()))
        .map(|p| {
            let text =
                fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()));
            (p.strip_prefix(dir).unwrap().to_path_buf(), text)
        })
        .collect()
}

/// The variable that rewrites the golden files from what the code does now, instead of
/// comparing with them: `UPDATE_GOLDEN=1 cargo test --test NAME`, then review the diff.
pub const UPDATE_GOLDEN: &str = "UPDATE_GOLDEN";

fn updating_goldens() -> bool {
    std::env::var_os(UPDATE_GOLDEN).is_some()
}

/// Compares `got` with the golden file `file`, or (with [`UPDATE_GOLDEN`]) writes it.
pub fn check_golden(file: &Path, got: &str) {
    if updating_goldens() {
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, got).unwrap();
    }
    let want = fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}: {e}; create it with {UPDATE_GOLDEN}=1", file.display()));
    assert_eq!(got, want, "differs from {}", file.display());
}

/// Compares the files `got` (relative paths → contents) with the golden tree `dir`: the
/// same names, the same bytes; or (with [`UPDATE_GOLDEN`]) replaces the tree with them.
pub fn check_golden_tree<V: AsRef<[u8]>>(dir: &Path, got: &BTreeMap<PathBuf, V>) {
    if updating_goldens() {
        let _ = fs::remove_dir_all(dir);
        fs::create_dir_all(dir).unwrap();
        for (rel, bytes) in got {
            let dest = dir.join(rel);
            fs::create_dir_all(dest.parent().unwrap()).unwrap();
            fs::write(dest, bytes).unwrap();
        }
    }
    assert!(
        dir.is_dir(),
        "no golden tree {}; create it with {UPDATE_GOLDEN}=1",
        dir.display()
    );
    let want = files(dir);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "the files differ from the golden tree {}",
        dir.display()
    );
    for (rel, bytes) in got {
        assert_eq!(
            String::from_utf8_lossy(bytes.as_ref()),
            want[rel],
            "{} differs from its golden file {}",
            rel.display(),
            dir.join(rel).display()
        );
    }
}

/// What a test needs from this machine, the one rule: a missing tool fails the test,
/// naming the Debian package to install (every one is in scripts/test-packages.txt).
/// `program` is a name looked up on `PATH` or an absolute path.
pub fn require_tool(program: &str, package: &str) {
    let found = if program.starts_with('/') {
        Path::new(program).is_file()
    } else {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
    };
    assert!(
        found,
        "{program} is not installed; install the Debian package {package} \
         (scripts/test-packages.txt lists every package the tests need)"
    );
}

/// The same rule for privilege: a test that needs root fails without it, saying why
/// (`cargo test --workspace` runs as root, docs/testing.md).
pub fn require_root(why: &str) {
    // SAFETY: geteuid has no preconditions and touches no memory.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "this test needs root ({why}); run the tests as root, as CI does"
    );
}

/// Runs a program; fails the test if it cannot start or fails.
pub fn run(program: &str, args: &[&str]) -> Output {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {} failed: {}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Fails with the paths that differ (not the whole trees) when two snapshots differ.
pub fn assert_same_tree(
    before: &BTreeMap<PathBuf, String>,
    after: &BTreeMap<PathBuf, String>,
    what: &str,
) {
    let short = |v: Option<&String>| match v {
        None => "(missing)".to_string(),
        Some(s) => s.chars().take(120).collect(),
    };
    let diffs: Vec<String> = before
        .keys()
        .chain(after.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .take(10)
        .map(|k| {
            format!(
                "  {}: {:?} -> {:?}",
                k.display(),
                short(before.get(k)),
                short(after.get(k))
            )
        })
        .collect();
    assert!(
        diffs.is_empty(),
        "{what}: the tree changed:\n{}",
        diffs.join("\n")
    );
}

/// The outcome `module` had among the `reports` of a cloud-config stage.
pub fn outcome<'r>(
    reports: &'r [vmcust::test_api::cc_apply::ModuleReport],
    module: &str,
) -> &'r vmcust::test_api::cc_apply::ModuleOutcome {
    &reports
        .iter()
        .find(|r| r.module == module)
        .unwrap_or_else(|| panic!("no {module} in {reports:?}"))
        .outcome
}
