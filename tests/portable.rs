//! The shipped binary starts on the oldest supported systems (glibc 2.17: RHEL 7, SLES 12,
//! Ubuntu 18.04). scripts/build-portable.sh makes it static (no program interpreter, no
//! NEEDED library): then it needs no glibc at all, must not use glibc's NSS (which loads
//! the running system's libnss_*.so) and its ELF ABI tag must accept RHEL 7's Linux 3.10.
//! A dynamic binary instead must need no GLIBC_x.y symbol version above 2.17, as
//! `objdump -T` lists them. The portable binary takes minutes to build, so its test is
//! `#[ignore]`d in the quick suite and shows up as ignored, never as passed: run it with
//! `cargo test --test portable -- --ignored` after the build (scripts/test-packaging.sh
//! does; build-portable.sh runs the same check through scripts/check-glibc.sh).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A version as (major, minor, patch).
type Version = (u32, u32, u32);

fn version(v: &str) -> Option<Version> {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

fn objdump(arg: &str, bin: &Path) -> String {
    support::require_tool("objdump", "binutils");
    let out = Command::new("objdump")
        .arg(arg)
        .arg(bin)
        .output()
        .expect("objdump must be installed (apt-get install binutils)");
    assert!(
        out.status.success(),
        "objdump {arg} {}: {out:?}",
        bin.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a binary needs to start.
#[derive(Debug, PartialEq)]
enum Needs {
    /// Static: the oldest Linux its ABI tag accepts, and whether it uses glibc's NSS.
    Static { kernel: Version, nss: bool },
    /// Dynamic: the highest glibc symbol version among its imports.
    Glibc(Version),
}

fn needs(bin: &Path) -> Needs {
    let headers = objdump("-p", bin);
    let dynamic = headers.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("INTERP ") || l.starts_with("NEEDED ")
    });
    if dynamic {
        let symbols = objdump("-T", bin);
        let highest = symbols
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .filter_map(|w| w.strip_prefix("GLIBC_"))
            .filter_map(version)
            .max()
            .unwrap_or_else(|| panic!("{} has no GLIBC symbol versions", bin.display()));
        return Needs::Glibc(highest);
    }
    support::require_tool("readelf", "binutils");
    let notes = Command::new("readelf").arg("-n").arg(bin).output().unwrap();
    let notes = String::from_utf8_lossy(&notes.stdout);
    let kernel = notes
        .lines()
        .find_map(|l| l.split_once("OS: Linux, ABI: ").map(|(_, v)| v.trim()))
        .and_then(version)
        .unwrap_or_else(|| panic!("{} has no ELF ABI tag", bin.display()));
    let bytes = std::fs::read(bin).unwrap();
    let nss = bytes.windows(7).any(|w| w == b"libnss_");
    Needs::Static { kernel, nss }
}

#[test]
fn a_dynamic_binary_is_read_by_its_symbol_versions() {
    // The test build links against this machine's glibc: some 2.x is found.
    match needs(Path::new(env!("CARGO_BIN_EXE_vmcust"))) {
        Needs::Glibc((2, minor, _)) => assert!(minor >= 2, "{minor}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_static_binary_is_recognised_with_its_kernel_floor() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("hello.rs");
    std::fs::write(&src, "fn main() { println!(\"hello\"); }\n").unwrap();
    let bin = dir.path().join("hello");
    let built = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["-C", "target-feature=+crt-static", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .unwrap();
    assert!(built.success());
    match needs(&bin) {
        Needs::Static { kernel, nss } => {
            assert!(kernel <= (3, 10, 0), "{kernel:?}");
            assert!(!nss);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
#[ignore = "needs the portable binary: run scripts/build-portable.sh, then --ignored"]
fn the_portable_binary_starts_on_glibc_2_17_systems() {
    let bin = std::env::var_os("VMCUST_PORTABLE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pkg/vmcust"));
    assert!(
        bin.is_file(),
        "no portable binary at {}; run scripts/build-portable.sh",
        bin.display()
    );
    match needs(&bin) {
        Needs::Static { kernel, nss } => {
            assert!(
                kernel <= (3, 10, 0),
                "{} needs Linux {kernel:?}; RHEL 7 has 3.10",
                bin.display()
            );
            assert!(!nss, "{} uses glibc's NSS", bin.display());
        }
        Needs::Glibc(highest) => assert!(
            highest <= (2, 17, 0),
            "{} needs glibc {highest:?}; it must run on 2.17",
            bin.display()
        ),
    }
    let size = std::fs::metadata(&bin).unwrap().len();
    assert!(
        size <= 8 * 1024 * 1024,
        "{} is {size} bytes, over 8 MiB",
        bin.display()
    );
    // It runs here, as it is.
    let out = Command::new(&bin).arg("--version").output().unwrap();
    assert!(out.status.success(), "{out:?}");
}
