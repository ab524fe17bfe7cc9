//! Jinja user-data and instance data: a Cluster API (CAPV + kubeadm bootstrap provider)
//! node's `## template: jinja` user-data with CAPV's base64 guestinfo metadata, rendered
//! by `vmcust plan` and by a boot on a scratch root; the instance-data files cloud-init
//! leaves in `/run/cloud-init/` and the stand-in's `cloud-init query` of them; Jinja parts
//! inside MIME and declared `text/jinja2`; a variable that is not defined; a template
//! that does not parse (exit 65, nothing written).

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Output};

use base64::Engine as _;
use support::text;
use support::vm::Vm;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// CAPV's metadata document for one machine (own test values).
const CAPV_METADATA: &str = r#"instance-id: "wk-pool-7x2kq"
local-hostname: "wk-pool-7x2kq"
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
      dhcp4: true
      dhcp6: false
"#;

/// The kubeadm bootstrap provider's document shape, with the expressions CAPV's templates
/// put in a KubeadmConfig.
const CABPK_USERDATA: &str = r#"## template: jinja
#cloud-config
write_files:
-   path: /run/kubeadm/kubeadm-join-config.yaml
    owner: root:root
    permissions: '0640'
    content: |
      ---
      apiVersion: kubeadm.k8s.io/v1beta3
      kind: JoinConfiguration
      nodeRegistration:
        name: '{{ ds.meta_data.local_hostname }}'
        kubeletExtraArgs:
          cloud-provider: external
-   path: /etc/hosts
    permissions: '0644'
    content: |
      ::1         ipv6-localhost ipv6-loopback localhost6 localhost6.localdomain6
      127.0.0.1   {{ ds.meta_data.hostname }} {{ local_hostname }} localhost localhost.localdomain
-   path: /run/cluster-api/placeholder
    owner: root:root
    permissions: '0640'
    content: "This placeholder file is used to create the /run/cluster-api sub directory in a way that is compatible with both Linux and Windows (mkdir -p /run/cluster-api does not work with Windows)"
runcmd:
  - "hostnamectl set-hostname \"{{ ds.meta_data.hostname }}\""
  - echo {{ v1.instance_id }} > /run/cluster-api/instance
"#;

/// A VM with CAPV's guestinfo keys (both base64), and a `hostnamectl` in its root that
/// records its arguments (the real one would ask the host's hostnamed).
fn capv_vm(userdata: &str) -> Vm {
    let vm = Vm::new();
    // The account files a Debian root has (cloud-config creates the default user).
    for (file, text) in [
        ("/etc/group", "root:x:0:\nsudo:x:27:\nusers:x:100:\n"),
        ("/etc/gshadow", "root:*::\nsudo:*::\nusers:*::\n"),
    ] {
        fs::write(vm.path(file), text).unwrap();
    }
    fs::create_dir_all(vm.path("/etc/skel")).unwrap();
    fs::create_dir_all(vm.path("/home")).unwrap();
    let g = vm.host.path();
    fs::write(g.join("guestinfo.metadata"), B64.encode(CAPV_METADATA)).unwrap();
    fs::write(g.join("guestinfo.metadata.encoding"), "base64").unwrap();
    fs::write(g.join("guestinfo.userdata"), B64.encode(userdata)).unwrap();
    fs::write(g.join("guestinfo.userdata.encoding"), "base64").unwrap();
    let bin = vm.path("/usr/bin");
    fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("hostnamectl");
    fs::write(&fake, "#!/bin/sh\necho \"$@\" > /run/hostnamectl.args\n").unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    vm
}

fn plan(vm: &Vm) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmcust"))
        .args(["plan", "--root"])
        .arg(vm.root.path())
        .arg("--guestinfo-dir")
        .arg(vm.host.path())
        .output()
        .unwrap()
}

