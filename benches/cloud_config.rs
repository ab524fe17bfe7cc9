//! Native cloud-config on the boot path, in-process on a scratch root in a tempdir: the
//! user-data read (a 60-line cloud-config, plain and as a MIME multipart), the
//! customization's `plan_native` (accounts against passwd, group, shadow and gshadow, the
//! module previews), and the early stage of a second boot, where every per-instance
//! module's record says it is done, `update_etc_hosts` (per boot) finds `/etc/hosts` as it
//! wants it, and the kept user-data's `bootcmd` is left out (it would start a shell:
//! processes, not this code); and a Cluster API node's ~20 KiB `## template: jinja`
//! user-data (the kubeadm bootstrap provider's shape: certificates, the join
//! configuration, commands) rendered with its instance data. docs/benchmarks.md has the
//! figures.
//!
//! Run: `cargo bench --bench cloud_config -- --warm-up-time 1 --measurement-time 3`.

use std::fs;
use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use criterion::{criterion_group, criterion_main, Criterion};

use vmcust::test_api::cc_apply::{run_early, ModuleOutcome, StageContext};
use vmcust::test_api::customize::{user_data_disposition, UserDataDisposition};
use vmcust::test_api::model::InstanceId;
use vmcust::test_api::modules::Frequency;
use vmcust::test_api::native::plan_native;
use vmcust::test_api::root::Root;
use vmcust::test_api::settings::{CloudConfigUnknown, UserDataHandler};
use vmcust::test_api::userdata;
use vmcust::test_api::{jinja, jinja::Vars};
use vmcust::test_api::{state, state::InstanceResult};

/// A template's cloud-config as people write them: two users with keys and sudo, files,
/// boot and run commands, packages, host name and time zone. 60 lines.
const CLOUD_CONFIG: &str = r#"#cloud-config
hostname: web-01
fqdn: web-01.example.com
manage_etc_hosts: true
timezone: Europe/Berlin
groups:
  - ops
  - deploy
users:
  - default
  - name: alice
    gecos: Alice Ops
    groups: [ops, sudo]
    sudo: ALL=(ALL) NOPASSWD:ALL
    shell: /bin/bash
    lock_passwd: true
    ssh_authorized_keys:
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f alice@laptop
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB8eHRwbGhkYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgEA alice@desktop
  - name: deploy
    gecos: Deployment
    primary_group: deploy
    groups: [ops]
    sudo: "ALL=(root) NOPASSWD:/usr/bin/systemctl restart app"
    shell: /bin/sh
    ssh_authorized_keys:
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB ci@build
ssh_pwauth: false
chpasswd:
  expire: false
write_files:
  - path: /etc/app/app.conf
    owner: root:root
    permissions: '0644'
    content: |
      [server]
      listen = 0.0.0.0:8080
      workers = 4
  - path: /etc/app/env
    permissions: '0600'
    content: "APP_ENV=production\n"
  - path: /etc/motd
    append: true
    content: "Managed by the platform team.\n"
  - path: /etc/app/deferred.conf
    defer: true
    content: "ready = true\n"
bootcmd:
  - echo "boot $INSTANCE_ID" >> /var/log/boot-marks
  - [sh, -c, "mkdir -p /run/app"]
runcmd:
  - [systemctl, enable, --now, app.service]
  - echo done > /var/tmp/runcmd-ran
  - [sh, -c, "hostname > /etc/app/host"]
packages:
  - nginx
  - [curl, "7.88.12-5"]
  - jq
package_update: true
final_message: "web-01 up after $UPTIME s"
"#;

const INSTANCE: &str = "i-bench-cc";

