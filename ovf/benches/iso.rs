//! Extract ovf-env.xml from a ~4 MiB ISO image built with xorriso at start (target: under 1 ms).

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::io::Cursor;

use vmcust_ovf::{read_ovf_env, IsoLimits};

fn bench(c: &mut Criterion) {
    let env = b"<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"/>";
    let filler = vec![0x5a_u8; 4 * 1024 * 1024 - 400 * 1024];
    let image = common::build_iso(
        "xorriso",
        &["-J", "-R", "-V", "OVF-TRANSPORT"],
        &[("filler.bin", &filler), ("ovf-env.xml", env)],
    );
    eprintln!("image size: {} bytes", image.len());
    let limits = IsoLimits::default();
    c.bench_function("iso_read_ovf_env_4mib", |b| {
        b.iter(|| {
            let found = read_ovf_env(&mut Cursor::new(black_box(&image)), &limits).unwrap();
            assert_eq!(found.unwrap().bytes.len(), env.len());
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
