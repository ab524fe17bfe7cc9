//! Helpers shared by the integration tests: scratch roots and directory snapshots.

#![allow(dead_code)]

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

/// Every path under `dir` with what it is: file contents, mode and owner; link target
/// and owner; directory mode and owner. The [`SHELL_DIRS`] at its top are left out.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn walk(top: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let rel = path.strip_prefix(top).unwrap().to_path_buf();
        if dir == top && SHELL_DIRS.iter().any(|d| rel == Path::new(d)) {
            continue;
        }
        let meta = fs::symlink_metadata(&path).unwrap();
        let owner = format!("{}:{}", meta.uid(), meta.gid());
        if meta.file_type().is_symlink() {
            out.insert(
                rel,
                format!("{owner} -> {}", fs::read_link(&path).unwrap().display()),
            );
        } else if meta.is_dir() {
            out.insert(rel, format!("{owner} {:o} dir", meta.mode() & 0o7777));
            walk(top, &path, out);
        } else {
            let bytes = fs::read(&path).unwrap();
            out.insert(
                rel,
                format!(
                    "{owner} {:o} {}",
                    meta.mode() & 0o7777,
                    String::from_utf8_lossy(&bytes)
                ),
            );
        }
    }
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
