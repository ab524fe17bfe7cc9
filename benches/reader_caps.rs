//! The readers of untrusted documents from 1 KiB up to their caps (docs/limits.md): a
//! `#cloud-config` mapping of unknown keys (every per-key check runs), the same merged
//! under itself as vendor-data, a MIME multipart of 8 parts, a cust.cfg section and an OVF
//! environment. Criterion reports the throughput of each size; docs/benchmarks.md ("Big
//! inputs") has the time per MiB, which stays flat when a reader is linear.
//!
//! Run: `cargo bench --bench reader_caps -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use vmcust::test_api::userdata;

/// Builds a document of about `bytes` bytes from a head, a line per entry and a tail.
fn document(bytes: usize, head: &str, entry: impl Fn(usize) -> String, tail: &str) -> Vec<u8> {
    let mut s = String::from(head);
    let mut i = 0;
    while s.len() + tail.len() < bytes {
        s += &entry(i);
        i += 1;
    }
    s += tail;
    s.into_bytes()
}

fn cloud_config(bytes: usize) -> Vec<u8> {
    document(bytes, "#cloud-config\n", |i| format!("key{i:07}: v\n"), "")
}

fn nested(bytes: usize) -> Vec<u8> {
    document(
        bytes,
        "#cloud-config\nbig:\n",
        |i| format!("  k{i:07}: v\n"),
        "",
    )
}

fn mime(bytes: usize) -> Vec<u8> {
    let part = |p: usize| {
        document(
            bytes / 8,
            "--B\nContent-Type: text/cloud-config\n\n#cloud-config\nshared:\n",
            move |i| format!("  p{p}x{i:07}: v\n"),
            "",
        )
    };
    let mut out = b"Content-Type: multipart/mixed; boundary=\"B\"\nMIME-Version: 1.0\n\n".to_vec();
    for p in 0..8 {
        out.extend(part(p));
    }
    out.extend(b"--B--\n");
    out
}

fn cust_cfg(bytes: usize) -> Vec<u8> {
    document(
        bytes,
        "[NETWORK]\nNETWORKING = yes\nBOOTPROTO = dhcp\nHOSTNAME = h\nDOMAINNAME = example.com\n[MISC]\nMARKER-ID = m\n",
        |i| format!("KEY{i:07} = v\n"),
        "",
    )
}

fn ovf_env(bytes: usize) -> Vec<u8> {
    document(
        bytes,
        "<?xml version=\"1.0\"?>\n<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" \
         xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\">\n<PropertySection>\n",
        |i| format!("<Property oe:key=\"k{i:07}\" oe:value=\"v\"/>\n"),
        "</PropertySection>\n</Environment>\n",
    )
}

const KIB: usize = 1024;

fn readers(c: &mut Criterion) {
    type Case = (&'static str, fn(usize) -> Vec<u8>, usize, fn(&[u8]));
    // The largest size of each is its cap: the YAML reader's 200,000 values (a mapping
    // of about 1.2 MiB of these keys), cust.cfg's 16,384 entries, the OVF document's 1 MiB.
    let cases: &[Case] = &[
        ("cloud-config mapping", cloud_config, 1152 * KIB, |b| {
            let _ = black_box(userdata::read(b, None));
        }),
        ("vendor-data merge", nested, 1152 * KIB, |b| {
            let _ = black_box(userdata::read(b, Some(b)));
        }),
        ("MIME, 8 parts", mime, 1152 * KIB, |b| {
            let _ = black_box(userdata::read(b, None));
        }),
        ("cust.cfg section", cust_cfg, 240 * KIB, |b| {
            let _ = black_box(vmcust_imc::Spec::parse(b));
        }),
        ("OVF environment", ovf_env, 1023 * KIB, |b| {
            black_box(vmcust_ovf::parse(b).unwrap());
        }),
    ];
    for &(name, make, cap, read) in cases {
        let mut group = c.benchmark_group(name);
        group.sample_size(10);
        let mut size = KIB;
        let mut sizes = Vec::new();
        while size < cap {
            sizes.push(size);
            size *= 16;
        }
        sizes.push(cap);
        for size in sizes {
            let input = make(size);
            group.throughput(Throughput::Bytes(input.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(size), &input, |b, i| {
                b.iter(|| read(black_box(i)))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, readers);
criterion_main!(benches);
