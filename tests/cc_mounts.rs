//! `mounts` and `swap` (src/cloud_config/modules/mounts.rs) run by the early stage's driver
//! on a scratch root (not the running system): fstab written with the document's lines
//! tagged and an earlier instance's replaced, mount points made, a swap file made by the
//! root's own `fallocate` and `mkswap` (util-linux, copied in, run sealed inside the
//! root), nothing activated; `runcmd` in the late stage finds what it depends on; the
//! written fstab read by util-linux's `findmnt`.

mod support;

use std::fs;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use support::outcome;
use vmcust::test_api::cc_apply::{run_early, run_late, ModuleOutcome, StageContext};
use vmcust::test_api::model::InstanceId;
use vmcust::test_api::root::Root;
use vmcust::test_api::{cloud_config::CloudConfig, document};

const FSTAB: &str = "# /etc/fstab: static file system information.\nUUID=0a1b / ext4 errors=remount-ro 0 1\n/dev/sr0 /media/cdrom0 udf,iso9660 user,noauto 0 0\n";

/// A scratch root with `/bin/sh`, `systemctl`, an fstab, and (with `tools`) util-linux's `fallocate`
/// and `mkswap` from this machine.
fn root(tools: bool) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    support::install_shell(d.path());
    if tools {
        for t in ["/usr/bin/fallocate", "/usr/sbin/mkswap"] {
            support::require_tool(t, "util-linux");
            support::install_tool(d.path(), t);
        }
    }
    // A systemd root (the default options are systemd's); never run on another root.
    fs::create_dir_all(d.path().join("usr/bin")).unwrap();
    let systemctl = d.path().join("usr/bin/systemctl");
    fs::write(&systemctl, "#!/bin/sh\nexit 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&systemctl, fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir_all(d.path().join("etc")).unwrap();
    fs::write(d.path().join("etc/os-release"), "ID=debian\n").unwrap();
    fs::write(d.path().join("etc/fstab"), FSTAB).unwrap();
    d
}

fn cfg(doc: &str) -> CloudConfig {
    let (cfg, problems) = document::from_text(doc);
    assert!(problems.is_empty(), "{doc}: {problems:?}");
    cfg
}

fn ctx<'a>(dir: &Path, instance: &str, stop: &'a AtomicBool) -> StageContext<'a> {
    let mut c = StageContext::new(
        Root::new(dir).unwrap(),
        InstanceId::parse(instance).unwrap(),
        "boot-1".into(),
        stop,
    );
    c.command_timeout = Duration::from_secs(20);
    c
}

fn read(dir: &Path, p: &str) -> String {
    fs::read_to_string(dir.join(p.trim_start_matches('/'))).unwrap_or_default()
}

const OPTS: &str =
    "defaults,nofail,x-systemd.after=vmcust-early.service,_netdev,comment=cloudconfig";

