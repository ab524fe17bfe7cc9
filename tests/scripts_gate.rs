//! The custom-script gate with fake `vmware-toolbox-cmd` programs (real processes) and
//! tools.conf files in a temp root.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use vmcust::test_api::gate::{custom_scripts_gate, DefaultWhy, Gate, GateReason, TOOLBOX_CMD};
use vmcust::test_api::root::Root;

/// A fake `vmware-toolbox-cmd` that checks its arguments, prints `stdout` and exits `code`.
fn fake_toolbox(dir: &Path, stdout: &str, code: i32) -> PathBuf {
    let p = dir.join(TOOLBOX_CMD);
    let body = format!(
        "#!/bin/sh\n\
         [ \"$*\" = \"config get deployPkg enable-custom-scripts\" ] || exit 98\n\
         printf '%s' '{stdout}'\n\
         exit {code}\n"
    );
    fs::write(&p, body).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn empty_root() -> (tempfile::TempDir, Root) {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path()).unwrap();
    (dir, root)
}

/// Each row: tool output, exit code, default, and whether scripts end up enabled with
/// which reason.
#[test]
fn toolbox_rows() {
    let toolbox = |v: &str| GateReason::Toolbox { value: v.into() };
    let default = |d: bool, why: DefaultWhy| GateReason::Default { default: d, why };
    let cases = vec![
        (
            "[deployPkg] enable-custom-scripts = true\n",
            0,
            false,
            true,
            toolbox("true"),
        ),
        (
            "[deployPkg] enable-custom-scripts = TRUE\n",
            0,
            false,
            true,
            toolbox("TRUE"),
        ),
        (
            "[deployPkg] enable-custom-scripts = false\n",
            0,
            true,
            false,
            toolbox("false"),
        ),
        ("key=Bar=Wark\n", 0, true, false, toolbox("Bar=Wark")),
        ("key =   true  \n", 0, false, true, toolbox("true")),
        ("key = \n", 0, true, false, toolbox("")),
        (
            "[deployPkg] enable-custom-scripts UNSET\n",
            0,
            true,
            true,
            default(true, DefaultWhy::Unset),
        ),
        (
            "[deployPkg] enable-custom-scripts UNSET\n",
            0,
            false,
            false,
            default(false, DefaultWhy::Unset),
        ),
        (
            "",
            69,
            true,
            true,
            default(true, DefaultWhy::ToolsConfUnavailable),
        ),
        (
            "",
            69,
            false,
            false,
            default(false, DefaultWhy::ToolsConfUnavailable),
        ),
        (
            "key = true\n",
            99,
            false,
            false,
            default(false, DefaultWhy::ToolFailed("exit status: 99".into())),
        ),
    ];
    for (stdout, code, dflt, enabled, reason) in cases {
        let bin = tempfile::tempdir().unwrap();
        let tool = fake_toolbox(bin.path(), stdout, code);
        let (_d, root) = empty_root();
        let gate = custom_scripts_gate(Some(&tool), &root, dflt);
        let row = format!("{stdout:?} exit {code} default {dflt}");
        assert_eq!(gate.is_enabled(), enabled, "{row}: {gate}");
        assert_eq!(gate.reason(), &reason, "{row}");
        assert_eq!(gate.status_code(), (!enabled).then_some(6), "{row}");
    }
}

/// A runaway tool printing 100 MB is read to its end but only its start is kept.
#[test]
fn a_runaway_tools_output_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(TOOLBOX_CMD);
    fs::write(
        &p,
        "#!/bin/sh
printf '[deployPkg] enable-custom-scripts = true\n'
head -c 100000000 /dev/zero
",
    )
    .unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    let (_d, root) = empty_root();
    let gate = custom_scripts_gate(Some(&p), &root, false);
    assert_eq!(
        gate,
        Gate::Enabled(GateReason::Toolbox {
            value: "true".into()
        })
    );
}

#[test]
fn a_tool_that_cannot_start_means_the_default() {
    let (_d, root) = empty_root();
    let gate = custom_scripts_gate(
        Some(Path::new("/nonexistent/vmware-toolbox-cmd")),
        &root,
        true,
    );
    assert!(matches!(
        gate,
        Gate::Enabled(GateReason::Default {
            why: DefaultWhy::ToolNotRunnable(_),
            ..
        })
    ));
}

/// Each row: tools.conf (None = absent), default, enabled, reason.
#[test]
fn tools_conf_rows() {
    let conf = |v: &str| GateReason::ToolsConf { value: v.into() };
    let default = |d: bool, why: DefaultWhy| GateReason::Default { default: d, why };
    let cases = vec![
        (
            Some("[deployPkg]\nenable-custom-scripts = true\n"),
            false,
            true,
            conf("true"),
        ),
        (
            Some("[deployPkg]\r\nenable-custom-scripts=True\r\n"),
            false,
            true,
            conf("True"),
        ),
        (
            Some("[deployPkg]\nenable-custom-scripts = false\n"),
            true,
            false,
            conf("false"),
        ),
        (
            Some("[deployPkg]\nenable-custom-scripts = \"true\"\n"),
            false,
            false,
            conf("\"true\""),
        ),
        (
            Some("[logging]\nlog = true\n"),
            true,
            true,
            default(true, DefaultWhy::Unset),
        ),
        (None, false, false, default(false, DefaultWhy::NoToolsConf)),
        (None, true, true, default(true, DefaultWhy::NoToolsConf)),
    ];
    for (text, dflt, enabled, reason) in cases {
        let (dir, root) = empty_root();
        if let Some(text) = text {
            fs::create_dir_all(dir.path().join("etc/vmware-tools")).unwrap();
            fs::write(dir.path().join("etc/vmware-tools/tools.conf"), text).unwrap();
        }
        let gate = custom_scripts_gate(None, &root, dflt);
        assert_eq!(gate.is_enabled(), enabled, "{text:?}: {gate}");
        assert_eq!(gate.reason(), &reason, "{text:?}");
    }
    // An unparsable file falls back to the default, saying why.
    let (dir, root) = empty_root();
    fs::create_dir_all(dir.path().join("etc/vmware-tools")).unwrap();
    fs::write(
        dir.path().join("etc/vmware-tools/tools.conf"),
        "[deployPkg]\nnovalue\n",
    )
    .unwrap();
    let gate = custom_scripts_gate(None, &root, false);
    assert!(
        matches!(
            gate.reason(),
            GateReason::Default {
                why: DefaultWhy::ToolsConfUnreadable(_),
                ..
            }
        ),
        "{gate:?}"
    );
}

#[test]
fn the_blocking_form_reads_an_offline_roots_tools_conf() {
    let (dir, root) = empty_root();
    fs::create_dir_all(dir.path().join("etc/vmware-tools")).unwrap();
    fs::write(
        dir.path().join("etc/vmware-tools/tools.conf"),
        "[deployPkg]\nenable-custom-scripts = true\n",
    )
    .unwrap();
    let gate = vmcust::test_api::scripts::custom_scripts_enabled(&root, false);
    assert_eq!(
        gate.reason(),
        &GateReason::ToolsConf {
            value: "true".into()
        }
    );
}
