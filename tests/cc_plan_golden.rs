//! Golden previews of the cloud-config module planners (src/cloud_config/apply/preview.rs):
//! each `tests/golden/cc-modules/<case>/cloud-config.yaml` against fixed root facts (a
//! Debian root, or a RHEL one for `rhel-*` cases), compared with `preview.txt` beside it.
//! `UPDATE_GOLDEN=1` rewrites the goldens (review the diff).

use std::fs;
use std::path::Path;

use vmcust::test_api::document;
use vmcust::test_api::facts::MountFacts;
use vmcust::test_api::facts::{Current, Facts, Family};
use vmcust::test_api::model::HostName;
use vmcust::test_api::preview::{preview, to_text};

const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\nweb:x:1500:1500::/srv/web:/bin/sh\n";
const GROUP: &str = "root:x:0:\nweb:x:1500:\nops:x:1700:\n";

fn facts(rhel: bool) -> Facts {
    let mut f = Facts {
        family: if rhel { Family::Rhel } else { Family::Debian },
        os_id: if rhel { "rhel" } else { "debian" }.into(),
        passwd: Some(PASSWD.into()),
        group: Some(GROUP.into()),
        ..Default::default()
    };
    f.debian_family = !rhel;
    f.hosts = Some("127.0.0.1\tlocalhost\n127.0.1.1\ttemplate\n".into());
    f.zones_present.insert("Europe/Berlin".into());
    f.appended.insert(
        "/etc/motd".into(),
        Current::File(b"Debian GNU/Linux\n".to_vec()),
    );
    let tools: &[(&str, &str)] = if rhel {
        &[
            ("dnf", "/usr/bin/dnf"),
            ("chronyd", "/usr/sbin/chronyd"),
            ("update-ca-trust", "/usr/bin/update-ca-trust"),
            ("systemctl", "/usr/bin/systemctl"),
            ("systemd-run", "/usr/bin/systemd-run"),
            ("shutdown", "/usr/sbin/shutdown"),
        ]
    } else {
        &[
            ("apt-get", "/usr/bin/apt-get"),
            ("gpg", "/usr/bin/gpg"),
            ("debconf-set-selections", "/usr/bin/debconf-set-selections"),
            ("add-apt-repository", "/usr/bin/add-apt-repository"),
            ("chronyd", "/usr/sbin/chronyd"),
            ("systemd-timesyncd", "/lib/systemd/systemd-timesyncd"),
            ("update-ca-certificates", "/usr/sbin/update-ca-certificates"),
            ("systemctl", "/usr/bin/systemctl"),
            ("systemd-run", "/usr/bin/systemd-run"),
            ("shutdown", "/usr/sbin/shutdown"),
        ]
    };
    for (k, v) in tools {
        f.programs.insert(k.to_string(), v.to_string());
    }
    f.apt.codename = "bookworm".into();
    f.apt.arch = "amd64".into();
    f.apt.files.insert(
        "/etc/apt/sources.list".into(),
        Current::File(b"deb http://deb.debian.org/debian bookworm main\n".to_vec()),
    );
    // What `mounts` reads (only used by documents with `mounts` or `swap`): an image's
    // fstab with an earlier instance's line, /data missing.
    f.mounts = Some(MountFacts {
        fstab: Some(
            "UUID=r / ext4 errors=remount-ro 0 1\nold /old auto defaults,comment=cloudconfig 0 2\n"
                .into(),
        ),
        missing_dirs: ["/data".to_string(), "/data/my logs".to_string()].into(),
        ..Default::default()
    });
    f
}

#[test]
fn module_previews_match_their_goldens() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/cc-modules");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut cases: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    cases.sort();
    assert!(cases.len() >= 8, "{cases:?}");
    let fallback = HostName::parse("meta-host").unwrap();
    let mut failed = Vec::new();
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(case.join("cloud-config.yaml")).unwrap();
        let (cfg, problems) = document::from_text(&text);
        assert!(problems.is_empty(), "{name}: {problems:?}");
        let got = to_text(&preview(
            &cfg,
            &facts(name.starts_with("rhel")),
            Some(&fallback),
            &[],
        ));
        let golden = case.join("preview.txt");
        if update {
            fs::write(&golden, &got).unwrap();
        } else if fs::read_to_string(&golden).unwrap_or_default() != got {
            failed.push(format!("{name}:\n{got}"));
        }
    }
    assert!(
        failed.is_empty(),
        "previews differ (UPDATE_GOLDEN=1 rewrites):\n{}",
        failed.join("\n")
    );
}