#[test]
fn mounts_and_swap_are_written_and_a_new_instance_replaces_them() {
    let d = root(true);
    let stop = AtomicBool::new(false);
    let c = cfg("mounts:\n - [sdb, /data]\n - ['LABEL=my logs', '/srv/my logs', ext4, 'defaults,noatime']\n\
         swap: {filename: /var/swap.img, size: 4M}\n\
         runcmd:\n - test -d /data && test -d '/srv/my logs' && while read -r dev mp rest; do [ \"$dev $mp\" = 'sdb /data' ] && touch /root-saw-it; done < /etc/fstab; true\n");
    let early = run_early(&ctx(d.path(), "i-one", &stop), &c);
    let note = match outcome(&early, "mounts") {
        ModuleOutcome::Ran { note } => note.clone(),
        other => panic!("{other:?}\n{early:?}"),
    };
    assert!(
        note.contains("swap file /var/swap.img (4 MiB)") && note.contains("not the running system"),
        "{note}"
    );
    assert_eq!(
        read(d.path(), "/etc/fstab"),
        format!(
            "{FSTAB}sdb\t/data\tauto\t{OPTS}\t0\t2\nLABEL=my\\040logs\t/srv/my\\040logs\text4\tdefaults,noatime,comment=cloudconfig\t0\t2\n/var/swap.img\tnone\tswap\tsw,comment=cloudconfig\t0\t0\n"
        )
    );
    for dir in ["/data", "/srv/my logs"] {
        assert!(d.path().join(&dir[1..]).is_dir(), "{dir}");
    }
    let swap = fs::read(d.path().join("var/swap.img")).unwrap();
    assert_eq!(swap.len(), 4 << 20);
    assert!(
        [4096usize, 16384, 65536]
            .iter()
            .any(|p| &swap[p - 10..*p] == b"SWAPSPACE2"),
        "mkswap's signature"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(d.path().join("var/swap.img"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    // The late stage's runcmd finds the mount point and the line it depends on.
    run_late(&ctx(d.path(), "i-one", &stop), &c);
    assert!(d.path().join("root-saw-it").exists());

    // A clone (a new instance) with another document: the earlier lines are replaced, the
    // image's own lines kept; the swap file there is kept, not made again.
    let c2 = cfg("mounts: [[sdc, /scratch]]\nswap: {filename: /var/swap.img, size: 4M}\n");
    let early = run_early(&ctx(d.path(), "i-two", &stop), &c2);
    assert!(
        matches!(outcome(&early, "mounts"), ModuleOutcome::Ran { note } if !note.contains("swap file")),
        "{early:?}"
    );
    let fstab = read(d.path(), "/etc/fstab");
    assert_eq!(
        fstab,
        format!("{FSTAB}sdc\t/scratch\tauto\t{OPTS}\t0\t2\n/var/swap.img\tnone\tswap\tsw,comment=cloudconfig\t0\t0\n")
    );
    // util-linux reads it without a parse error.
    let f = d.path().join("etc/fstab");
    // (Its devices are not this machine's: only parsing is asked of it here; the module's
    // unit tests check a whole fstab with --verify and mount -fav.)
    support::require_tool("findmnt", "util-linux");
    let out = std::process::Command::new("findmnt")
        .args(["--verify", "--tab-file"])
        .arg(&f)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        support::text(&out.stdout),
        support::text(&out.stderr)
    );
    assert!(text.contains("0 parse errors"), "{text}");
}

/// A swap file the root cannot make (no `mkswap` there) is a warning, as in cloud-init:
/// the file is removed and the mounts are written without its line.
#[test]
fn a_swap_file_that_cannot_be_made_is_left_out() {
    let d = root(false);
    let stop = AtomicBool::new(false);
    let c = cfg("mounts: [[sdb, /data]]\nswap: {size: 1M}\n");
    let early = run_early(&ctx(d.path(), "i-one", &stop), &c);
    assert!(
        matches!(outcome(&early, "mounts"), ModuleOutcome::Ran { note } if note.contains("swap: warning: failed to set up /swap.img")),
        "{early:?}"
    );
    assert!(!d.path().join("swap.img").exists());
    assert_eq!(
        read(d.path(), "/etc/fstab"),
        format!("{FSTAB}sdb\t/data\tauto\t{OPTS}\t0\t2\n")
    );
}

/// Only a swap file of `size: auto` on a root that is not the running system: nothing to
/// add, a warning, fstab untouched.
#[test]
fn auto_swap_on_another_root_changes_nothing() {
    let d = root(false);
    let stop = AtomicBool::new(false);
    let early = run_early(&ctx(d.path(), "i-one", &stop), &cfg("swap: {size: auto}\n"));
    assert!(
        matches!(outcome(&early, "mounts"), ModuleOutcome::Skipped { why } if why.contains("size auto")),
        "{early:?}"
    );
    assert_eq!(read(d.path(), "/etc/fstab"), FSTAB);
}

/// An fstab vmcust cannot read (not UTF-8) fails this module alone, changing nothing; the
/// stage's other modules run.
#[test]
fn an_unreadable_fstab_fails_only_this_module() {
    let d = root(false);
    let stop = AtomicBool::new(false);
    let latin1 = b"/dev/sdb1 /donn\xe9es ext4 defaults 0 2\n";
    fs::write(d.path().join("etc/fstab"), latin1).unwrap();
    let c = cfg("mounts: [[sdc, /data]]\nhostname: after\n");
    let early = run_early(&ctx(d.path(), "i-one", &stop), &c);
    assert!(
        matches!(outcome(&early, "mounts"), ModuleOutcome::Failed { why } if why.contains("/etc/fstab") && why.contains("UTF-8")),
        "{early:?}"
    );
    assert!(
        matches!(outcome(&early, "set_hostname"), ModuleOutcome::Ran { .. }),
        "{early:?}"
    );
    assert_eq!(fs::read(d.path().join("etc/fstab")).unwrap(), latin1);
    assert!(!d.path().join("data").exists());
}