/// The same document as the one part of a MIME multipart, as a `write-mime-multipart`
/// tool makes it.
fn mime() -> String {
    format!(
        "Content-Type: multipart/mixed; boundary=\"==BOUNDARY==\"\nMIME-Version: 1.0\n\n\
         --==BOUNDARY==\nContent-Type: text/cloud-config; charset=\"us-ascii\"\n\
         MIME-Version: 1.0\nContent-Transfer-Encoding: 7bit\n\
         Content-Disposition: attachment; filename=\"cloud-config.txt\"\n\n\
         {CLOUD_CONFIG}\n--==BOUNDARY==--\n"
    )
}

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path.trim_start_matches('/'));
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// A Debian template's account files and what the modules look at; on tmpfs where there
/// is one, so that the records' fsyncs (the disk's time, not this code's) cost nothing.
fn scratch_root() -> tempfile::TempDir {
    let d = match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm").unwrap(),
        false => tempfile::tempdir().unwrap(),
    };
    let p = d.path();
    write(
        p,
        "/etc/passwd",
        "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n\
         bin:x:2:2:bin:/bin:/usr/sbin/nologin\nsys:x:3:3:sys:/dev:/usr/sbin/nologin\n\
         _apt:x:42:65534::/nonexistent:/usr/sbin/nologin\n\
         nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n\
         systemd-network:x:998:998:systemd Network Management:/:/usr/sbin/nologin\n\
         sshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n",
    );
    write(
        p,
        "/etc/group",
        "root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\nsudo:x:27:\n\
         staff:x:50:\nusers:x:100:\nnogroup:x:65534:\nsystemd-network:x:998:\n",
    );
    write(
        p,
        "/etc/shadow",
        "root:*:19700:0:99999:7:::\ndaemon:*:19700:0:99999:7:::\nbin:*:19700:0:99999:7:::\n\
         sys:*:19700:0:99999:7:::\n_apt:*:19700:0:99999:7:::\nnobody:*:19700:0:99999:7:::\n\
         systemd-network:!*:19700::::::\nsshd:!:19700::::::\n",
    );
    write(
        p,
        "/etc/gshadow",
        "root:*::\ndaemon:*::\nbin:*::\nsys:*::\nadm:*::\ntty:*::\nsudo:*::\nstaff:*::\n\
         users:*::\nnogroup:*::\nsystemd-network:!*::\n",
    );
    write(
        p,
        "/etc/os-release",
        "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n\
         VERSION_ID=\"12\"\nID=debian\n",
    );
    write(p, "/etc/hostname", "template\n");
    write(p, "/etc/hosts", "127.0.0.1 localhost\n127.0.1.1 template\n");
    write(p, "/etc/skel/.profile", "# ~/.profile\n");
    write(p, "/etc/skel/.bashrc", "# ~/.bashrc\n");
    write(p, "/etc/motd", "Debian GNU/Linux\n");
    write(
        p,
        "/etc/sudoers",
        "root ALL=(ALL:ALL) ALL\n@includedir /etc/sudoers.d\n",
    );
    fs::create_dir_all(p.join("etc/sudoers.d")).unwrap();
    fs::create_dir_all(p.join("home")).unwrap();
    fs::create_dir_all(p.join("root")).unwrap();
    d
}

/// The scratch root as the customization and a first boot leave it: the plan's accounts
/// applied, the user-data kept, the result recorded, the early modules run and recorded.
fn customized_root(id: &InstanceId, stop: &AtomicBool) -> tempfile::TempDir {
    let d = scratch_root();
    let root = Root::new(d.path()).unwrap();
    let native = plan_native(
        &root,
        CLOUD_CONFIG.as_bytes(),
        None,
        None,
        &Vars::empty(),
        CloudConfigUnknown::Degrade,
    )
    .unwrap();
    let plan = vmcust::test_api::plan::Plan {
        actions: native.actions,
    };
    vmcust::test_api::apply::apply(&root, &plan).unwrap();
    let dir = state::instance_dir(id);
    root.write_file(
        &dir.join(vmcust::test_api::state::USER_DATA),
        CLOUD_CONFIG.as_bytes(),
        0o600,
    )
    .unwrap();
    state::write_result(
        &root,
        &InstanceResult {
            instance_id: id.clone(),
            outcome: "done".into(),
            code: 0,
            error: None,
            finished: state::now(),
            steps: vec!["applied".into()],
            origins: [("user-data".to_string(), "guestinfo".to_string())].into(),
            degraded: Vec::new(),
            user_data: Some(state::UserDataDisposition::Native),
            nothing_changed: false,
        },
    )
    .unwrap();
    let mut cfg = userdata::read(CLOUD_CONFIG.as_bytes(), None)
        .unwrap()
        .config;
    cfg.bootcmd.clear();
    let first = StageContext::new(root, id.clone(), "boot-1".into(), stop);
    for r in run_early(&first, &cfg) {
        assert!(
            !matches!(r.outcome, ModuleOutcome::Failed { .. }),
            "first boot: {r:?}"
        );
    }
    d
}

