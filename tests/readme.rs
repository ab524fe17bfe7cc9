//! What the README promises: its demo (`scripts/demo.sh`) runs with a vmcust binary alone,
//! no Rust toolchain (the one `$VMCUST` names, or `vmcust` on PATH; without either and
//! without cargo it says what it needs), and it lists every page under `docs/` and every
//! man page.

use std::path::Path;
use std::process::{Command, Output};

/// A PATH with the system's tools and no cargo (rustup puts it in ~/.cargo/bin).
const SYSTEM_PATH: &str = "/usr/bin:/bin";

/// Runs the demo with `path` as PATH and `vmcust` as `$VMCUST` (if any); scratch roots go
/// under `tmp`.
fn demo(tmp: &Path, path: &str, vmcust: Option<&Path>) -> Output {
    let mut cmd = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/demo.sh"));
    cmd.env_clear()
        .env("PATH", path)
        .env("TMPDIR", tmp)
        .env("HOME", tmp);
    if let Some(v) = vmcust {
        cmd.env("VMCUST", v);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_demo_runs_with_a_prebuilt_binary() {
    let bin = Path::new(env!("CARGO_BIN_EXE_vmcust"));
    // A directory on PATH holding only `vmcust`, as a package installs it.
    let dir = tempfile::tempdir().unwrap();
    let installed = dir.path().join("bin");
    std::fs::create_dir(&installed).unwrap();
    std::os::unix::fs::symlink(bin, installed.join("vmcust")).unwrap();
    let on_path = format!("{}:{SYSTEM_PATH}", installed.display());
    // (case, PATH, $VMCUST, what stderr says of the binary)
    let cases: [(&str, &str, Option<&Path>, String); 2] = [
        (
            "$VMCUST",
            SYSTEM_PATH,
            Some(bin),
            format!("== using {} ($VMCUST)", bin.display()),
        ),
        (
            "on PATH",
            &on_path,
            None,
            format!("== using {}/vmcust (on PATH", installed.display()),
        ),
    ];
    for (case, path, vmcust, using) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let o = demo(tmp.path(), path, vmcust);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert!(o.status.success(), "{case}: {out}\n{err}");
        assert!(err.contains(&using), "{case}: {err}");
        assert!(!err.contains("building"), "{case}: {err}");
        for step in [
            "== plan: ",
            "== apply\n",
            "== apply again (nothing left to do)",
        ] {
            assert!(out.contains(step), "{case}: no {step:?} in {out}");
        }
        let again = out.split("== apply again").nth(1).unwrap();
        assert!(
            again.contains("nothing to change: the root already matches the customization"),
            "{case}: {again}"
        );
        // The customized root is under TMPDIR, with the spec's host name.
        let root = out.lines().last().unwrap();
        let root = root.strip_prefix("the customized root is in ").unwrap();
        assert!(Path::new(root).starts_with(tmp.path()), "{case}: {root}");
        assert_eq!(
            std::fs::read_to_string(Path::new(root).join("etc/hostname")).unwrap(),
            "web01\n",
            "{case}"
        );
    }
}

#[test]
fn without_a_binary_or_cargo_the_demo_says_what_it_needs() {
    // A PATH with only what the script needs before it looks for the binary, so that a
    // vmcust installed on this machine is not found.
    let tools = tempfile::tempdir().unwrap();
    for tool in ["bash", "dirname"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no {tool} in /usr/bin or /bin"));
        std::os::unix::fs::symlink(found, tools.path().join(tool)).unwrap();
    }
    let path = tools.path().display().to_string();
    let tmp = tempfile::tempdir().unwrap();
    for vmcust in [None, Some(tmp.path().join("missing"))] {
        let o = demo(tmp.path(), &path, vmcust.as_deref());
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{vmcust:?}: {err}");
        let want = match vmcust {
            None => {
                "demo.sh: no vmcust binary: install the package (vmcust on PATH), set VMCUST=FILE"
            }
            Some(_) => "is not an executable file",
        };
        assert!(err.contains(want), "{vmcust:?}: {err}");
        assert!(o.stdout.is_empty(), "{vmcust:?}");
    }
    // Nothing was left under TMPDIR.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

/// Every page under docs/ is linked from the README, and every man page in man/ is named
/// there as NAME(SECTION).
#[test]
fn the_readme_lists_every_page() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(top.join("README.md")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(top.join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && !readme.contains(&format!("(docs/{name})")) {
            missing.push(format!("docs/{name}"));
        }
    }
    let mut pages = 0;
    for entry in std::fs::read_dir(top.join("man")).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some((name, section @ ("1" | "5" | "8"))) = file.rsplit_once('.') else {
            continue;
        };
        pages += 1;
        if !readme.contains(&format!("{name}({section})")) {
            missing.push(format!("man/{file} as {name}({section})"));
        }
    }
    assert!(pages >= 20, "{pages} man pages in man/");
    assert!(missing.is_empty(), "README.md does not list {missing:?}");
}
