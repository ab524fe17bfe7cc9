//! Instance data as cloud-init lays it out: one tree (`v1`, `ds.meta_data`,
//! `sys_info`, `base64_encoded_keys`, `sensitive_keys`) built from the customization's
//! meta-data and the root's facts, used both for the Jinja variables of user-data and for
//! `/run/cloud-init/instance-data-sensitive.json` (0600) and its redacted copy
//! `/run/cloud-init/instance-data.json` (0644), which `cloud-init query` reads.
//!
//! On VMware (guestinfo and raw cloud-init data from a vSphere spec), the host's facts
//! are merged under the meta-data as cloud-init's VMware datasource merges them before
//! user-data is rendered: `hostname`, `local-hostname`, `local_hostname`, the meta-data
//! winning where it has the key.

use std::io;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::root::Root;

/// The root-only file: the whole tree.
pub(crate) const SENSITIVE_PATH: &str = "/run/cloud-init/instance-data-sensitive.json";
/// The world-readable file: the tree with sensitive values replaced.
pub(crate) const PATH: &str = "/run/cloud-init/instance-data.json";
/// What a sensitive value is replaced by in [`PATH`].
pub(crate) const REDACTED: &str = "redacted for non-root user";
/// Key names (lower-cased, at any depth) and slash-paths whose values are sensitive, as
/// cloud-init 23.3 and later list them.
const SENSITIVE: &[&str] = &[
    "combined_cloud_config",
    "merged_cfg",
    "merged_system_cfg",
    "security-credentials",
    "userdata",
    "user-data",
    "user_data",
    "vendordata",
    "vendor-data",
    "ds/vendor_data",
];
/// The largest meta-data or instance-data file read.
const MAX_FILE: u64 = 4 * 1024 * 1024;

const DS_DOC: &str = "EXPERIMENTAL: The structure and format of content scoped under the \
                      'ds' key may change in subsequent releases of cloud-init.";

/// What the tree is built from.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The meta-data as kept for the instance (YAML or JSON; `instance-id` and
    /// `local-hostname` set to what the customization applies).
    pub meta_data: &'a [u8],
    /// The instance id.
    pub instance_id: &'a str,
    /// The system's host name once customized (an FQDN when it has a domain), for the
    /// host facts merged into `ds.meta_data`.
    pub host_name: Option<&'a str>,
    /// The name of the source the user-data came from (`guestinfo`, `imc`, `nocloud` …).
    pub source: &'a str,
}

/// The platform, sub-platform and whether host facts are merged, by source.
fn platform(source: &str) -> (&'static str, &'static str, bool) {
    match source {
        "guestinfo" => ("vmware", "guestinfo (guestinfo.metadata)", true),
        "imc" => ("vmware", "imc (vmware-tools)", true),
        "nocloud" => ("nocloud", "config-disk (cidata)", false),
        "configdrive" => ("openstack", "config-disk (config-2)", false),
        "ovf" | "ovfseed" => ("ovf", "ovf (ovf-env.xml)", false),
        _ => ("vmware", "guestinfo (guestinfo.metadata)", true),
    }
}