fn query(vm: &Vm, args: &[&str]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("cloud-init");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_vmcust"), &link).unwrap();
    let out = Command::new(&link)
        .arg("query")
        .args(args)
        .env(vmcust::test_api::state::ROOT_ENV, vm.root.path())
        .output()
        .unwrap();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn mode(vm: &Vm, p: &str) -> u32 {
    fs::metadata(vm.path(p)).unwrap().permissions().mode() & 0o7777
}

#[test]
fn a_capv_node_is_rendered_by_plan_and_by_the_boot() {
    let vm = capv_vm(CABPK_USERDATA);
    let out = plan(&vm);
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        shown.contains("text/cloud-config (rendered from a Jinja template)"),
        "{shown}"
    );
    assert!(
        shown.contains("hostnamectl set-hostname \"wk-pool-7x2kq\""),
        "{shown}"
    );
    assert!(!shown.contains("{{"), "{shown}");
    assert!(!shown.contains("CI_MISSING_JINJA_VAR"), "{shown}");

    vm.boot();
    let join = fs::read_to_string(vm.path("/run/kubeadm/kubeadm-join-config.yaml")).unwrap();
    assert!(join.contains("  name: 'wk-pool-7x2kq'\n"), "{join}");
    let hosts = fs::read_to_string(vm.path("/etc/hosts")).unwrap();
    assert!(
        hosts.contains("127.0.0.1   wk-pool-7x2kq wk-pool-7x2kq localhost localhost.localdomain\n"),
        "{hosts}"
    );
    let args = fs::read_to_string(vm.path("/run/hostnamectl.args")).unwrap();
    assert_eq!(args, "set-hostname wk-pool-7x2kq\n");
    let id = fs::read_to_string(vm.path("/run/cluster-api/instance")).unwrap();
    assert_eq!(id, "wk-pool-7x2kq\n");

    // The instance data, as cloud-init lays it out.
    let sensitive = "/run/cloud-init/instance-data-sensitive.json";
    let public = "/run/cloud-init/instance-data.json";
    assert_eq!(mode(&vm, sensitive), 0o600);
    assert_eq!(mode(&vm, public), 0o644);
    let tree: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(vm.path(public)).unwrap()).unwrap();
    for (key, want) in [
        ("instance_id", "wk-pool-7x2kq"),
        ("local_hostname", "wk-pool-7x2kq"),
        ("platform", "vmware"),
        ("cloud_name", "vmware"),
        ("subplatform", "guestinfo (guestinfo.metadata)"),
        ("machine", std::env::consts::ARCH),
    ] {
        assert_eq!(tree["v1"][key], want, "v1.{key}");
    }
    assert_eq!(tree["ds"]["meta_data"]["hostname"], "wk-pool-7x2kq");
    assert_eq!(
        tree["ds"]["meta_data"]["network"]["ethernets"]["id0"]["set-name"],
        "eth0"
    );
    assert_eq!(tree["v1"]["public_ssh_keys"], serde_json::json!([]));

    // The stand-in's query (the tests run as root: the sensitive file).
    let table: &[(&[&str], &str)] = &[
        (&["local_hostname"], "wk-pool-7x2kq\n"),
        (&["ds.meta_data.local_hostname"], "wk-pool-7x2kq\n"),
        (&["ds.meta_data.instance_id"], "wk-pool-7x2kq\n"),
        (&["v1.instance_id"], "wk-pool-7x2kq\n"),
        (&["--format", "{{ v1.local_hostname }}"], "wk-pool-7x2kq\n"),
        (
            &["--format", "{{ nothere }}"],
            "CI_MISSING_JINJA_VAR/nothere\n",
        ),
        (&["v1.public_ssh_keys"], "[]\n"),
    ];
    for (args, want) in table {
        let (code, out, err) = query(&vm, args);
        assert_eq!((code, out.as_str()), (Some(0), *want), "{args:?}: {err}");
    }
    let (code, keys, _) = query(&vm, &["--list-keys"]);
    assert_eq!(code, Some(0));
    let keys: Vec<&str> = keys.lines().collect();
    for k in [
        "ds",
        "v1",
        "sys_info",
        "sensitive_keys",
        "local_hostname",
        "instance_id",
    ] {
        assert!(keys.contains(&k), "{k} not in {keys:?}");
    }
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let (code, md_keys, _) = query(&vm, &["--list-keys", "ds.meta_data"]);
    assert_eq!(code, Some(0));
    assert!(md_keys.lines().any(|k| k == "local-hostname"), "{md_keys}");
    let (code, all, _) = query(&vm, &["--all"]);
    assert_eq!(code, Some(0));
    let all: serde_json::Value = serde_json::from_str(&all).unwrap();
    assert_eq!(all["local_hostname"], "wk-pool-7x2kq");
    assert_eq!(all["v1"]["platform"], "vmware");
    for (args, code, said) in [
        (
            &["nothere"][..],
            Some(1),
            "Undefined instance-data key 'nothere'",
        ),
        (
            &["v1.nothere"][..],
            Some(1),
            "instance-data 'v1' has no 'nothere'",
        ),
        (
            &["--list-keys", "v1.platform"][..],
            Some(1),
            "is not a dict",
        ),
        (&[][..], Some(1), "Expected one of the options"),
    ] {
        let (c, _, err) = query(&vm, args);
        assert_eq!(c, code, "{args:?}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
}

#[test]
fn a_secret_in_the_metadata_never_reaches_the_world_readable_file() {
    let vm = capv_vm("## template: jinja\n#cloud-config\nruncmd: ['echo {{ local_hostname }}']\n");
    let md = format!(
        "{CAPV_METADATA}security-credentials:\n  token: Tok3n-s3cret\nuserdata: also-s3cret\n"
    );
    fs::write(vm.host.path().join("guestinfo.metadata"), B64.encode(md)).unwrap();
    vm.boot();
    let public = fs::read_to_string(vm.path("/run/cloud-init/instance-data.json")).unwrap();
    assert!(!public.contains("s3cret"), "{public}");
    assert!(public.contains("\"security-credentials\": \"redacted for non-root user\""));
    let sensitive =
        fs::read_to_string(vm.path("/run/cloud-init/instance-data-sensitive.json")).unwrap();
    assert!(sensitive.contains("Tok3n-s3cret"));
}

#[test]
fn jinja_parts_in_mime_and_text_jinja2_and_a_missing_variable() {
    let mime = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"==b==\"\n\n\
--==b==\nContent-Type: text/x-shellscript\n\n## template: jinja\n#!/bin/sh\necho {{ v1.local_hostname }} > /run/from-script\n\
--==b==\nContent-Type: text/jinja2\n\n## template: jinja\n#cloud-config\nwrite_files:\n- path: /etc/from-jinja2\n  content: \"{{ instance_id }} {{ ds.meta_data.no_such_key }}\"\n\
--==b==--\n";
    let vm = capv_vm(mime);
    let out = plan(&vm);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("part 0: text/x-shellscript (rendered from a Jinja template)")
            && shown.contains("part 1: text/cloud-config (rendered from a Jinja template)"),
        "{shown}"
    );
    let log = text(&out.stderr);
    assert!(
        log.contains("CI_MISSING_JINJA_VAR/<name>: no_such_key"),
        "{log}"
    );
    vm.boot();
    assert_eq!(
        fs::read_to_string(vm.path("/etc/from-jinja2")).unwrap(),
        "wk-pool-7x2kq CI_MISSING_JINJA_VAR/no_such_key"
    );
    assert_eq!(
        fs::read_to_string(vm.path("/run/from-script")).unwrap(),
        "wk-pool-7x2kq\n"
    );
}

