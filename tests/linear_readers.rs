//! The readers of untrusted documents stay linear up to their caps (docs/limits.md): a
//! cloud-config mapping, a vendor-data mapping merged under it, a MIME multipart, a
//! cust.cfg section and an OVF environment, each read with n entries and with n/40. The
//! time per entry of the big one must stay within a few times that of the small one: a
//! check that compares each entry with every earlier one (the duplicate-key rule did)
//! makes it 40 times, and nothing else on a loaded machine makes it more than a few.
//! The figures at the caps are in docs/benchmarks.md ("Big inputs", `benches/big_inputs.rs`).

use std::time::{Duration, Instant};

use vmcust::test_api::{node, userdata};

/// Most the time per entry may grow from n/40 entries to n.
const SLACK: f64 = 8.0;

/// The fastest of three runs of `read` on `input`.
fn best_of_three(input: &[u8], read: fn(&[u8])) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            read(input);
            t.elapsed()
        })
        .min()
        .unwrap()
}

/// A `#cloud-config` mapping of `n` keys (each of them a key cloud-init does not know,
/// so every per-key check runs: the duplicate rule, the registry, the did-you-mean).
fn cloud_config(n: usize) -> Vec<u8> {
    let mut s = String::from("#cloud-config\n");
    for i in 0..n {
        s += &format!("key{i:06}: v\n");
    }
    s.into_bytes()
}

/// A cloud-config with one module key holding a mapping of `n` keys, and the same again
/// as vendor-data: merged key by key (cloud-init's dict merger).
fn nested(n: usize) -> Vec<u8> {
    let mut s = String::from("#cloud-config\nbig:\n");
    for i in 0..n {
        s += &format!("  k{i:06}: {i}\n");
    }
    s.into_bytes()
}

/// A MIME multipart of 8 cloud-config parts holding `n` keys between them, half at the
/// top and half in one mapping every part adds to: merged part by part.
fn mime(n: usize) -> Vec<u8> {
    let mut s =
        String::from("Content-Type: multipart/mixed; boundary=\"B\"\nMIME-Version: 1.0\n\n");
    let per_part = n / 8;
    for p in 0..8 {
        s += "--B\nContent-Type: text/cloud-config\n\n#cloud-config\n";
        for i in 0..per_part / 2 {
            s += &format!("k{p}x{i:06}: v\n");
        }
        s += "shared:\n";
        for i in 0..per_part / 2 {
            s += &format!("  p{p}x{i:06}: v\n");
        }
    }
    s += "--B--\n";
    s.into_bytes()
}

/// A cust.cfg whose `[MISC]` section holds `n` keys.
fn cust_cfg(n: usize) -> Vec<u8> {
    let mut s = String::from(
        "[NETWORK]\nNETWORKING = yes\nBOOTPROTO = dhcp\nHOSTNAME = h\nDOMAINNAME = example.com\n[MISC]\nMARKER-ID = m\n",
    );
    for i in 0..n {
        s += &format!("KEY{i:06} = v\n");
    }
    s.into_bytes()
}

/// An OVF environment with one property carrying `n` namespaced attributes (each checked
/// against the others for a duplicate), and `n` properties.
fn ovf_env(n: usize) -> Vec<u8> {
    let mut s = String::from(
        "<?xml version=\"1.0\"?>\n<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" \
         xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\">\n<PropertySection>\n<Property oe:key=\"h\" oe:value=\"v\"",
    );
    for i in 0..n {
        s += &format!(" oe:a{i:06}=\"x\"");
    }
    s += "/>\n";
    for i in 0..n {
        s += &format!("<Property oe:key=\"k{i:06}\" oe:value=\"v\"/>\n");
    }
    s += "</PropertySection>\n</Environment>\n";
    s.into_bytes()
}

fn read_user_data(b: &[u8]) {
    let _ = std::hint::black_box(userdata::read(b, None));
}

fn read_with_itself_as_vendor_data(b: &[u8]) {
    let _ = std::hint::black_box(userdata::read(b, Some(b)));
}

fn read_yaml(b: &[u8]) {
    let text = std::str::from_utf8(b).unwrap();
    node::parse(text, 0).unwrap();
}

fn read_cust_cfg(b: &[u8]) {
    let _ = std::hint::black_box(vmcust_imc::Spec::parse(b));
}

fn read_ovf(b: &[u8]) {
    vmcust_ovf::parse(b).unwrap();
}

#[test]
fn readers_take_time_linear_in_their_entries() {
    type Case = (&'static str, fn(usize) -> Vec<u8>, usize, fn(&[u8]));
    // The big sizes: the YAML node cap (200,000 values) allows 100,000 keys; cust.cfg's
    // entry cap is 16,384; the OVF document's 1 MiB about 12,000 of these entries.
    let cases: &[Case] = &[
        ("YAML mapping", cloud_config, 80_000, read_yaml),
        ("cloud-config keys", cloud_config, 12_000, read_user_data),
        (
            "vendor-data merge",
            nested,
            40_000,
            read_with_itself_as_vendor_data,
        ),
        ("MIME parts", mime, 40_000, read_user_data),
        ("cust.cfg keys", cust_cfg, 16_000, read_cust_cfg),
        ("OVF attributes and properties", ovf_env, 12_000, read_ovf),
    ];
    for &(what, make, big, read) in cases {
        let small = big / 40;
        let (small_input, big_input) = (make(small), make(big));
        let per_small = best_of_three(&small_input, read).as_secs_f64() / small as f64;
        let t = Instant::now();
        read(&big_input);
        let per_big = t.elapsed().as_secs_f64() / big as f64;
        let ratio = per_big / per_small;
        eprintln!("{what}: {ratio:.2} times the time per entry at {big} entries as at {small}");
        assert!(
            ratio < SLACK,
            "{what}: {ratio:.1} times the time per entry at {big} entries as at {small}: \
             something per entry is no longer constant time"
        );
    }
}
