//! Seed drives, end to end with real images: OpenStack config drives (`genisoimage -V
//! config-2`, `mkfs.vfat -n CONFIG-2` + `mcopy`) and NoCloud seeds (`-V cidata`) given
//! with `--seed` to `show`/`plan`, and placed where a VM has them (`/dev/sr0`,
//! `/dev/vdb`, `/dev/disk/by-label/…`) in a scratch root for `vmcust run`: host name,
//! keys, static network, DNS and user-data once; a second boot changes nothing; hostile
//! media change nothing. Goldens: `UPDATE_GOLDEN=1 cargo test --test seed_drives`, then
//! review the diff.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::vm::Vm;
use support::{repo, text};

const KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f seed@test";

/// A user-data script that notes each run next to itself (the instance directory).
const USER_DATA: &str = "#!/bin/sh\necho ran >> \"$(dirname \"$0\")/ud-ran\"\n";

/// The example root's first NIC.
const MAC: &str = "00:50:56:a6:8c:08";

/// A medium's files: (path on the medium, content).
type Files = Vec<(String, String)>;

fn meta_data(uuid: &str, host: &str) -> String {
    format!(
        r#"{{"uuid": "{uuid}", "hostname": "{host}", "name": "web",
  "availability_zone": "nova", "launch_index": 0,
  "public_keys": {{"mykey": "{KEY}\n"}}}}"#
    )
}

fn network_data() -> String {
    format!(
        r#"{{"links": [{{"id": "tap0", "type": "ovs", "ethernet_mac_address": "{MAC}", "mtu": 1500}}],
 "networks": [
  {{"id": "net0", "type": "ipv4", "link": "tap0", "ip_address": "10.20.0.5",
    "netmask": "255.255.255.0",
    "routes": [{{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "10.20.0.1"}}]}},
  {{"id": "net1", "type": "ipv6", "link": "tap0", "ip_address": "2001:db8:20::5",
    "netmask": "ffff:ffff:ffff:ffff::"}}],
 "services": [{{"type": "dns", "address": "10.20.0.53"}}]}}"#
    )
}

/// A config drive's files, as `openstack/latest/NAME`.
fn config_drive(meta: &str, network: Option<&str>) -> Vec<(String, String)> {
    let mut files = vec![
        (
            "openstack/latest/meta_data.json".to_string(),
            meta.to_string(),
        ),
        (
            "openstack/latest/user_data".to_string(),
            USER_DATA.to_string(),
        ),
        (
            "openstack/latest/vendor_data.json".to_string(),
            r#"{"cloud-init": "cloud-config\n"}"#.to_string(),
        ),
    ];
    if let Some(n) = network {
        files.push(("openstack/latest/network_data.json".into(), n.into()));
    }
    files
}

fn nocloud(instance: &str, host: &str) -> Vec<(String, String)> {
    vec![
        (
            "meta-data".into(),
            format!("instance-id: {instance}\nlocal-hostname: {host}\npublic-keys:\n  - {KEY}\n"),
        ),
        ("user-data".into(), USER_DATA.into()),
        (
            "network-config".into(),
            format!(
                "version: 2\nethernets:\n  nic0:\n    match:\n      macaddress: '{MAC}'\n    \
                 addresses: [10.30.0.7/24]\n    routes:\n      - {{to: default, via: 10.30.0.1}}\n    \
                 nameservers:\n      addresses: [10.30.0.53]\n      search: [seed.example]\n"
            ),
        ),
    ]
}

fn tree(dir: &Path, files: &[(String, String)]) -> PathBuf {
    let top = dir.join("tree");
    for (name, content) in files {
        let p = top.join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }
    top
}

/// An ISO9660 image with Rock Ridge and Joliet names, made by genisoimage.
fn iso(dir: &Path, label: &str, files: &[(String, String)]) -> PathBuf {
    support::require_tool("genisoimage", "genisoimage");
    let top = tree(dir, files);
    let out = dir.join(format!("{label}.iso"));
    let status = Command::new("genisoimage")
        .args(["-quiet", "-R", "-J", "-V", label, "-o"])
        .arg(&out)
        .arg(&top)
        .stderr(Stdio::null())
        .status()
        .expect("genisoimage is needed for this test: apt-get install -y genisoimage");
    assert!(status.success());
    out
}