fn cloud_config(c: &mut Criterion) {
    let plain = CLOUD_CONFIG.as_bytes();
    let mime = mime();
    assert_eq!(CLOUD_CONFIG.lines().count(), 60);
    for input in [plain, mime.as_bytes()] {
        let read = userdata::read(input, None).unwrap();
        assert!(!read.has_errors(), "{:?}", read.problems);
        assert_eq!(read.config.bootcmd.len(), 2);
    }

    c.bench_function("userdata::read (cloud-config, 60 lines)", |b| {
        b.iter(|| userdata::read(black_box(plain), None).unwrap())
    });
    c.bench_function("userdata::read (MIME multipart of it)", |b| {
        b.iter(|| userdata::read(black_box(mime.as_bytes()), None).unwrap())
    });

    let fresh = scratch_root();
    let root = Root::new(fresh.path()).unwrap();
    let native = plan_native(
        &root,
        plain,
        None,
        None,
        &Vars::empty(),
        CloudConfigUnknown::Degrade,
    )
    .unwrap();
    assert!(native.summary.users.iter().any(|u| u == "alice"));
    c.bench_function("plan_native (60 lines, accounts files)", |b| {
        b.iter(|| {
            plan_native(
                black_box(&root),
                black_box(plain),
                None,
                None,
                &Vars::empty(),
                CloudConfigUnknown::Degrade,
            )
            .unwrap()
        })
    });

    // The early stage on a second boot, as src/boot/cloud_config.rs `early` runs it: the
    // newest result, the kept user-data and the disposition, the read, then the driver,
    // whose per-instance modules are all recorded done.
    let stop = AtomicBool::new(false);
    let id = InstanceId::parse(INSTANCE).unwrap();
    let done = customized_root(&id, &stop);
    let root = Root::new(done.path()).unwrap();
    // Each iteration is a boot of its own: the per-boot records are of earlier boots.
    let boots = std::cell::Cell::new(1u64);
    let second_boot = || {
        boots.set(boots.get() + 1);
        let newest = state::read_results(&root)
            .unwrap()
            .into_iter()
            .next()
            .unwrap();
        let dir = state::instance_dir(&newest.instance_id);
        let bytes = root
            .read(&dir.join(vmcust::test_api::state::USER_DATA))
            .unwrap()
            .unwrap();
        let real = vmcust::test_api::coexist::real_cloud_init(&root).is_some();
        assert!(
            user_data_disposition(&bytes, real, UserDataHandler::Auto)
                == UserDataDisposition::Native
        );
        let vendor = root
            .read(&dir.join(vmcust::test_api::state::VENDOR_DATA))
            .unwrap();
        let mut cfg = userdata::read(&bytes, vendor.as_deref()).unwrap().config;
        cfg.bootcmd.clear();
        let boot_id = format!("boot-{}", boots.get());
        let ctx = StageContext::new(root.clone(), newest.instance_id, boot_id, &stop);
        run_early(&ctx, &cfg)
    };
    let reports = second_boot();
    for r in &reports {
        // Per instance: recorded done. `update_etc_hosts` runs every boot (cloud-init's
        // `manage_etc_hosts: true`) and finds /etc/hosts as it wants it.
        let ok = match &r.outcome {
            ModuleOutcome::Skipped { .. } => true,
            ModuleOutcome::Ran { note } => {
                r.frequency != Frequency::PerInstance && note.ends_with(" 0 changed")
            }
            _ => false,
        };
        assert!(ok, "second boot: {r:?}");
    }
    assert!(reports.iter().any(
        |r| matches!(&r.outcome, ModuleOutcome::Skipped { why } if why.starts_with("already ran"))
    ));
    c.bench_function("early stage, second boot (all done, no bootcmd)", |b| {
        b.iter(second_boot)
    });
}