/// Builds the tree. Reads only the root's `/etc/os-release` and the running kernel's
/// release.
pub fn build(root: &Root, inputs: &Inputs<'_>) -> Value {
    let mut md = match serde_norway::from_slice::<Value>(inputs.meta_data) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    md.entry("instance-id")
        .or_insert_with(|| Value::from(inputs.instance_id));
    let (platform, subplatform, host_facts) = platform(inputs.source);
    let from_md = md
        .get("local-hostname")
        .and_then(Value::as_str)
        .map(str::to_string);
    if host_facts {
        if let Some(h) = inputs.host_name {
            for key in ["hostname", "local-hostname", "local_hostname"] {
                md.entry(key).or_insert_with(|| Value::from(h));
            }
        }
    }
    let local = local_hostname(from_md.as_deref().or(inputs.host_name));
    let os = os_release(root);
    let get = |k: &str| os.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut distro = get("ID").unwrap_or_default();
    if distro == "rhel" {
        distro = "redhat".into();
    }
    let version = get("VERSION_ID").unwrap_or_default();
    let codename = get("VERSION_CODENAME").unwrap_or_default();
    let variant = variant(&distro, get("ID_LIKE").as_deref().unwrap_or(""));
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let machine = std::env::consts::ARCH;
    let cloud_name = md
        .get("cloud-name")
        .and_then(Value::as_str)
        .map_or(platform.to_string(), str::to_lowercase);
    let zone = md
        .get("availability-zone")
        .or_else(|| md.get("availability_zone"))
        .cloned()
        .unwrap_or(Value::Null);
    let region = md.get("region").cloned().unwrap_or(Value::Null);
    let v1 = json!({
        "_beta_keys": ["subplatform"],
        "availability-zone": zone,
        "availability_zone": zone,
        "cloud-name": cloud_name,
        "cloud_name": cloud_name,
        "cloud_id": cloud_name,
        "distro": distro,
        "distro_release": codename,
        "distro_version": version,
        "instance-id": inputs.instance_id,
        "instance_id": inputs.instance_id,
        "kernel_release": kernel,
        "local-hostname": local,
        "local_hostname": local,
        "machine": machine,
        "platform": platform,
        "public_ssh_keys": public_keys(&md),
        "region": region,
        "subplatform": subplatform,
        "variant": variant,
    });
    let mut tree = json!({
        "base64_encoded_keys": [],
        "ds": {"_doc": DS_DOC, "meta_data": Value::Object(md)},
        "sys_info": {
            "dist": [distro, version, codename],
            "release": kernel,
            "system": "Linux",
            "variant": variant,
        },
        "v1": v1,
    });
    let mut found = Vec::new();
    sensitive_paths(&tree, "", &mut found);
    found.sort();
    tree["sensitive_keys"] = Value::from(found);
    tree
}

/// cloud-init's `local-hostname`: the first label of the name, an IPv4 literal as
/// `ip-a-b-c-d`, `localhost` without one.
fn local_hostname(name: Option<&str>) -> String {
    let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) else {
        return "localhost".into();
    };
    if name.parse::<std::net::Ipv4Addr>().is_ok() {
        return format!("ip-{}", name.replace('.', "-"));
    }
    name.split('.').next().unwrap_or(name).to_string()
}

/// `v1.public_ssh_keys`: the first of the meta-data's key entries, a string split into
/// lines, a list as it is, a mapping's non-empty values.
fn public_keys(md: &Map<String, Value>) -> Value {
    let v = [
        "public-keys-data",
        "public_keys_data",
        "public-keys",
        "public_keys",
    ]
    .iter()
    .find_map(|k| md.get(*k));
    match v {
        Some(Value::String(s)) => Value::from(s.lines().map(str::to_string).collect::<Vec<_>>()),
        Some(Value::Array(a)) => Value::Array(a.clone()),
        Some(Value::Object(m)) => {
            let mut out = Vec::new();
            for v in m.values() {
                match v {
                    Value::Array(a) => out.extend(a.iter().filter(|x| !is_empty(x)).cloned()),
                    x if !is_empty(x) => out.push(x.clone()),
                    _ => {}
                }
            }
            Value::Array(out)
        }
        _ => Value::Array(Vec::new()),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// The distribution family, as cloud-init's `_get_variant` names it.
fn variant(distro: &str, like: &str) -> String {
    let known = [
        "almalinux",
        "alpine",
        "arch",
        "centos",
        "cloudlinux",
        "debian",
        "eurolinux",
        "fedora",
        "freebsd",
        "gentoo",
        "miraclelinux",
        "openeuler",
        "opensuse",
        "photon",
        "rocky",
        "suse",
        "ubuntu",
        "virtuozzo",
    ];
    match distro {
        "redhat" | "rhel" => "rhel".into(),
        "linuxmint" => "ubuntu".into(),
        d if known.contains(&d) => d.into(),
        d if d.starts_with("opensuse") || d.starts_with("sles") => "suse".into(),
        _ => like
            .split_whitespace()
            .find(|l| known.contains(l))
            .unwrap_or("unknown")
            .to_string(),
    }
}

/// The root's `/etc/os-release` (else `/usr/lib/os-release`) as name, value pairs.
fn os_release(root: &Root) -> Vec<(String, String)> {
    let text = ["/etc/os-release", "/usr/lib/os-release"]
        .iter()
        .find_map(|p| {
            root.read_text_capped(Path::new(p), 64 * 1024, "os-release")
                .ok()
                .flatten()
        })
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            (k.trim().to_string(), v.to_string())
        })
        .collect()
}