/// A vfat image (no partition table) made by mkfs.vfat, filled by mtools.
fn vfat(dir: &Path, label: &str, files: &[(String, String)]) -> PathBuf {
    support::require_tool("mkfs.vfat", "dosfstools");
    support::require_tool("mmd", "mtools");
    support::require_tool("mcopy", "mtools");
    let top = tree(dir, files);
    let out = dir.join(format!("{label}.img"));
    fs::File::create(&out)
        .unwrap()
        .set_len(4 * 1024 * 1024)
        .unwrap();
    let ok = Command::new("mkfs.vfat")
        .args(["-n", label])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("mkfs.vfat is needed for this test: apt-get install -y dosfstools");
    assert!(ok.success());
    let mut dirs: Vec<String> = Vec::new();
    for (name, _) in files {
        let mut at = String::new();
        for part in Path::new(name).parent().unwrap().components() {
            at = format!("{at}/{}", part.as_os_str().to_string_lossy());
            if !dirs.contains(&at) {
                dirs.push(at.clone());
            }
        }
    }
    for d in &dirs {
        let ok = Command::new("mmd")
            .args(["-i"])
            .arg(&out)
            .arg(format!("::{d}"))
            .status()
            .expect("mmd is needed for this test: apt-get install -y mtools");
        assert!(ok.success());
    }
    for (name, _) in files {
        let ok = Command::new("mcopy")
            .args(["-i"])
            .arg(&out)
            .arg(top.join(name))
            .arg(format!("::/{name}"))
            .status()
            .expect("mcopy is needed for this test: apt-get install -y mtools");
        assert!(ok.success());
    }
    out
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(args)
        .env("VMCUST_LOG", "error")
        .output()
        .unwrap()
}

