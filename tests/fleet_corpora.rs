//! Golden corpora of what the tools that drive fleets on vSphere send, each in the exact
//! shape the tool's code writes it (own test values): Cluster API vSphere (kubeadm node
//! user-data with `## template: jinja`, base64 guestinfo metadata with `set-name`), VM
//! Service (gzip+base64 metadata and user-data, `public-keys` as one string, FQDN host
//! names, `vlans`), Terraform's `extra_config` (base64 metadata, gzip+base64 MIME user-data from
//! `cloudinit_config`), Packer's `cidata` NoCloud CD (`cd_content`, JSON `meta-data`) and
//! Rancher's vSphere driver (a `cidata` CD with a one-line `meta-data`).
//!
//! Each boots a scratch root (early stage, then late) and compares what the boot wrote —
//! every file that is new or changed, with times and host facts masked — with
//! `tests/golden/fleet/<corpus>/` (regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test --test fleet_corpora`, then review the diff); then checks
//! the contract the tool relies on.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use support::vm::Vm;
use support::{repo, text};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Public keys only (made for these tests; no private half is kept anywhere).
const KEY_CAPI: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFzCw0XrQGGIbcJP51hBR/Ly3NVmqB2Edyf0DLoFONtJ capi@mgmt";
const KEY_OPS: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJxYAFACH2NS4SxTf1hRNfOJYYiwpEZGJdT85hMorXC7 ops@vmservice";

fn gzip_b64(s: &str) -> String {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(s.as_bytes()).unwrap();
    B64.encode(gz.finish().unwrap())
}

/// A VM with the account files a Debian root has, and stand-ins in its `/usr/bin` for
/// the programs the user-data calls (each records its arguments under `/run/called/`).
fn vm_with(programs: &[&str]) -> Vm {
    let vm = Vm::new();
    for (file, text) in [
        ("/etc/group", "root:x:0:\nsudo:x:27:\nusers:x:100:\n"),
        ("/etc/gshadow", "root:*::\nsudo:*::\nusers:*::\n"),
    ] {
        fs::write(vm.path(file), text).unwrap();
    }
    for dir in ["/etc/skel", "/home", "/root", "/usr/bin", "/var/tmp"] {
        fs::create_dir_all(vm.path(dir)).unwrap();
    }
    for p in programs {
        let fake = vm.path(&format!("/usr/bin/{p}"));
        fs::write(
            &fake,
            format!("#!/bin/sh\nmkdir -p /run/called\necho \"$@\" >> /run/called/{p}\n"),
        )
        .unwrap();
        fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    }
    vm
}

/// guestinfo keys as the host directory holds them.
fn guestinfo(vm: &Vm, keys: &[(&str, &str)]) {
    for (k, v) in keys {
        fs::write(vm.host.path().join(format!("guestinfo.{k}")), v).unwrap();
    }
}

/// A `cidata` ISO9660 image made by genisoimage, with Joliet and Rock Ridge names as
/// Packer's and Rancher's tools make it, on the VM's `/dev/sr0` with udev's label link.
fn cidata_cd(vm: &Vm, files: &[(&str, &str)]) {
    support::require_tool("genisoimage", "genisoimage");
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("cd");
    fs::create_dir_all(&top).unwrap();
    for (name, body) in files {
        fs::write(top.join(name), body).unwrap();
    }
    let image = dir.path().join("cidata.iso");
    let status = Command::new("genisoimage")
        .args(["-quiet", "-J", "-r", "-V", "cidata", "-o"])
        .arg(&image)
        .arg(&top)
        .stderr(Stdio::null())
        .status()
        .expect("genisoimage is needed for this test: apt-get install -y genisoimage");
    assert!(status.success());
    fs::create_dir_all(vm.path("/dev/disk/by-label")).unwrap();
    fs::copy(&image, vm.path("/dev/sr0")).unwrap();
    std::os::unix::fs::symlink("../../sr0", vm.path("/dev/disk/by-label/cidata")).unwrap();
}