fn is_sensitive(key: &str, path: &str) -> bool {
    let key = key.to_lowercase();
    let path = path.to_lowercase();
    SENSITIVE.iter().any(|s| *s == key || *s == path)
}

/// The slash-paths of every sensitive key in `v`, with their own case.
fn sensitive_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Value::Object(m) = v {
        for (k, sub) in m {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}/{k}")
            };
            if is_sensitive(k, &path) {
                out.push(path);
            } else {
                sensitive_paths(sub, &path, out);
            }
        }
    }
}

/// The tree with every sensitive value (scalar or whole subtree) replaced by [`REDACTED`].
pub(crate) fn redact(v: &Value) -> Value {
    fn walk(v: &Value, prefix: &str) -> Value {
        let Value::Object(m) = v else {
            return v.clone();
        };
        let mut out = Map::new();
        for (k, sub) in m {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}/{k}")
            };
            let value = if is_sensitive(k, &path) {
                Value::from(REDACTED)
            } else {
                walk(sub, &path)
            };
            out.insert(k.clone(), value);
        }
        Value::Object(out)
    }
    walk(v, "")
}

/// The tree as cloud-init writes it: keys sorted, indent 1, a final newline.
pub(crate) fn to_json(v: &Value) -> Vec<u8> {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    serde::Serialize::serialize(&sorted(v), &mut ser).expect("a JSON value serializes");
    out.push(b'\n');
    out
}

/// Writes both files through `root` (atomic, confined, never through a planted link):
/// the root-only one first, as cloud-init does.
pub(crate) fn write(root: &Root, tree: &Value) -> io::Result<()> {
    root.write_file(Path::new(SENSITIVE_PATH), &to_json(tree), 0o600)?;
    root.write_file(Path::new(PATH), &to_json(&redact(tree)), 0o644)
}

