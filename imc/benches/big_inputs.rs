//! Big `cust.cfg` inputs past the caps (`Limits::NONE`): reading and validation must stay
//! linear. Compare the 10 k and 100 k rows: the ratio of their times should be about 10
//! (it was about 50 when section lookups were linear scans). See docs/benchmarks.md.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use vmcust_imc::{Limits, RawSpec, Spec};

fn sections(n: usize) -> String {
    (0..n).map(|i| format!("[S{i}]\nK = v\n")).collect()
}

fn nics(n: usize) -> String {
    let names: Vec<String> = (1..=n).map(|i| format!("NIC{i}")).collect();
    let mut cfg = format!("[NIC-CONFIG]\nNICS = {}\n", names.join(","));
    for i in 1..=n {
        cfg += &format!(
            "[NIC{i}]\nMACADDR = 02:00:00:{:02x}:{:02x}:{:02x}\nBOOTPROTO = static\nIPADDR = 10.{}.{}.1\nNETMASK = 24\n",
            i >> 16 & 0xff,
            i >> 8 & 0xff,
            i & 0xff,
            i >> 8 & 0xff,
            i & 0xff
        );
    }
    cfg
}

fn read_and_validate(cfg: &str) -> bool {
    let raw = RawSpec::parse_with(cfg.as_bytes(), Limits::NONE).unwrap();
    Spec::from_raw(&raw).is_ok()
}

fn big_inputs(c: &mut Criterion) {
    let mut group = c.benchmark_group("big cust.cfg");
    group.sample_size(10);
    for n in [10_000, 100_000] {
        let cfg = sections(n);
        group.bench_function(format!("{n} sections"), |b| {
            b.iter(|| read_and_validate(black_box(&cfg)))
        });
    }
    for n in [2_000, 20_000] {
        let cfg = nics(n);
        group.bench_function(format!("{n} nics (refused at the cap)"), |b| {
            b.iter(|| read_and_validate(black_box(&cfg)))
        });
    }
    group.finish();
}

criterion_group!(benches, big_inputs);
criterion_main!(benches);