/// Masks what differs from one run or machine to the next: times, and the facts of the
/// machine the test runs on, in JSON documents (by key) and in `boot-finished`.
fn mask(path: &Path, body: &str) -> String {
    if path.file_name().is_some_and(|n| n == "boot-finished") {
        return "<uptime> - <date> - v. <version>\n".into();
    }
    if path.file_name().is_some_and(|n| n == "shadow") {
        // The date of the last password change (field 3) of what the boot wrote is the
        // day it ran (or the day before, across midnight): masked, so the golden holds on
        // any day; any other date stays and fails the comparison.
        let days = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            / 86400;
        let today = [days.to_string(), (days - 1).to_string()];
        return body
            .lines()
            .map(|line| {
                let mut fields: Vec<&str> = line.split(':').collect();
                if fields.len() == 9 && today.iter().any(|d| d == fields[2]) {
                    fields[2] = "<today>";
                }
                fields.join(":") + "\n"
            })
            .collect();
    }
    if path.extension().is_some_and(|e| e == "json") {
        if let Ok(mut v) = serde_json::from_str::<serde_json::Value>(body) {
            mask_json(&mut v);
            return serde_json::to_string_pretty(&v).unwrap() + "\n";
        }
    }
    body.to_string()
}

const HOST_KEYS: &[&str] = &[
    "kernel_release",
    "machine",
    "python_version",
    "distro",
    "distro_release",
    "distro_version",
    "sys_info",
    "variant",
    "dist",
    "uname",
    "release",
    "version",
];

/// Keys whose value is a wall-clock time, whatever its type.
const TIME_KEYS: &[&str] = &["updated", "last_update"];

fn mask_json(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Number(n) if n.is_f64() => *v = Value::String("<time>".into()),
        Value::Array(a) => a.iter_mut().for_each(mask_json),
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if TIME_KEYS.contains(&k.as_str()) && !x.is_null() {
                    *x = Value::String("<time>".into());
                } else if HOST_KEYS.contains(&k.as_str()) && (x.is_string() || x.is_object()) {
                    *x = Value::String(format!("<{k}>"));
                } else {
                    mask_json(x);
                }
            }
        }
        _ => {}
    }
}

/// Everything the boot wrote: the files that are new or changed, masked; vmcust's own
/// journal and logs (compared by other tests) left out.
fn written(vm: &Vm, before: &BTreeMap<PathBuf, String>) -> BTreeMap<PathBuf, String> {
    let skip = ["var/lib/vmcust", "var/log", "usr/bin", "dev"];
    root_files(vm.root.path())
        .into_iter()
        .filter(|(p, _)| !skip.iter().any(|s| p.starts_with(s)))
        .filter(|(p, body)| before.get(p) != Some(body))
        .map(|(p, body)| {
            let masked = mask(&p, &body);
            (p, masked)
        })
        .collect()
}

/// The root's files (relative paths → text), without the shell the VM's scripts run
/// with.
fn root_files(root: &Path) -> BTreeMap<PathBuf, String> {
    let shell: Vec<PathBuf> = support::SHELL_DIRS.iter().map(|d| root.join(d)).collect();
    support::walk(root)
        .into_iter()
        .filter(|p| !shell.iter().any(|s| p.starts_with(s)))
        .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .map(|p| {
            let body = String::from_utf8_lossy(&fs::read(&p).unwrap()).into_owned();
            (p.strip_prefix(root).unwrap().to_path_buf(), body)
        })
        .collect()
}

/// Boots the VM (both stages must exit 0) and compares what it wrote with the corpus's
/// golden tree.
fn boot_and_compare(vm: &Vm, corpus: &str) {
    let before = root_files(vm.root.path());
    vm.boot();
    let got = written(vm, &before);
    support::check_golden_tree(&repo().join("tests/golden/fleet").join(corpus), &got);
}

