//! Builds real ISO9660 images with xorriso or genisoimage for tests and benchmarks.
//!
//! A missing tool fails loudly: CI installs both, and a silent skip would hide the ISO tests.

use std::path::Path;
use std::process::Command;

/// Runs `tool args... -o <image> <dir>` over a directory holding `files` and returns the image.
///
/// `tool` is `xorriso` (run as `xorriso -as mkisofs`) or `genisoimage`; file names may contain
/// one `/` to place a file in a subdirectory.
pub fn build_iso(tool: &str, args: &[&str], files: &[(&str, &[u8])]) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let root = dir.path().join("root");
    for (name, content) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
    }
    std::fs::create_dir_all(&root).unwrap();
    let image = dir.path().join("image.iso");
    let mut command = Command::new(tool);
    if tool == "xorriso" {
        command.args(["-as", "mkisofs"]);
    }
    let output = command
        .args(args)
        .arg("-o")
        .arg(&image)
        .arg(&root)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {tool} ({e}): install it with `apt-get install -y xorriso genisoimage`"
            )
        });
    assert!(
        output.status.success(),
        "{tool} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    read(&image)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}