/// A control-plane join's user-data as the kubeadm bootstrap provider writes it, with the
/// expressions CAPV's templates put in a KubeadmConfig: six PEM-like files of generated
/// text, the join configuration, commands. About 20 KiB.
fn cabpk_user_data() -> String {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut pem = |lines: usize| {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::from("      -----BEGIN CERTIFICATE-----\n");
        for _ in 0..lines {
            out.push_str("      ");
            for _ in 0..64 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                out.push(ALPHABET[(seed % 64) as usize] as char);
            }
            out.push('\n');
        }
        out + "      -----END CERTIFICATE-----\n"
    };
    let mut s = String::from("## template: jinja\n#cloud-config\nwrite_files:\n");
    for name in [
        "ca",
        "sa",
        "front-proxy-ca",
        "etcd/ca",
        "sa-pub",
        "etcd/peer",
    ] {
        s.push_str(&format!(
            "-   path: /etc/kubernetes/pki/{name}.crt\n    owner: root:root\n    permissions: '0640'\n    content: |\n{}",
            pem(40)
        ));
    }
    s.push_str(
        "-   path: /run/kubeadm/kubeadm-join-config.yaml
    owner: root:root
    permissions: '0640'
    content: |
      ---
      apiVersion: kubeadm.k8s.io/v1beta3
      controlPlane:
        localAPIEndpoint: {}
      discovery:
        bootstrapToken:
          apiServerEndpoint: 10.0.0.10:6443
          caCertHashes:
          - sha256:2b1fd5e8a0c3e4b7f6a9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7
          token: abcdef.0123456789abcdef
      kind: JoinConfiguration
      nodeRegistration:
        criSocket: /var/run/containerd/containerd.sock
        kubeletExtraArgs:
          cloud-provider: external
          node-ip: '{{ ds.meta_data.local_ipv4 | default(\"\") }}'
        name: '{{ local_hostname }}'
-   path: /run/cluster-api/placeholder
    owner: root:root
    permissions: '0640'
    content: \"This placeholder file is used to create the /run/cluster-api sub directory\"
runcmd:
  - \"hostnamectl set-hostname \\\"{{ ds.meta_data.hostname }}\\\"\"
  - \"echo \\\"::1         ipv6-localhost ipv6-loopback localhost6 localhost6.localdomain6\\\" >/etc/hosts\"
  - \"echo \\\"127.0.0.1   {{ ds.meta_data.hostname }} {{ local_hostname }} localhost localhost.localdomain localhost4 localhost4.localdomain4\\\" >>/etc/hosts\"
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete
",
    );
    s
}

/// Rendering the CABPK user-data's template (the budget: 2 ms for 20 KiB).
fn jinja_render(c: &mut Criterion) {
    let text = cabpk_user_data();
    assert!((19_000..22_000).contains(&text.len()), "{}", text.len());
    let dir = scratch_root();
    let root = Root::new(dir.path()).unwrap();
    let tree = vmcust::test_api::instance_data::build(
        &root,
        &vmcust::test_api::instance_data::Inputs {
            meta_data: b"instance-id: wk-0\nlocal-hostname: wk-0\nnetwork: {version: 2}\n",
            instance_id: "wk-0",
            host_name: Some("wk-0"),
            source: "guestinfo",
        },
    );
    let vars = Vars::new(&tree);
    let rendered = jinja::render(&text, &vars).unwrap();
    assert!(rendered.text.contains("name: 'wk-0'"));
    assert!(rendered.missing.is_empty(), "{:?}", rendered.missing);
    let read = userdata::read_rendered(text.as_bytes(), None, &vars).unwrap();
    assert!(!read.has_errors(), "{:?}", read.problems);
    c.bench_function("jinja::render (CABPK user-data, 20 KiB)", |b| {
        b.iter(|| jinja::render(black_box(&text), black_box(&vars)).unwrap())
    });
    c.bench_function("userdata::read_rendered (CABPK user-data, 20 KiB)", |b| {
        b.iter(|| userdata::read_rendered(black_box(text.as_bytes()), None, &vars).unwrap())
    });
}

criterion_group!(benches, cloud_config, jinja_render);
criterion_main!(benches);