fn read(vm: &Vm, p: &str) -> String {
    fs::read_to_string(vm.path(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The stand-in as a waiter calls it: `cloud-init ARGS` on this VM's root.
fn cloud_init(vm: &Vm, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("cloud-init");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), &link).unwrap();
    Command::new(&link)
        .args(args)
        .env(vmcust::test_api::state::ROOT_ENV, vm.root.path())
        .output()
        .unwrap()
}

fn instance_data(vm: &Vm) -> serde_json::Value {
    serde_json::from_str(&read(vm, "/run/cloud-init/instance-data.json")).unwrap()
}

/// What every tool's waiter relies on once the boot is over: `boot-finished`, done in
/// `status.json`, no errors in `result.json`, and `cloud-init status --wait` exiting 0.
fn waiters_see_done(vm: &Vm) {
    assert!(vm.path("/var/lib/cloud/instance/boot-finished").is_file());
    let status: serde_json::Value =
        serde_json::from_str(&read(vm, "/var/lib/cloud/data/status.json")).unwrap();
    assert_eq!(status["v1"]["stage"], serde_json::Value::Null);
    let result: serde_json::Value =
        serde_json::from_str(&read(vm, "/var/lib/cloud/data/result.json")).unwrap();
    assert_eq!(result["v1"]["errors"], serde_json::json!([]), "{result}");
    let o = cloud_init(vm, &["status", "--wait"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).ends_with("status: done\n"), "{o:?}");
}

// ------------------------------------------------------------------ Cluster API vSphere

/// CAPV's metadata template, for a worker with one static NIC.
const CAPV_METADATA: &str = r#"instance-id: "capv-md-0-8xq2l"
local-hostname: "capv-md-0-8xq2l"
wait-on-network:
  ipv4: true
  ipv6: false
network:
  version: 2
  ethernets:
    id0:
      match:
        macaddress: "00:50:56:a6:8c:08"
      set-name: "eth0"
      wakeonlan: true
      dhcp4: false
      dhcp6: false
      accept-ra: false
      dhcp4-overrides:
        use-dns: false
      addresses:
      - "10.40.1.21/24"
      gateway4: "10.40.1.1"
      routes:
      - to: "10.50.0.0/16"
        via: "10.40.1.254"
        metric: 100
      nameservers:
        addresses:
        - "10.40.0.10"
        search:
        - "k8s.example.test"
"#;

/// The kubeadm bootstrap provider's worker document (header, write_files with 4-space
/// list style, runcmd with the join and its sentinel, users), with the expressions
/// CAPV's templates put in a KubeadmConfig.
fn capv_userdata() -> String {
    format!(
        r#"## template: jinja
#cloud-config

write_files:
-   path: /etc/kubernetes/kubelet-extra.env
    owner: root:root
    permissions: '0644'
    content: |
      KUBELET_NODE_NAME={{{{ local_hostname }}}}
-   path: /run/kubeadm/kubeadm-join-config.yaml
    owner: root:root
    permissions: '0640'
    content: |
      ---
      apiVersion: kubeadm.k8s.io/v1beta3
      discovery:
        bootstrapToken:
          apiServerEndpoint: 10.40.1.5:6443
          token: abcdef.0123456789abcdef
          unsafeSkipCAVerification: true
      kind: JoinConfiguration
      nodeRegistration:
        criSocket: /var/run/containerd/containerd.sock
        kubeletExtraArgs:
          cloud-provider: external
        name: '{{{{ local_hostname }}}}'
-   path: /run/cluster-api/placeholder
    owner: root:root
    permissions: '0640'
    content: "This placeholder file is used to create the /run/cluster-api sub directory in a way that is compatible with both Linux and Windows (mkdir -p /run/cluster-api does not work with Windows)"
runcmd:
  - "hostnamectl set-hostname \"{{{{ ds.meta_data.hostname }}}}\""
  - "echo \"::1         ipv6-localhost ipv6-loopback localhost6 localhost6.localdomain6\" >/etc/hosts"
  - "echo \"127.0.0.1   {{{{ ds.meta_data.hostname }}}} {{{{ local_hostname }}}} localhost localhost.localdomain localhost4 localhost4.localdomain4\" >>/etc/hosts"
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete
users:
  - name: capv
    sudo: ALL=(ALL) NOPASSWD:ALL
    ssh_authorized_keys:
      - "{KEY_CAPI}"
"#
    )
}

#[test]
fn cluster_api_vsphere_kubeadm_node() {
    let vm = vm_with(&["hostnamectl", "kubeadm"]);
    guestinfo(
        &vm,
        &[
            ("metadata", &B64.encode(CAPV_METADATA)),
            ("metadata.encoding", "base64"),
            ("userdata", &B64.encode(capv_userdata())),
            ("userdata.encoding", "base64"),
        ],
    );
    boot_and_compare(&vm, "capv");

    // The node is named from the metadata everywhere kubeadm and the hosts file look.
    assert_eq!(read(&vm, "/etc/hostname"), "capv-md-0-8xq2l\n");
    let join = read(&vm, "/run/kubeadm/kubeadm-join-config.yaml");
    assert!(join.contains("  name: 'capv-md-0-8xq2l'\n"), "{join}");
    let hosts = read(&vm, "/etc/hosts");
    assert!(
        hosts.contains("127.0.0.1   capv-md-0-8xq2l capv-md-0-8xq2l localhost"),
        "{hosts}"
    );
    assert_eq!(
        read(&vm, "/run/called/hostnamectl"),
        "set-hostname capv-md-0-8xq2l\n"
    );
    // The join ran from the runcmd script, and left the bootstrap sentinel.
    let script = read(
        &vm,
        "/var/lib/vmcust/instances/capv-md-0-8xq2l/scripts/runcmd",
    );
    assert!(
        script.contains("kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml"),
        "{script}"
    );
    assert_eq!(
        read(&vm, "/run/called/kubeadm"),
        "join --config /run/kubeadm/kubeadm-join-config.yaml\n"
    );
    assert_eq!(
        read(&vm, "/run/cluster-api/bootstrap-success.complete"),
        "success\n"
    );
    assert!(read(&vm, "/home/capv/.ssh/authorized_keys").contains(KEY_CAPI));
    // The NIC is renamed and configured as eth0, by its MAC.
    let netplan = read(&vm, "/etc/netplan/50-vmcust.yaml");
    assert!(netplan.contains("    eth0:\n"), "{netplan}");
    assert!(netplan.contains("set-name: eth0"), "{netplan}");
    let mode = |p: &str| fs::metadata(vm.path(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("/run/cloud-init/instance-data.json"), 0o644);
    assert_eq!(mode("/run/cloud-init/instance-data-sensitive.json"), 0o600);
    let data = instance_data(&vm);
    assert_eq!(data["v1"]["local_hostname"], "capv-md-0-8xq2l");
    assert_eq!(data["ds"]["meta_data"]["local-hostname"], "capv-md-0-8xq2l");
    waiters_see_done(&vm);
}

// ------------------------------------------------------------------ VM Service

/// vm-operator's metadata: keys sorted, FQDN host names, `public-keys` as one string,
/// a VLAN on the NIC (`vlans`, with `id` and `link`).
fn vmservice_metadata() -> String {
    format!(
        r#"hostname: db-01.corp.example.test
instance-id: 0f9d4b8e-3a51-4c2e-9b7a-5d3c2e1f0a99
local-hostname: db-01.corp.example.test
network:
  ethernets:
    eth0:
      accept-ra: false
      dhcp4: true
      dhcp6: false
      match:
        macaddress: 00:50:56:a6:8c:08
      nameservers: {{}}
      set-name: eth0
  version: 2
  vlans:
    eth0.100:
      accept-ra: false
      addresses:
      - 10.100.0.21/24
      dhcp4: false
      dhcp6: false
      id: 100
      link: eth0
public-keys: "{KEY_CAPI}\n{KEY_OPS}"
wait-on-network:
  ipv4: true
"#
    )
}

/// A structured `cloudConfig`, rendered as vm-operator renders it: always Jinja-headed,
/// an empty line, then YAML.
const VMSERVICE_USERDATA: &str = r#"## template: jinja
#cloud-config

runcmd:
- echo "{{ v1.local_hostname }} {{ ds.meta_data.hostname }}" > /var/tmp/vmservice-names
ssh_pwauth: false
users:
- default
- lock_passwd: true
  name: dbadmin
  shell: /bin/bash
write_files:
- content: |
    max_connections = 200
  path: /etc/vmservice/db.conf
  permissions: "0640"
"#;

#[test]
fn vm_service_cloudinit_guestinfo_transport() {
    let vm = vm_with(&[]);
    guestinfo(
        &vm,
        &[
            ("metadata", &gzip_b64(&vmservice_metadata())),
            ("metadata.encoding", "gzip+base64"),
            ("userdata", &gzip_b64(VMSERVICE_USERDATA)),
            ("userdata.encoding", "gzip+base64"),
        ],
    );
    boot_and_compare(&vm, "vm-service");

    assert_eq!(read(&vm, "/etc/hostname"), "db-01\n");
    assert_eq!(
        read(&vm, "/var/tmp/vmservice-names"),
        "db-01 db-01.corp.example.test\n"
    );
    assert_eq!(
        read(&vm, "/etc/vmservice/db.conf"),
        "max_connections = 200\n"
    );
    // The VLAN reaches the stack, on the renamed NIC.
    let netplan = read(&vm, "/etc/netplan/50-vmcust.yaml");
    assert!(
        netplan.contains("  vlans:\n    eth0.100:\n      id: 100\n      link: eth0\n"),
        "{netplan}"
    );
    let data = instance_data(&vm);
    assert_eq!(
        data["v1"]["public_ssh_keys"],
        serde_json::json!([KEY_CAPI, KEY_OPS])
    );
    waiters_see_done(&vm);
}

// ------------------------------------------------------------------ Terraform

/// `cloudinit_config`'s output (gzip: true, base64_encode: true): a MIME multipart
/// with a cloud-config part and a shell script part.
const TERRAFORM_MIME: &str = "Content-Type: multipart/mixed; boundary=\"MIMEBOUNDARY\"\r
MIME-Version: 1.0\r
\r
--MIMEBOUNDARY\r
Content-Disposition: attachment; filename=\"cloud-config.yaml\"\r
Content-Transfer-Encoding: 7bit\r
Content-Type: text/cloud-config\r
Mime-Version: 1.0\r
\r
#cloud-config
write_files:
  - path: /etc/app/terraform.env
    content: |
      ENVIRONMENT=staging
\r
--MIMEBOUNDARY\r
Content-Disposition: attachment; filename=\"bootstrap.sh\"\r
Content-Transfer-Encoding: 7bit\r
Content-Type: text/x-shellscript\r
Mime-Version: 1.0\r
\r
#!/bin/sh
echo bootstrapped > /var/tmp/terraform-bootstrap
\r
--MIMEBOUNDARY--\r
";

const TERRAFORM_METADATA: &str = "instance-id: tf-web-0
local-hostname: tf-web-0
network:
  version: 2
  ethernets:
    nics:
      match:
        name: ens*
      dhcp4: true
";

#[test]
fn terraform_extra_config_encodings() {
    let vm = vm_with(&[]);
    guestinfo(
        &vm,
        &[
            ("metadata", &B64.encode(TERRAFORM_METADATA)),
            ("metadata.encoding", "base64"),
            ("userdata", &gzip_b64(TERRAFORM_MIME)),
            ("userdata.encoding", "gzip+base64"),
        ],
    );
    boot_and_compare(&vm, "terraform");

    // Both encodings decoded: the metadata named the host, both MIME parts applied.
    assert_eq!(read(&vm, "/etc/hostname"), "tf-web-0\n");
    assert_eq!(read(&vm, "/etc/app/terraform.env"), "ENVIRONMENT=staging\n");
    assert_eq!(read(&vm, "/var/tmp/terraform-bootstrap"), "bootstrapped\n");
    waiters_see_done(&vm);
}

// ------------------------------------------------------------------ Packer

#[test]
fn packer_cidata_cd_content() {
    let vm = vm_with(&[]);
    // `meta-data = jsonencode({...})`, `user-data` from a template file.
    let meta = r#"{"instance-id":"packer-ubuntu-2404","local-hostname":"pkr-ubuntu"}"#;
    let user = format!(
        "#cloud-config\nusers:\n  - name: packer\n    sudo: ALL=(ALL) NOPASSWD:ALL\n    ssh_authorized_keys:\n      - {KEY_OPS}\nruncmd:\n  - touch /var/tmp/packer-ready\n"
    );
    cidata_cd(&vm, &[("meta-data", meta), ("user-data", &user)]);
    boot_and_compare(&vm, "packer");

    assert_eq!(read(&vm, "/etc/hostname"), "pkr-ubuntu\n");
    assert!(vm.path("/var/tmp/packer-ready").is_file());
    assert!(read(&vm, "/home/packer/.ssh/authorized_keys").contains(KEY_OPS));
    // The provisioner's two idioms: the boot-finished loop and `status --wait` under
    // `sh -e` (any exit but 0 fails the build).
    waiters_see_done(&vm);
    let o = Command::new("sh")
        .args([
            "-e",
            "-c",
            "while [ ! -f \"$ROOT/var/lib/cloud/instance/boot-finished\" ]; do sleep 1; done; \"$CI\" status --wait",
        ])
        .env("ROOT", vm.root.path())
        .env("CI", stand_in_link(&vm))
        .env(vmcust::test_api::state::ROOT_ENV, vm.root.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// A `cloud-init` link to vmcust kept for the life of the VM's host directory.
fn stand_in_link(vm: &Vm) -> PathBuf {
    let link = vm.host.path().join("cloud-init");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), &link).unwrap();
    }
    link
}

// ------------------------------------------------------------------ Rancher

#[test]
fn rancher_vsphere_driver_cidata() {
    let vm = vm_with(&[]);
    // The driver's user-data: the user's cloud-config re-serialised as YAML, its users
    // entry and group appended; meta-data is one line without an instance-id.
    let user = format!(
        "#cloud-config\ngroups:\n- staff\nruncmd:\n- echo rancher > /var/tmp/rancher-ran\nusers:\n- create_groups: false\n  groups: staff\n  lock_passwd: true\n  name: docker\n  no_user_group: true\n  ssh_authorized_keys:\n  - {KEY_OPS}\n  sudo: ALL=(ALL) NOPASSWD:ALL\n"
    );
    cidata_cd(
        &vm,
        &[
            ("meta-data", "local-hostname: rancher-pool1-a1b2c\n"),
            ("user-data", &user),
        ],
    );
    boot_and_compare(&vm, "rancher");

    assert_eq!(read(&vm, "/etc/hostname"), "rancher-pool1-a1b2c\n");
    assert!(vm.path("/var/tmp/rancher-ran").is_file());
    assert!(read(&vm, "/home/docker/.ssh/authorized_keys").contains(KEY_OPS));
    // The driver's check, verbatim: exit 0 or 2 passes, anything else fails.
    let o = Command::new("bash")
        .args([
            "-c",
            "\"$CI\" status --wait >/dev/null || if [ $? == 2 ]; then true ; fi",
        ])
        .env("CI", stand_in_link(&vm))
        .env(vmcust::test_api::state::ROOT_ENV, vm.root.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    waiters_see_done(&vm);
}

// ------------------------------------------------------------------ metadata only

/// An instance with meta-data and no user-data (CAPV's metadata alone, as a template
/// whose bootstrap data has not arrived yet sends it) still gets its instance data on
/// every boot, and `cloud-init query` answers from it.
#[test]
fn metadata_only_instance_has_instance_data() {
    let vm = vm_with(&[]);
    guestinfo(
        &vm,
        &[
            ("metadata", &B64.encode(CAPV_METADATA)),
            ("metadata.encoding", "base64"),
        ],
    );
    vm.boot();
    let mode = |p: &str| fs::metadata(vm.path(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("/run/cloud-init/instance-data.json"), 0o644);
    assert_eq!(mode("/run/cloud-init/instance-data-sensitive.json"), 0o600);
    let data = instance_data(&vm);
    assert_eq!(data["v1"]["instance_id"], "capv-md-0-8xq2l");
    assert_eq!(data["v1"]["local_hostname"], "capv-md-0-8xq2l");
    assert_eq!(data["v1"]["platform"], "vmware");
    assert_eq!(
        data["ds"]["meta_data"]["network"]["ethernets"]["id0"]["set-name"],
        "eth0"
    );
    let o = cloud_init(&vm, &["query", "local_hostname"]);
    assert_eq!(
        (o.status.code(), text(&o.stdout)),
        (Some(0), "capv-md-0-8xq2l\n".to_string()),
        "{}",
        text(&o.stderr)
    );
    // /run is a tmpfs: the next boot writes it again.
    fs::remove_dir_all(vm.path("/run/cloud-init")).unwrap();
    vm.boot();
    assert_eq!(instance_data(&vm)["v1"]["instance_id"], "capv-md-0-8xq2l");
    waiters_see_done(&vm);
}
