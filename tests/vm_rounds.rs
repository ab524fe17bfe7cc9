//! The VM harness's rounds summary (`tests/vm/rounds.awk`, printed by
//! `tests/vm/run.sh --compare-cloud-init --rounds N`): each round's ratios and their median.

use std::io::Write;
use std::process::Command;

/// Runs the summary for scenario `name` on `totals` (one line a round) and returns its output.
fn summary(name: &str, totals: &str) -> String {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(totals.as_bytes()).unwrap();
    let out = Command::new("awk")
        .args(["-v", &format!("name={name}"), "-f"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vm/rounds.awk"))
        .arg(file.path())
        .output()
        .expect("awk runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn each_round_then_the_median() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "one round: its ratio is the median",
            "2.00 40.00 1.00 30.00\n",
            "s round 1: 2.00 / 40.00 s = 1/20.0; CPU 1.00 / 30.00 s = 1/30.0\n\
             s median of 1 rounds: run time 1/20.0, CPU time 1/30.0 (target at most 1/20)\n",
        ),
        (
            "odd count: the middle ratio, not the middle line nor the mean",
            "1.00 30.00 1.00 20.00\n2.00 20.00 1.00 40.00\n1.00 20.00 1.00 25.00\n",
            "s round 1: 1.00 / 30.00 s = 1/30.0; CPU 1.00 / 20.00 s = 1/20.0\n\
             s round 2: 2.00 / 20.00 s = 1/10.0; CPU 1.00 / 40.00 s = 1/40.0\n\
             s round 3: 1.00 / 20.00 s = 1/20.0; CPU 1.00 / 25.00 s = 1/25.0\n\
             s median of 3 rounds: run time 1/20.0, CPU time 1/25.0 (target at most 1/20)\n",
        ),
        (
            "even count: the mean of the two middle ratios",
            "1.00 10.00 1.00 10.00\n1.00 30.00 1.00 30.00\n",
            "s round 1: 1.00 / 10.00 s = 1/10.0; CPU 1.00 / 10.00 s = 1/10.0\n\
             s round 2: 1.00 / 30.00 s = 1/30.0; CPU 1.00 / 30.00 s = 1/30.0\n\
             s median of 2 rounds: run time 1/20.0, CPU time 1/20.0 (target at most 1/20)\n",
        ),
        (
            "a round without times is named and left out of the median",
            "1.00 25.00 1.00 25.00\n0 0 0 0\n1.00 21.00 1.00 21.00\n",
            "s round 1: 1.00 / 25.00 s = 1/25.0; CPU 1.00 / 25.00 s = 1/25.0\n\
             s round 2: a side recorded no times\n\
             s round 3: 1.00 / 21.00 s = 1/21.0; CPU 1.00 / 21.00 s = 1/21.0\n\
             s median of 2 rounds: run time 1/23.0, CPU time 1/23.0 (target at most 1/20)\n",
        ),
        (
            "one side's CPU time missing is no ratio either",
            "1.00 25.00 0 25.00\n",
            "s round 1: a side recorded no times\ns: no round recorded times\n",
        ),
    ];
    for (what, totals, want) in cases {
        assert_eq!(summary("s", totals), *want, "{what}");
    }
}
