//! A scratch Debian 12 root for the accounts tests: account files of our own (no copy of
//! any real system's), login.defs, empty subuid/subgid, useradd defaults, a skeleton, sudo's
//! main file.

#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

pub const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash
daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
bin:x:2:2:bin:/bin:/usr/sbin/nologin
sys:x:3:3:sys:/dev:/usr/sbin/nologin
sync:x:4:65534:sync:/bin:/bin/sync
man:x:6:12:man:/var/cache/man:/usr/sbin/nologin
_apt:x:42:65534::/nonexistent:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
systemd-network:x:998:998:systemd Network Management:/:/usr/sbin/nologin
messagebus:x:100:107::/nonexistent:/usr/sbin/nologin
sshd:x:101:65534::/run/sshd:/usr/sbin/nologin
";
pub const SHADOW: &str = "root:*:19800:0:99999:7:::
daemon:*:19800:0:99999:7:::
bin:*:19800:0:99999:7:::
sys:*:19800:0:99999:7:::
sync:*:19800:0:99999:7:::
man:*:19800:0:99999:7:::
_apt:*:19800:0:99999:7:::
nobody:*:19800:0:99999:7:::
systemd-network:!*:19800::::::
messagebus:!:19800::::::
sshd:!:19800::::::
";
pub const GROUP: &str = "root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
man:x:12:
sudo:x:27:
audio:x:29:
video:x:44:
users:x:100:
nogroup:x:65534:
systemd-journal:x:999:
systemd-network:x:998:
messagebus:x:107:
";
pub const GSHADOW: &str = "root:*::
daemon:*::
bin:*::
sys:*::
adm:*::
tty:*::
disk:*::
man:*::
sudo:*::
audio:*::
video:*::
users:*::
nogroup:*::
systemd-journal:!*::
systemd-network:!*::
messagebus:!::
";
pub const LOGIN_DEFS: &str = "MAIL_DIR /var/mail
UMASK 022
PASS_MAX_DAYS 99999
PASS_MIN_DAYS 0
PASS_WARN_AGE 7
UID_MIN 1000
UID_MAX 60000
GID_MIN 1000
GID_MAX 60000
USERGROUPS_ENAB yes
ENCRYPT_METHOD SHA512
";
pub const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKwQShPXkfntT8srVCK4T0fXZM7NCXBG7X+sOMK3icWI alice@laptop";
pub const ROOT_KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINsUXJA2LBj50bAK3Pp5k8BptpXUjjq1uMLFrhzGEc/M ops@bastion";

/// A tool the test needs, or a failure naming its Debian package.
pub fn tool(path: &str, package: &str) -> String {
    assert!(
        Path::new(path).is_file(),
        "{path} is missing: apt-get install -y {package} (scripts/test-packages.txt)"
    );
    path.to_string()
}

pub fn write(root: &Path, rel: &str, text: &str, mode: u32) {
    let p = root.join(rel.trim_start_matches('/'));
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, text).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
}

/// A small Debian 12 root: account files, login.defs, useradd defaults, a skeleton.
pub fn debian_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, "/etc/passwd", PASSWD, 0o644);
    write(r, "/etc/shadow", SHADOW, 0o640);
    write(r, "/etc/group", GROUP, 0o644);
    write(r, "/etc/gshadow", GSHADOW, 0o640);
    write(r, "/etc/login.defs", LOGIN_DEFS, 0o644);
    // Debian 12 ships both empty; useradd fills them only when they exist.
    write(r, "/etc/subuid", "", 0o644);
    write(r, "/etc/subgid", "", 0o644);
    write(r, "/etc/default/useradd", "SHELL=/bin/sh\n", 0o644);
    write(r, "/etc/skel/.bashrc", "# ~/.bashrc\n", 0o644);
    write(r, "/etc/skel/.profile", "# ~/.profile\n", 0o644);
    write(r, "/etc/skel/.config/app.conf", "x=1\n", 0o600);
    fs::set_permissions(
        r.join("etc/skel/.config"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    write(
        r,
        "/etc/os-release",
        "ID=debian\nVERSION_ID=\"12\"\n",
        0o644,
    );
    write(
        r,
        "/etc/sudoers",
        "Defaults env_reset\nroot ALL=(ALL:ALL) ALL\n@includedir /etc/sudoers.d\n",
        0o440,
    );
    fs::create_dir_all(r.join("etc/sudoers.d")).unwrap();
    fs::create_dir_all(r.join("root")).unwrap();
    fs::create_dir_all(r.join("home")).unwrap();
    dir
}
