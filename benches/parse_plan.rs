//! Hot path on every clone's boot: parse + validate a 2-NIC static cust.cfg, translate
//! it and plan it against gathered facts. Target: under 20 µs (docs/benchmarks.md).

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

use vmcust::test_api::customize::wanted;
use vmcust::test_api::facts::Facts;
use vmcust::test_api::plan::{plan, PlanOptions};
use vmcust::test_api::root::Root;

const SPEC: &[u8] = include_bytes!("../examples/specs/static-2nic-ipv6.cfg");

fn parse_and_plan(c: &mut Criterion) {
    let root_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/root");
    let root = Root::new(std::path::Path::new(root_dir)).unwrap();
    let parsed = vmcust_imc::Spec::parse(SPEC).unwrap();
    let customization = vmcust::test_api::imc::customization(&parsed.spec).unwrap();
    let facts = Facts::gather(&root, &wanted(&customization)).unwrap();
    let opts = PlanOptions::default();

    c.bench_function("parse cust.cfg (2-NIC static)", |b| {
        b.iter(|| vmcust_imc::Spec::parse(black_box(SPEC)).unwrap())
    });
    c.bench_function("plan only (2-NIC static)", |b| {
        b.iter(|| plan(black_box(&customization), black_box(&facts), &opts).unwrap())
    });
    c.bench_function("parse + plan (2-NIC static)", |b| {
        b.iter(|| {
            let parsed = vmcust_imc::Spec::parse(black_box(SPEC)).unwrap();
            let c = vmcust::test_api::imc::customization(&parsed.spec).unwrap();
            plan(&c, black_box(&facts), &opts).unwrap()
        })
    });
}

criterion_group!(benches, parse_and_plan);
criterion_main!(benches);
