//! Build script: puts the git revision into `vmcust --version`.
//!
//! `VMCUST_GIT_REV` set in the environment wins (a build from a source tarball, or a
//! package build that knows its revision); otherwise `git rev-parse` in the source tree;
//! with neither, the version is printed without a revision.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=VMCUST_GIT_REV");
    let rev = std::env::var("VMCUST_GIT_REV")
        .ok()
        .filter(|r| !r.is_empty())
        .or_else(|| {
            // A new commit or checkout moves HEAD's reflog; rebuild then (worktrees have
            // their own git dir, so ask git where it is).
            if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
                let dir = PathBuf::from(dir);
                for f in ["HEAD", "logs/HEAD"] {
                    if dir.join(f).exists() {
                        println!("cargo:rerun-if-changed={}", dir.join(f).display());
                    }
                }
            }
            git(&["rev-parse", "--short=12", "HEAD"])
        });
    let suffix = rev.map(|r| format!(" (git {r})")).unwrap_or_default();
    println!("cargo:rustc-env=VMCUST_VERSION_SUFFIX={suffix}");
}
