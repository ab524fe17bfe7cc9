//! The shipped binary runs on glibc 2.17 (RHEL 7, SLES 12, Ubuntu 18.04): the highest
//! GLIBC_x.y among its dynamic symbol versions, as `objdump -T` lists them, is at most
//! 2.17. The portable binary is built by scripts/build-portable.sh (several minutes), so
//! its test is `#[ignore]`d in the quick suite and shows up as ignored, never as passed:
//! run it with `cargo test --test portable -- --ignored` after the build (package.sh
//! runs the same check through scripts/check-glibc.sh).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The highest glibc the binary needs, as (major, minor, patch).
fn highest_glibc(bin: &Path) -> (u32, u32, u32) {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(bin)
        .output()
        .expect("objdump must be installed (apt-get install binutils)");
    assert!(
        out.status.success(),
        "objdump -T {}: {out:?}",
        bin.display()
    );
    let text = String::from_utf8_lossy(&out.stdout);
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter_map(|w| w.strip_prefix("GLIBC_"))
        .filter_map(|v| {
            let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
            Some((
                parts.next()??,
                parts.next()??,
                parts.next().flatten().unwrap_or(0),
            ))
        })
        .max()
        .unwrap_or_else(|| panic!("{} has no GLIBC symbol versions", bin.display()))
}

#[test]
fn symbol_versions_are_read() {
    // The test build links against this machine's glibc: some 2.x is found.
    let (major, minor, _) = highest_glibc(Path::new(env!("CARGO_BIN_EXE_vmcust")));
    assert_eq!(major, 2);
    assert!(minor >= 2, "{minor}");
}

#[test]
#[ignore = "needs the portable binary: run scripts/build-portable.sh, then --ignored"]
fn the_portable_binary_needs_at_most_glibc_2_17() {
    let bin = std::env::var_os("VMCUST_PORTABLE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pkg/vmcust"));
    assert!(
        bin.is_file(),
        "no portable binary at {}; run scripts/build-portable.sh",
        bin.display()
    );
    let highest = highest_glibc(&bin);
    assert!(
        highest <= (2, 17, 0),
        "{} needs glibc {highest:?}; it must run on 2.17",
        bin.display()
    );
    let size = std::fs::metadata(&bin).unwrap().len();
    assert!(
        size <= 5 * 1024 * 1024,
        "{} is {size} bytes, over 5 MiB",
        bin.display()
    );
}
