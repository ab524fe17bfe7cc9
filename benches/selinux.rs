//! The cost of SELinux labelling on the boot path: applying a 2-NIC static plan to a
//! fresh copy of the example root (on tmpfs, so that fsync does not hide it) without a policy (what every non-SELinux guest pays),
//! with tests/data/selinux's small policy, and with a 6,000-line policy the size of a
//! targeted one; and the one-time read of that policy and a warm lookup
//! (docs/benchmarks.md, docs/selinux.md).
//!
//! Run: `cargo bench --bench selinux`.

use std::fmt::Write as _;
use std::fs;
use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

use vmcust::test_api::customize::wanted;
use vmcust::test_api::facts::Facts;
use vmcust::test_api::root::Root;
use vmcust::test_api::selinux::{Kind, Labeler};

const SPEC: &[u8] = include_bytes!("../examples/specs/static-2nic-ipv6.cfg");
const FILE_CONTEXTS: &str = "etc/selinux/targeted/contexts/files/file_contexts";

fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let t = entry.file_type().unwrap();
        if t.is_dir() {
            fs::create_dir_all(&dst).unwrap();
            copy_tree(&src, &dst);
        } else if t.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

/// 6,000 lines in the shapes of a targeted policy, then the test policy's own.
fn big_policy(small: &str) -> String {
    let mut s = String::new();
    for i in 0..2000 {
        let _ = writeln!(
            s,
            "/usr/lib/pkg{i}(/.*)?\tsystem_u:object_r:pkg{i}_lib_t:s0"
        );
        let _ = writeln!(
            s,
            "/var/lib/svc{i}(/.*)?\tsystem_u:object_r:svc{i}_var_lib_t:s0"
        );
    }
    for i in 0..1000 {
        let _ = writeln!(
            s,
            "/usr/bin/tool{i}\t--\tsystem_u:object_r:tool{i}_exec_t:s0"
        );
        let _ = writeln!(
            s,
            "/etc/svc{i}\\.conf\t--\tsystem_u:object_r:svc{i}_conf_t:s0"
        );
    }
    s + small
}

/// A fresh example root, with `policy` (`None`: no SELinux policy at all).
fn root_with(policy: Option<&str>) -> tempfile::TempDir {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // On tmpfs, where fsync costs nothing: what is left is the CPU and system-call cost
    // that labelling adds (on a disk, fsync makes it a smaller share still).
    let dir = match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm").unwrap(),
        false => tempfile::tempdir().unwrap(),
    };
    copy_tree(&repo.join("examples/root"), dir.path());
    if let Some(text) = policy {
        copy_tree(&repo.join("tests/data/selinux"), dir.path());
        fs::write(dir.path().join(FILE_CONTEXTS), text).unwrap();
    }
    dir
}

fn labelling(c: &mut Criterion) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let small = fs::read_to_string(repo.join("tests/data/selinux").join(FILE_CONTEXTS)).unwrap();
    let big = big_policy(&small);
    let parsed = vmcust_imc::Spec::parse(SPEC).unwrap();
    let customization = vmcust::test_api::imc::customization(&parsed.spec).unwrap();
    let probe = root_with(None);
    let facts = Facts::gather(&Root::new(probe.path()).unwrap(), &wanted(&customization)).unwrap();
    let plan = vmcust::test_api::plan::plan(&customization, &facts, &Default::default()).unwrap();

    for (name, policy) in [
        ("apply 2-NIC plan, no policy", None),
        ("apply 2-NIC plan, small policy", Some(small.as_str())),
        ("apply 2-NIC plan, 6000-line policy", Some(big.as_str())),
    ] {
        c.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let dir = root_with(policy);
                    let root = Root::new(dir.path()).unwrap();
                    (dir, root)
                },
                |(dir, root)| {
                    vmcust::test_api::apply::apply(&root, black_box(&plan)).unwrap();
                    dir
                },
                BatchSize::PerIteration,
            )
        });
    }

    let dir = root_with(Some(&big));
    let root = Root::new(dir.path()).unwrap();
    let path = Path::new("/etc/netplan/50-vmcust.yaml");
    c.bench_function("read 6000-line policy + first lookup", |b| {
        b.iter(|| {
            Labeler::new()
                .label_for(&root, black_box(path), Kind::File)
                .unwrap()
        })
    });
    let warm = Labeler::new();
    warm.label_for(&root, path, Kind::File).unwrap();
    c.bench_function("lookup, 6000-line policy (warm)", |b| {
        b.iter(|| warm.label_for(&root, black_box(path), Kind::File).unwrap())
    });
}

criterion_group!(benches, labelling);
criterion_main!(benches);
