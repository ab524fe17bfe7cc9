//! Parse a generated ~1 MiB OVF environment with 10,000 properties (target: under 10 ms).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

fn document() -> Vec<u8> {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Environment \
         xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" \
         xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\" oe:id=\"bench\">\n  <PropertySection>\n",
    );
    for i in 0..10_000 {
        xml.push_str(&format!(
            "    <Property oe:key=\"key-{i:05}\" oe:value=\"{}&#10;{i}\"/>\n",
            "v".repeat(60)
        ));
    }
    xml.push_str("  </PropertySection>\n</Environment>\n");
    xml.into_bytes()
}

fn bench(c: &mut Criterion) {
    let xml = document();
    assert_eq!(vmcust_ovf::parse(&xml).unwrap().properties.len(), 10_000);
    let mut group = c.benchmark_group("ovf_env");
    group.throughput(Throughput::Bytes(xml.len() as u64));
    group.bench_function("parse_10000_properties", |b| {
        b.iter(|| vmcust_ovf::parse(black_box(&xml)).unwrap())
    });
    group.finish();
    eprintln!("document size: {} bytes", xml.len());
}

criterion_group!(benches, bench);
criterion_main!(benches);