#[test]
fn a_template_that_does_not_parse_changes_nothing() {
    let vm = capv_vm("## template: jinja\n#cloud-config\nruncmd:\n  - echo {{ local_hostname\n");
    let out = plan(&vm);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("user-data part 1: line 4: the Jinja template has a syntax error"),
        "{err}"
    );
    let etc = support::snapshot(&vm.path("/etc"));
    let early = vm.run("early");
    assert_eq!(early.status.code(), Some(65), "{}", text(&early.stderr));
    assert_eq!(support::snapshot(&vm.path("/etc")), etc);
    // The boot's own records (status.json, result.json) say it failed; no instance data
    // was written for a document that was refused.
    assert!(!vm.path("/run/cloud-init/instance-data.json").exists());
    assert!(!vm
        .path("/run/cloud-init/instance-data-sensitive.json")
        .exists());
    assert!(!vm.path("/run/kubeadm").exists());
}

#[test]
fn schema_renders_with_the_instance_data_given() {
    let dir = tempfile::tempdir().unwrap();
    let ud = dir.path().join("user-data");
    fs::write(
        &ud,
        "## template: jinja\n#cloud-config\nhostname: {{ local_hostname }}\nruncmd: [echo {{ ds.meta_data['instance-id'] }}]\n",
    )
    .unwrap();
    let idata = dir.path().join("instance-data.json");
    fs::write(
        &idata,
        r#"{"v1": {"local_hostname": "n-3"}, "ds": {"meta_data": {"instance-id": "i-3"}}}"#,
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["schema", "--format", "json", ud.to_str().unwrap()];
        args.extend_from_slice(extra);
        support::vmcust(&args)
    };
    let out = run(&["--instance-data", idata.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(read["config"]["hostname"], "n-3");
    assert_eq!(read["config"]["runcmd"][0]["shell"], "echo i-3");
    assert_eq!(read["problems"], serde_json::json!([]));
    // Without instance data, `ds` is not defined: a key of it cannot be read.
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("line 4: the Jinja template cannot be rendered"),
        "{}",
        text(&out.stderr)
    );
}