/// Reads the instance data a user may see: root the sensitive file (the redacted one
/// when it is missing, with a warning), others the redacted one.
pub(crate) fn read(root: &Root, privileged: bool) -> Result<(Value, Option<String>), String> {
    let load = |p: &str| -> Result<Option<Value>, String> {
        match root.read_capped(Path::new(p), MAX_FILE, "instance data") {
            Ok(None) => Ok(None),
            Ok(Some(bytes)) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| format!("{p} is not JSON: {e}")),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                Err(format!("No read permission on '{p}'. Try sudo"))
            }
            Err(e) => Err(format!("{p}: {e}")),
        }
    };
    let mut warning = None;
    if privileged {
        if let Some(v) = load(SENSITIVE_PATH)? {
            return Ok((v, None));
        }
        warning = Some(format!(
            "Missing root-readable {SENSITIVE_PATH}. Using redacted {PATH} instead."
        ));
    }
    match load(PATH)? {
        Some(v) => Ok((v, warning)),
        None => Err(format!("Missing instance-data file: {PATH}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        std::fs::write(
            dir.path().join("etc/os-release"),
            "ID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\nVERSION_CODENAME=noble\n",
        )
        .unwrap();
        let root = Root::new(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn tree_as_cloud_init_lays_it_out() {
        let (_d, root) = root();
        let md = b"instance-id: vm-1\nlocal-hostname: node-1.lab.example\npublic-keys: |\n  ssh-ed25519 AAAA a@b\n  ssh-rsa BBBB c@d\nuserdata: s3cret\n";
        let t = build(
            &root,
            &Inputs {
                meta_data: md,
                instance_id: "vm-1",
                host_name: Some("node-1.lab.example"),
                source: "guestinfo",
            },
        );
        let v1 = &t["v1"];
        assert_eq!(v1["instance_id"], "vm-1");
        assert_eq!(v1["local_hostname"], "node-1");
        assert_eq!(v1["local-hostname"], "node-1");
        assert_eq!(v1["platform"], "vmware");
        assert_eq!(v1["cloud_name"], "vmware");
        assert_eq!(v1["subplatform"], "guestinfo (guestinfo.metadata)");
        assert_eq!(v1["distro"], "ubuntu");
        assert_eq!(v1["distro_version"], "24.04");
        assert_eq!(v1["distro_release"], "noble");
        assert_eq!(v1["variant"], "ubuntu");
        assert_eq!(v1["machine"], std::env::consts::ARCH);
        assert_eq!(
            v1["public_ssh_keys"],
            json!(["ssh-ed25519 AAAA a@b", "ssh-rsa BBBB c@d"])
        );
        let md = &t["ds"]["meta_data"];
        assert_eq!(md["hostname"], "node-1.lab.example");
        assert_eq!(md["local_hostname"], "node-1.lab.example");
        assert_eq!(md["local-hostname"], "node-1.lab.example");
        assert_eq!(t["sensitive_keys"], json!(["ds/meta_data/userdata"]));
        let r = redact(&t);
        assert_eq!(r["ds"]["meta_data"]["userdata"], REDACTED);
        assert_eq!(r["v1"], t["v1"]);
        // A NoCloud seed gets no host facts.
        let t = build(
            &root,
            &Inputs {
                meta_data: b"{\"instance-id\": \"i-2\"}",
                instance_id: "i-2",
                host_name: Some("x"),
                source: "nocloud",
            },
        );
        assert_eq!(t["v1"]["platform"], "nocloud");
        assert!(t["ds"]["meta_data"].get("hostname").is_none());
        assert_eq!(t["v1"]["local_hostname"], "x");
        assert_eq!(local_hostname(Some("10.1.2.3")), "ip-10-1-2-3");
        assert_eq!(local_hostname(None), "localhost");
    }

    #[test]
    fn files_modes_format_and_no_secret_in_the_world_readable_one() {
        let (dir, root) = root();
        let t = build(
            &root,
            &Inputs {
                meta_data: b"instance-id: a\nsecurity-credentials: {token: t0pS3cret}\nnested: {User-Data: alsoS3cret}\n",
                instance_id: "a",
                host_name: None,
                source: "guestinfo",
            },
        );
        write(&root, &t).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &str| {
            std::fs::metadata(dir.path().join(p.trim_start_matches('/')))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode(SENSITIVE_PATH), 0o600);
        assert_eq!(mode(PATH), 0o644);
        let public = std::fs::read_to_string(dir.path().join(&PATH[1..])).unwrap();
        let secret = std::fs::read_to_string(dir.path().join(&SENSITIVE_PATH[1..])).unwrap();
        assert!(!public.contains("S3cret"), "{public}");
        assert!(secret.contains("t0pS3cret") && secret.contains("alsoS3cret"));
        assert!(public.starts_with("{\n \"base64_encoded_keys\": [],\n \"ds\": {\n"));
        assert!(public.ends_with("}\n"));
        assert_eq!(
            read(&root, false).unwrap().0["sensitive_keys"],
            json!([
                "ds/meta_data/nested/User-Data",
                "ds/meta_data/security-credentials"
            ])
        );
        assert_eq!(
            read(&root, true).unwrap().0["ds"]["meta_data"]["nested"]["User-Data"],
            "alsoS3cret"
        );
        // A link planted at the file's place is replaced, not written through.
        let outside = tempfile::tempdir().unwrap();
        std::fs::remove_file(dir.path().join(&PATH[1..])).unwrap();
        std::os::unix::fs::symlink(outside.path().join("x"), dir.path().join(&PATH[1..])).unwrap();
        write(&root, &t).unwrap();
        assert!(!outside.path().join("x").exists());
        std::fs::remove_file(dir.path().join(&SENSITIVE_PATH[1..])).unwrap();
        let (_, warning) = read(&root, true).unwrap();
        assert!(warning.unwrap().contains("Using redacted"));
    }
}