fn show(seeds: &[&Path]) -> serde_json::Value {
    let mut args = vec!["show", "--format", "json"];
    for s in seeds {
        args.extend(["--seed", s.to_str().unwrap()]);
    }
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A VM whose root has root's home, where the SSH keys go.
fn new_vm() -> Vm {
    let vm = Vm::new();
    fs::create_dir_all(vm.path("/root")).unwrap();
    vm
}

fn place(vm: &Vm, image: &Path, dev: &str) {
    let to = vm.path(dev);
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::copy(image, to).unwrap();
}

fn read(vm: &Vm, p: &str) -> String {
    fs::read_to_string(vm.path(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The netplan file the example root gets.
fn netplan(vm: &Vm) -> String {
    let dir = vm.path("/etc/netplan");
    let mut all = String::new();
    for e in fs::read_dir(&dir).unwrap() {
        all += &fs::read_to_string(e.unwrap().path()).unwrap();
    }
    all
}

/// First boot applies everything and runs the user-data once; the second changes nothing.
fn boots_twice(vm: &Vm, id: &str, host: &str, address: &str, dns: &str) {
    let (early, _) = vm.boot();
    assert_eq!(
        read(vm, "/etc/hostname"),
        format!("{host}\n"),
        "{}",
        text(&early.stderr)
    );
    assert!(read(vm, "/root/.ssh/authorized_keys").contains(KEY));
    let net = netplan(vm);
    assert!(net.contains(address), "{net}");
    assert!(net.contains(dns), "{net}");
    let ran = format!("/var/lib/vmcust/instances/{id}/ud-ran");
    assert_eq!(read(vm, &ran), "ran\n", "user-data ran once");
    let before = vm.state();
    vm.boot();
    assert_eq!(vm.state(), before, "a second boot changes nothing");
    assert_eq!(read(vm, &ran), "ran\n", "user-data not run again");
}

#[test]
fn config_drive_iso_at_boot_on_sr0() {
    let dir = tempfile::tempdir().unwrap();
    let image = iso(
        dir.path(),
        "config-2",
        &config_drive(
            &meta_data("cd-iso-1", "cd-web.example.com"),
            Some(&network_data()),
        ),
    );
    let vm = new_vm();
    place(&vm, &image, "/dev/sr0");
    boots_twice(&vm, "cd-iso-1", "cd-web", "10.20.0.5/24", "10.20.0.53");
    assert!(netplan(&vm).contains("2001:db8:20::5/64"));
    assert!(read(&vm, "/etc/hosts").contains("cd-web.example.com"));
}

#[test]
fn config_drive_vfat_at_boot_as_an_unpartitioned_disk() {
    let dir = tempfile::tempdir().unwrap();
    let image = vfat(
        dir.path(),
        "CONFIG-2",
        &config_drive(
            &meta_data("cd-fat-1", "cd-fat.example.com"),
            Some(&network_data()),
        ),
    );
    let digest = fs::read(&image).unwrap();
    let vm = new_vm();
    place(&vm, &image, "/dev/vdb");
    boots_twice(&vm, "cd-fat-1", "cd-fat", "10.20.0.5/24", "10.20.0.53");
    assert_eq!(
        fs::read(vm.path("/dev/vdb")).unwrap(),
        digest,
        "the medium is never written"
    );
}

#[test]
fn nocloud_iso_at_boot_through_a_by_label_link() {
    let dir = tempfile::tempdir().unwrap();
    let image = iso(dir.path(), "cidata", &nocloud("nc-iso-1", "nc-host"));
    let vm = new_vm();
    place(&vm, &image, "/dev/sr1");
    fs::create_dir_all(vm.path("/dev/disk/by-label")).unwrap();
    // udev's link is relative; it must be resolved inside the root.
    std::os::unix::fs::symlink("../../sr1", vm.path("/dev/disk/by-label/cidata")).unwrap();
    boots_twice(&vm, "nc-iso-1", "nc-host", "10.30.0.7/24", "10.30.0.53");
}

#[test]
fn nocloud_vfat_at_boot() {
    let dir = tempfile::tempdir().unwrap();
    let image = vfat(dir.path(), "CIDATA", &nocloud("nc-fat-1", "nc-fat"));
    let vm = new_vm();
    place(&vm, &image, "/dev/sdb");
    boots_twice(&vm, "nc-fat-1", "nc-fat", "10.30.0.7/24", "seed.example");
}

/// A real cloud-init installed (`handler = auto`) or asked for (`handler = cloud-init`)
/// is given the user-data through its NoCloud seed, with meta-data naming the instance id
/// and host name vmcust applied: a NoCloud seed's own meta-data as it was, a NoCloud one
/// made of a config drive's uuid and host name, guestinfo's metadata as it was. (The
/// kept meta-data used to come only from a vSphere spec: a seed's instance was then
/// handed over as just `instance-id`, without its host name.)
#[test]
fn a_real_cloud_init_is_given_the_same_instance_and_host_name() {
    let seed_md = |vm: &Vm| read(vm, "/var/lib/cloud/seed/nocloud/meta-data");
    let real_cloud_init = |vm: &Vm, settings: Option<&str>| {
        let bin = vm.path("/usr/bin/cloud-init");
        fs::create_dir_all(bin.parent().unwrap()).unwrap();
        fs::write(
            bin,
            "#!/bin/sh
exit 0
",
        )
        .unwrap();
        if let Some(s) = settings {
            vm.settings(s);
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let handler = Some("[user-data]\nhandler = cloud-init\n");

    let files = nocloud("nc-ci-1", "nc-ci.example.com");
    let image = iso(dir.path(), "cidata", &files);
    let vm = new_vm();
    real_cloud_init(&vm, None);
    place(&vm, &image, "/dev/sr0");
    vm.boot();
    assert_eq!(seed_md(&vm), files[0].1, "the seed's meta-data, as it was");
    assert_eq!(
        read(&vm, "/var/lib/cloud/seed/nocloud/user-data"),
        USER_DATA
    );

    let dir2 = tempfile::tempdir().unwrap();
    let image = iso(
        dir2.path(),
        "config-2",
        &config_drive(&meta_data("cd-ci-1", "cd-ci.example.com"), None),
    );
    let vm = new_vm();
    real_cloud_init(&vm, handler);
    place(&vm, &image, "/dev/sr0");
    vm.boot();
    let md: serde_norway::Mapping = serde_norway::from_str(&seed_md(&vm)).unwrap();
    assert_eq!(md["instance-id"], "cd-ci-1", "{md:?}");
    assert_eq!(md["local-hostname"], "cd-ci.example.com", "{md:?}");
    assert_eq!(read(&vm, "/etc/hostname"), "cd-ci\n");

    let vm = new_vm();
    real_cloud_init(&vm, handler);
    let gi = "instance-id: gi-ci-1\nlocal-hostname: gi-ci\n";
    fs::write(vm.host.path().join("guestinfo.metadata"), gi).unwrap();
    fs::write(vm.host.path().join("guestinfo.userdata"), USER_DATA).unwrap();
    vm.boot();
    // As read from the host: the trailing newline is trimmed, as of every guestinfo value.
    assert_eq!(
        seed_md(&vm),
        gi.trim_end(),
        "guestinfo's metadata, as it was"
    );
}

/// The trust rule of persistent media: on the VM customized before, a changed seed with
/// a new instance is refused and nothing changes.
#[test]
fn a_changed_seed_on_the_same_vm_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let first = iso(
        dir.path(),
        "config-2",
        &config_drive(&meta_data("cd-1", "first"), None),
    );
    let vm = new_vm();
    place(&vm, &first, "/dev/sr0");
    vm.boot();
    assert_eq!(read(&vm, "/etc/hostname"), "first\n");
    let second_dir = tempfile::tempdir().unwrap();
    let second = iso(
        second_dir.path(),
        "config-2",
        &config_drive(&meta_data("cd-2", "pwned"), None),
    );
    place(&vm, &second, "/dev/sr0");
    let before = vm.state();
    let (early, _) = vm.boot();
    let log = text(&early.stderr);
    assert!(log.contains("refused: new instance cd-2"), "{log}");
    assert_eq!(vm.state(), before);
    assert_eq!(read(&vm, "/etc/hostname"), "first\n");
}

#[test]
fn show_and_plan_with_seed_images() {
    let dir = tempfile::tempdir().unwrap();
    let cd = iso(
        dir.path(),
        "config-2",
        &config_drive(
            &meta_data("cd-show", "web.example.com"),
            Some(&network_data()),
        ),
    );
    let nc_dir = tempfile::tempdir().unwrap();
    let nc = vfat(
        nc_dir.path(),
        "cidata",
        &nocloud("nc-show", "nc-host.example.org"),
    );
    let v = show(&[&cd]);
    assert_eq!(v["found_in"][0]["source"], "configdrive");
    assert_eq!(v["customization"]["instance_id"], "cd-show");
    assert_eq!(v["customization"]["identity"]["host_name"], "web");
    assert_eq!(v["origins"]["user-data"], "configdrive");
    // Both: NoCloud ranks above the config drive, field by field.
    let v = show(&[&cd, &nc]);
    assert_eq!(v["customization"]["instance_id"], "nc-show");
    assert_eq!(v["origins"]["network"], "nocloud");
    assert_eq!(v["found_in"][1]["source"], "configdrive");

    let root = support::scratch_root();
    fs::create_dir_all(root.path().join("root")).unwrap();
    let out = run(&[
        "plan",
        "--root",
        root.path().to_str().unwrap(),
        "--seed",
        cd.to_str().unwrap(),
    ]);
    let plan = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(plan.contains("/etc/hostname"), "{plan}");
    assert!(plan.contains("10.20.0.5/24"), "{plan}");
    assert!(plan.contains("user-data"), "{plan}");
}

/// A directory laid out as the medium is works as `--seed DIR`; one that is neither is
/// not taken, and an image with another label is an error naming it.
#[test]
fn seed_directories_and_foreign_images() {
    let dir = tempfile::tempdir().unwrap();
    let top = tree(dir.path(), &nocloud("nc-dir", "dir-host"));
    let v = show(&[&top]);
    assert_eq!(v["customization"]["instance_id"], "nc-dir");
    let empty = tempfile::tempdir().unwrap();
    let out = run(&["show", "--seed", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(65));
    assert!(
        text(&out.stderr).contains("a directory with neither meta-data"),
        "{}",
        text(&out.stderr)
    );
    let other = tempfile::tempdir().unwrap();
    let foreign = iso(other.path(), "DATA", &nocloud("x", "y"));
    let out = run(&["show", "--seed", foreign.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(65));
    assert!(
        text(&out.stderr).contains("labelled \"DATA\", not a seed drive"),
        "{}",
        text(&out.stderr)
    );
    let junk = other.path().join("junk");
    fs::write(&junk, vec![7u8; 70_000]).unwrap();
    let out = run(&["show", "--seed", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(65));
    assert!(text(&out.stderr).contains("neither an ISO9660 nor a vfat image"));
}

/// Goldens of the parsed customization (`show --format json`, its customization,
/// origins and warnings) for a few documents of each kind.
#[test]
fn goldens_of_parsed_seeds() {
    let cases: Vec<(&str, Vec<(String, String)>)> = vec![
        ("configdrive-static", config_drive(&meta_data("g-1", "g.example.com"), Some(&network_data()))),
        (
            "configdrive-dhcp-two-links",
            config_drive(
                r#"{"uuid": "g-2", "hostname": "two", "public_keys": {}, "files": [{"path": "/etc/x", "content_path": "/content/0000"}]}"#,
                Some(
                    r#"{"links": [
  {"id": "a", "type": "phy", "ethernet_mac_address": "00:50:56:a6:8c:08", "mtu": 9000},
  {"id": "b", "type": "vif", "ethernet_mac_address": "00:50:56:a6:ef:7d"}],
 "networks": [
  {"id": "n0", "type": "ipv4_dhcp", "link": "a"},
  {"id": "n1", "type": "ipv6_slaac", "link": "a"},
  {"id": "n2", "type": "ipv6_dhcp", "link": "b"}],
 "services": [{"type": "dns", "address": "192.0.2.53"}, {"type": "ntp", "address": "192.0.2.1"}]}"#,
                ),
            ),
        ),
        ("configdrive-no-network", config_drive(r#"{"uuid": "g-3"}"#, None)),
        ("nocloud-v2", nocloud("g-4", "g4.example.net")),
        (
            "nocloud-v1-and-meta-data-only",
            vec![
                ("meta-data".into(), "instance-id: g-5\nhostname: five\n".into()),
                (
                    "network-config".into(),
                    format!("version: 1\nconfig:\n  - type: physical\n    name: eth0\n    mac_address: '{MAC}'\n    subnets:\n      - type: dhcp\n"),
                ),
                ("vendor-data".into(), "#cloud-config\n".into()),
            ],
        ),
    ];
    let golden_dir = repo().join("tests/golden/seeds");
    for (name, files) in cases {
        let dir = tempfile::tempdir().unwrap();
        let top = tree(dir.path(), &files);
        let v = show(&[&top]);
        let got = serde_json::to_string_pretty(&serde_json::json!({
            "customization": v["customization"],
            "origins": v["origins"],
            "warnings": v["warnings"],
        }))
        .unwrap()
        .replace(&top.display().to_string(), "SEED")
            + "\n";
        support::check_golden(&golden_dir.join(format!("{name}.json")), &got);
    }
}

/// Hostile media: each is refused with a message naming what is wrong, the root is left
/// as it was (`plan` changes nothing anyway; `run` is checked with the boot).
#[test]
fn hostile_seeds_are_refused_and_change_nothing() {
    let big = "x".repeat(2 * 1024 * 1024);
    let cases: Vec<(&str, Files, &str)> = vec![
        (
            "malformed meta_data.json",
            config_drive("{\"uuid\": ", None),
            "meta_data.json on /dev/sr0: not valid JSON",
        ),
        (
            "malformed network_data.json",
            config_drive(&meta_data("h", "h"), Some("{\"links\": [}")),
            "network_data.json on /dev/sr0: not the JSON object",
        ),
        (
            "a bond",
            config_drive(
                &meta_data("h", "h"),
                Some(
                    r#"{"links": [{"id": "bond0", "type": "bond", "bond_links": ["a", "b"], "ethernet_mac_address": "00:50:56:a6:8c:08"}]}"#,
                ),
            ),
            "links[0] (\"bond0\"): link type \"bond\" is not supported",
        ),
        (
            "a VLAN",
            config_drive(
                &meta_data("h", "h"),
                Some(
                    r#"{"links": [{"id": "a", "type": "phy", "ethernet_mac_address": "00:50:56:a6:8c:08"}, {"id": "v10", "type": "vlan", "vlan_link": "a", "vlan_id": 10}]}"#,
                ),
            ),
            "links[1] (\"v10\"): link type \"vlan\" is not supported",
        ),
        (
            "a bad MAC",
            config_drive(
                &meta_data("h", "h"),
                Some(
                    r#"{"links": [{"id": "a", "type": "phy", "ethernet_mac_address": "00:50:56:zz:8c:08"}]}"#,
                ),
            ),
            "links[0] (\"a\"): ethernet_mac_address",
        ),
        (
            "a huge meta_data.json",
            config_drive(&format!("{{\"uuid\": \"h\", \"x\": \"{big}\"}}"), None),
            "over the limit of 1048576 bytes",
        ),
        (
            "a bad key",
            config_drive(r#"{"uuid": "h", "public_keys": {"k": "ssh-rsa"}}"#, None),
            "public_keys.\"k\" line 1",
        ),
    ];
    for (what, files, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let image = iso(dir.path(), "config-2", &files);
        let vm = new_vm();
        place(&vm, &image, "/dev/sr0");
        let before = vm.state();
        let early = vm.run("early");
        let log = text(&early.stderr);
        assert!(log.contains(want), "{what}: want {want:?} in\n{log}");
        assert_eq!(vm.state(), before, "{what}: the root changed");
        // The same through the command line, with the exit status of invalid input.
        let out = run(&["show", "--seed", image.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(65), "{what}: {}", text(&out.stderr));
    }
}

#[test]
fn a_truncated_iso_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let image = iso(
        dir.path(),
        "config-2",
        &config_drive(&meta_data("t", "t"), Some(&network_data())),
    );
    let bytes = fs::read(&image).unwrap();
    // The descriptors survive; the directories and files are cut off.
    let cut = dir.path().join("cut.iso");
    fs::write(&cut, &bytes[..18 * 2048]).unwrap();
    let out = run(&["show", "--seed", cut.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{err}");
    assert!(err.contains("malformed iso9660 image"), "{err}");
    let vm = new_vm();
    place(&vm, &cut, "/dev/sr0");
    let before = vm.state();
    let early = vm.run("early");
    assert!(
        text(&early.stderr).contains("malformed iso9660 image"),
        "{}",
        text(&early.stderr)
    );
    assert_eq!(vm.state(), before);
}

/// A vfat image whose cluster chains all loop back on themselves: the first file looked
/// at is refused for it, with an error instead of a boot that never finishes.
#[test]
fn a_vfat_image_with_a_loop_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // Enough files in openstack/latest for its directory to need two clusters.
    let mut files = config_drive(&meta_data("l", "l"), None);
    for i in 0..40 {
        files.push((
            format!("openstack/latest/long-file-name-number-{i:03}.txt"),
            "x".into(),
        ));
    }
    let image = vfat(dir.path(), "CONFIG-2", &files);
    let mut bytes = fs::read(&image).unwrap();
    // FAT12 geometry from the boot sector.
    let bps = u16::from_le_bytes([bytes[11], bytes[12]]) as usize;
    let reserved = u16::from_le_bytes([bytes[14], bytes[15]]) as usize;
    let fats = bytes[16] as usize;
    let fat_sectors = u16::from_le_bytes([bytes[22], bytes[23]]) as usize;
    assert_eq!(&bytes[54..59], b"FAT12", "mkfs.vfat made FAT12 for 4 MiB");
    // Point every used FAT12 entry (clusters 2..) at itself: every chain loops, and a
    // directory longer than a cluster never reaches its end marker.
    for f in 0..fats {
        let fat = (reserved + f * fat_sectors) * bps;
        for cluster in 2..200usize {
            let at = fat + cluster * 3 / 2;
            let entry = if cluster % 2 == 0 {
                u16::from_le_bytes([bytes[at], bytes[at + 1]]) & 0x0fff
            } else {
                u16::from_le_bytes([bytes[at], bytes[at + 1]]) >> 4
            };
            if entry == 0 {
                continue;
            }
            let v = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
            let c = cluster as u16;
            let new = if cluster % 2 == 0 {
                (v & 0xf000) | c
            } else {
                (v & 0x000f) | (c << 4)
            };
            bytes[at..at + 2].copy_from_slice(&new.to_le_bytes());
        }
    }
    let looped = dir.path().join("loop.img");
    fs::write(&looped, &bytes).unwrap();
    let t = std::time::Instant::now();
    let out = run(&["show", "--seed", looped.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{err}");
    assert!(t.elapsed() < std::time::Duration::from_secs(60));
    assert!(
        err.contains("meta_data.json on ")
            && err.contains("loop.img: its cluster chain goes on past"),
        "{err}"
    );
}

/// Where a FAT12 image made by mkfs.vfat keeps its FATs and clusters, from its boot sector.
struct Fat12 {
    /// Byte offset of each FAT copy.
    fats: Vec<usize>,
    /// Byte offset of cluster 2.
    data: usize,
    cluster: usize,
}

fn fat12(bytes: &[u8]) -> Fat12 {
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
    assert_eq!(&bytes[54..59], b"FAT12", "mkfs.vfat made FAT12 for 4 MiB");
    let (bps, reserved, fats, fat_sectors) =
        (u16_at(11), u16_at(14), bytes[16] as usize, u16_at(22));
    let root_sectors = (u16_at(17) * 32).div_ceil(bps);
    Fat12 {
        fats: (0..fats)
            .map(|f| (reserved + f * fat_sectors) * bps)
            .collect(),
        data: (reserved + fats * fat_sectors + root_sectors) * bps,
        cluster: bytes[13] as usize * bps,
    }
}

impl Fat12 {
    fn get(&self, bytes: &[u8], cluster: usize) -> u16 {
        let at = self.fats[0] + cluster * 3 / 2;
        let v = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        if cluster.is_multiple_of(2) {
            v & 0x0fff
        } else {
            v >> 4
        }
    }

    /// Sets `cluster`'s entry in every FAT copy.
    fn set(&self, bytes: &mut [u8], cluster: usize, value: u16) {
        for fat in &self.fats {
            let at = fat + cluster * 3 / 2;
            let v = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
            let new = if cluster.is_multiple_of(2) {
                (v & 0xf000) | value
            } else {
                (v & 0x000f) | (value << 4)
            };
            bytes[at..at + 2].copy_from_slice(&new.to_le_bytes());
        }
    }
}

/// Where `content` starts in `bytes`.
fn find(bytes: &[u8], content: &[u8]) -> usize {
    bytes
        .windows(content.len())
        .position(|w| w == content)
        .expect("the file's bytes are on the image")
}

/// A NoCloud vfat seed whose user-data takes five clusters, broken precisely each way
/// fatfs would read as another file: the chain cut, looping, pointing off the medium or
/// past the image's end, the directory entry declaring more or less than the chain
/// holds, or a size over the cap. Each is refused naming the file and the medium, by
/// `show` and at boot, where the guestinfo metadata the VM also has is not taken instead.
#[test]
fn a_vfat_seed_whose_chain_and_size_disagree_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = nocloud("nc-chain", "nc-chain");
    let user_data: String = std::iter::once(USER_DATA.to_string())
        .chain((0..300).map(|i| format!("# line {i:05} of the user-data\n")))
        .collect();
    files[1].1 = user_data.clone();
    // Last on the medium, so that cutting the image cuts only it.
    files.swap(1, 2);
    let image = vfat(dir.path(), "CIDATA", &files);
    let good = fs::read(&image).unwrap();
    let layout = fat12(&good);
    let fat = &layout;
    let len = user_data.len();
    assert_eq!(
        len.div_ceil(fat.cluster),
        5,
        "user-data takes five clusters"
    );
    let start = find(&good, user_data.as_bytes());
    let first = (start - fat.data) / fat.cluster + 2;
    assert_eq!(
        fat.get(&good, first) as usize,
        first + 1,
        "mcopy wrote it in one run"
    );
    // Its directory entry (short name entry: first cluster at 26, size at 28).
    let entry = (0..good.len() / 32)
        .map(|i| i * 32)
        .find(|&at| {
            u16::from_le_bytes([good[at + 26], good[at + 27]]) as usize == first
                && u32::from_le_bytes(good[at + 28..at + 32].try_into().unwrap()) as usize == len
        })
        .expect("user-data's directory entry");
    let set_size = &|b: &mut Vec<u8>, size: u32| {
        b[entry + 28..entry + 32].copy_from_slice(&size.to_le_bytes())
    };
    type Corrupt<'a> = Box<dyn Fn(&mut Vec<u8>) + 'a>;
    let cases: Vec<(&str, Corrupt, String)> = vec![
        (
            "chain cut after one cluster",
            Box::new(move |b| fat.set(b, first, 0xfff)),
            "its cluster chain ends after 1 clusters".into(),
        ),
        (
            "chain cut by a free cluster",
            Box::new(move |b| fat.set(b, first + 2, 0)),
            "its cluster chain ends after 3 clusters".into(),
        ),
        (
            "chain looping back",
            Box::new(move |b| fat.set(b, first + 1, first as u16)),
            format!("its cluster chain loops: cluster 3 is cluster {first} again"),
        ),
        (
            "chain pointing off the medium",
            Box::new(move |b| fat.set(b, first + 1, 0xff0)),
            "cluster 3 of its chain is number 4080, which the medium does not have".into(),
        ),
        (
            "image cut inside the file",
            Box::new(move |b| b.truncate(start + 2 * fat.cluster + 10)),
            "lies past the end of the medium".into(),
        ),
        (
            "size under the chain",
            Box::new(move |b| set_size(b, 100)),
            "its cluster chain goes on past the 100 bytes its directory entry declares".into(),
        ),
        (
            "size over the chain",
            Box::new(move |b| set_size(b, (len + 3 * fat.cluster) as u32)),
            "its cluster chain ends after 5 clusters".into(),
        ),
        (
            "size over the cap",
            Box::new(move |b| set_size(b, u32::MAX)),
            "user-data is 4294967295 bytes, over the limit".into(),
        ),
    ];
    for (what, corrupt, want) in cases {
        let mut bytes = good.clone();
        corrupt(&mut bytes);
        let broken = dir.path().join("broken.img");
        fs::write(&broken, &bytes).unwrap();
        let out = run(&["show", "--seed", broken.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{what}: {err}");
        assert!(
            err.contains(&format!("user-data on {}", broken.display())),
            "{what}: {err}"
        );
        assert!(err.contains(&want), "{what}: want {want:?} in {err}");

        let vm = new_vm();
        fs::write(
            vm.host.path().join("guestinfo.metadata"),
            "instance-id: gi-other\nlocal-hostname: from-guestinfo\n",
        )
        .unwrap();
        place(&vm, &broken, "/dev/sdb");
        let before = vm.state();
        let early = vm.run("early");
        let log = text(&early.stderr);
        assert!(log.contains(&want), "{what}: want {want:?} in\n{log}");
        assert_ne!(early.status.code(), Some(0), "{what}: {log}");
        assert_eq!(
            vm.state(),
            before,
            "{what}: nothing changes, guestinfo is not taken"
        );
    }
}

/// An OVF environment document setting the host name.
fn ovf_env(host: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1"
     xmlns:oe="http://schemas.dmtf.org/ovf/environment/1">
  <PropertySection>
    <Property oe:key="instance-id" oe:value="ovf-1"/>
    <Property oe:key="hostname" oe:value="{host}"/>
  </PropertySection>
</Environment>
"#
    )
}

/// Two broken copies of the ISO image `good`, which holds `content` as one file: cut
/// inside the file, and with every directory record of the file declaring 4 GiB.
fn broken_copies(good: &[u8], content: &[u8]) -> [(&'static str, Vec<u8>); 2] {
    let start = find(good, content);
    let block = (start / 2048) as u32;
    let records: Vec<usize> = (0..good.len() - 34)
        .filter(|&at| {
            u32::from_le_bytes(good[at + 2..at + 6].try_into().unwrap()) == block
                && u32::from_le_bytes(good[at + 10..at + 14].try_into().unwrap()) as usize
                    == content.len()
        })
        .collect();
    assert!(!records.is_empty(), "the file's directory records");
    let mut huge = good.to_vec();
    for at in &records {
        huge[at + 10..at + 14].copy_from_slice(&u32::MAX.to_le_bytes());
    }
    [
        ("cut inside the file", good[..start + 10].to_vec()),
        ("a 4 GiB file", huge),
    ]
}

/// A VM with guestinfo metadata and `medium` as its CD fails its early stage with each
/// of `wants` in the log, and guestinfo is not taken instead.
fn assert_cd_refused(medium: &[u8], wants: &[&str], what: &str) {
    let vm = new_vm();
    fs::write(
        vm.host.path().join("guestinfo.metadata"),
        "instance-id: gi-other\nlocal-hostname: from-guestinfo\n",
    )
    .unwrap();
    fs::create_dir_all(vm.path("/dev")).unwrap();
    fs::write(vm.path("/dev/sr0"), medium).unwrap();
    let before = vm.state();
    let early = vm.run("early");
    let log = text(&early.stderr);
    for want in wants {
        assert!(log.contains(want), "{what}: want {want:?} in\n{log}");
    }
    assert_ne!(early.status.code(), Some(0), "{what}: {log}");
    assert_eq!(vm.state(), before, "{what}: guestinfo is not taken instead");
}

/// An OVF transport CD that cannot be read exactly (cut inside `ovf-env.xml`, or a
/// directory record declaring a 4 GiB file) fails the boot as a broken seed drive does:
/// guestinfo, which the VM also has, is not taken instead.
#[test]
fn a_broken_ovf_cd_fails_the_boot_instead_of_guestinfo() {
    let dir = tempfile::tempdir().unwrap();
    let xml = ovf_env("from-cd");
    let good = fs::read(iso(
        dir.path(),
        "OVF ENV",
        &[("ovf-env.xml".to_string(), xml.clone())],
    ))
    .unwrap();
    let wants = [
        "lies beyond the end of the volume",
        "is 4294967295 bytes, over the limit",
    ];
    for ((what, bytes), want) in broken_copies(&good, xml.as_bytes()).into_iter().zip(wants) {
        // The same medium without guestinfo is taken when whole (below), as a sanity
        // check of the image; broken, it is refused with guestinfo there.
        assert_cd_refused(&bytes, &[want, "/dev/sr0"], what);
    }
    let vm = new_vm();
    fs::create_dir_all(vm.path("/dev")).unwrap();
    fs::write(vm.path("/dev/sr0"), &good).unwrap();
    vm.boot();
    assert_eq!(read(&vm, "/etc/hostname"), "from-cd\n");
}

/// A config-2 or NoCloud ISO that cannot be read exactly (cut inside a file, or a
/// directory record declaring a 4 GiB file) fails the boot naming the file, as a broken
/// OVF CD does: the guestinfo metadata the VM also has is not taken instead.
#[test]
fn a_broken_seed_iso_fails_the_boot_instead_of_guestinfo() {
    let dir = tempfile::tempdir().unwrap();
    let seeds: [(&str, Files, &str); 2] = [
        (
            "config-2",
            config_drive(&meta_data("iso-c", "from-config-drive"), None),
            "meta_data.json",
        ),
        ("cidata", nocloud("iso-n", "from-nocloud"), "meta-data"),
    ];
    for (label, files, victim) in seeds {
        let content = &files.iter().find(|(p, _)| p.ends_with(victim)).unwrap().1;
        let good = fs::read(iso(dir.path(), label, &files)).unwrap();
        let wants = ["beyond the end", "4294967295 bytes, over the limit"];
        for ((what, bytes), want) in broken_copies(&good, content.as_bytes())
            .into_iter()
            .zip(wants)
        {
            assert_cd_refused(&bytes, &[want, victim], &format!("{label}, {what}"));
        }
        // Whole, the same medium is taken.
        let vm = new_vm();
        fs::create_dir_all(vm.path("/dev")).unwrap();
        fs::write(vm.path("/dev/sr0"), &good).unwrap();
        vm.boot();
        assert!(
            read(&vm, "/etc/hostname").starts_with("from-"),
            "{label}: {}",
            read(&vm, "/etc/hostname")
        );
    }
}
