//! Reading ovf-env.xml out of real images built by xorriso and genisoimage.

mod common;

use std::io::Cursor;

use common::build_iso;
use vmcust_ovf::iso9660::{DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_IMAGE_BYTES};
use vmcust_ovf::{read_ovf_env, volume_label, IsoError, IsoLimits, IsoOvfEnv};

const ENV: &[u8] = b"<?xml version=\"1.0\"?>\n<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"/>\n";

fn read(image: &[u8]) -> Result<Option<IsoOvfEnv>, IsoError> {
    read_ovf_env(&mut Cursor::new(image), &IsoLimits::default())
}

fn found(image: &[u8]) -> IsoOvfEnv {
    read(image)
        .expect("readable image")
        .expect("an ovf environment file")
}

#[test]
fn default_limits_match_ds_identify() {
    let limits = IsoLimits::default();
    assert_eq!(limits.max_image_bytes, DEFAULT_MAX_IMAGE_BYTES);
    assert_eq!(DEFAULT_MAX_IMAGE_BYTES, 10 * 1024 * 1024);
    assert_eq!(limits.max_file_bytes, DEFAULT_MAX_FILE_BYTES);
}

#[test]
fn joliet_and_rock_ridge_images_from_both_tools() {
    for tool in ["xorriso", "genisoimage"] {
        let image = build_iso(
            tool,
            &["-V", "OVF-TRANSPORT", "-J", "-R"],
            &[("ovf-env.xml", ENV)],
        );
        let env = found(&image);
        assert_eq!(env.label, "OVF-TRANSPORT", "{tool}");
        assert_eq!(env.file_name, "ovf-env.xml", "{tool}");
        assert_eq!(env.bytes, ENV, "{tool}");
    }
}

#[test]
fn plain_level_one_names() {
    let image = build_iso("genisoimage", &["-V", "OVF ENV"], &[("ovf-env.xml", ENV)]);
    let env = found(&image);
    assert_eq!(
        (env.label.as_str(), env.file_name.as_str()),
        ("OVF ENV", "OVF_ENV.XML;1")
    );
    assert_eq!(env.bytes, ENV);
    // xorriso writes Rock Ridge unless told otherwise.
    let image = build_iso(
        "xorriso",
        &["--norock", "-V", "OVFENV"],
        &[("ovf-env.xml", ENV)],
    );
    let env = found(&image);
    assert_eq!(
        (env.label.as_str(), env.file_name.as_str()),
        ("OVFENV", "OVF_ENV.XML;1")
    );
    assert_eq!(env.bytes, ENV);
}

#[test]
fn joliet_only_and_rock_ridge_only() {
    for (args, tool) in [
        (["-J"], "genisoimage"),
        (["-R"], "genisoimage"),
        (["-J"], "xorriso"),
    ] {
        let image = build_iso(tool, &args, &[("ovf-env.xml", ENV)]);
        let env = found(&image);
        assert_eq!(env.file_name, "ovf-env.xml", "{tool} {args:?}");
        assert_eq!(env.bytes, ENV, "{tool} {args:?}");
    }
}

#[test]
fn other_spellings_and_preference_order() {
    let image = build_iso("xorriso", &["-R"], &[("ovf_env.xml", b"underscore")]);
    assert_eq!(found(&image).file_name, "ovf_env.xml");
    let image = build_iso("xorriso", &["-R"], &[("OVF-ENV.XML", b"upper")]);
    assert_eq!(found(&image).file_name, "OVF-ENV.XML");
    let image = build_iso(
        "xorriso",
        &["-R", "-J"],
        &[
            ("OVF-ENV.XML", b"4"),
            ("OVF_ENV.XML", b"3"),
            ("ovf_env.xml", b"2"),
            ("ovf-env.xml", b"1"),
        ],
    );
    let env = found(&image);
    assert_eq!(
        (env.file_name.as_str(), env.bytes.as_slice()),
        ("ovf-env.xml", &b"1"[..])
    );
    let image = build_iso(
        "xorriso",
        &["-R"],
        &[("OVF-ENV.XML", b"4"), ("OVF_ENV.XML", b"3")],
    );
    assert_eq!(found(&image).bytes, b"3");
}

#[test]
fn only_the_root_directory_is_searched() {
    let image = build_iso(
        "xorriso",
        &["-J", "-R", "-V", "NOENV"],
        &[("sub/ovf-env.xml", ENV), ("readme.txt", b"x")],
    );
    assert!(read(&image).unwrap().is_none());
    assert_eq!(
        volume_label(&mut Cursor::new(&image), &IsoLimits::default()).unwrap(),
        "NOENV"
    );
}

#[test]
fn many_files_and_long_names_do_not_confuse_the_directory_walk() {
    // Enough records to span several directory sectors, and Rock Ridge names long enough to
    // need continuation areas, before the file we want.
    let long: Vec<String> = (0..60)
        .map(|i| format!("{i:03}-{}", "n".repeat(240)))
        .collect();
    let mut files: Vec<(&str, &[u8])> = long.iter().map(|n| (n.as_str(), &b"x"[..])).collect();
    files.push(("ovf-env.xml", ENV));
    let image = build_iso("xorriso", &["-R"], &files);
    let env = found(&image);
    assert_eq!(
        (env.file_name.as_str(), env.bytes.as_slice()),
        ("ovf-env.xml", ENV)
    );
}

#[test]
fn image_over_the_limit_is_refused() {
    let image = build_iso("xorriso", &["-R"], &[("ovf-env.xml", ENV)]);
    let limits = IsoLimits {
        max_image_bytes: 64 * 1024,
        ..IsoLimits::default()
    };
    let err = read_ovf_env(&mut Cursor::new(&image), &limits).unwrap_err();
    assert!(matches!(err, IsoError::ImageTooLarge { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&format!("image is {} bytes", image.len())),
        "{message}"
    );
    assert!(message.contains("limit of 65536 bytes"), "{message}");
    // The default limit refuses an 11 MiB image before reading anything.
    let big = vec![0u8; 11 * 1024 * 1024];
    let err = read(&big).unwrap_err();
    assert!(
        err.to_string().contains("over the limit of 10485760 bytes"),
        "{err}"
    );
}

#[test]
fn file_over_the_cap_is_refused() {
    let image = build_iso("xorriso", &["-R"], &[("ovf-env.xml", &[b' '; 5000][..])]);
    let limits = IsoLimits {
        max_file_bytes: 4096,
        ..IsoLimits::default()
    };
    let err = read_ovf_env(&mut Cursor::new(&image), &limits).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ovf-env.xml is 5000 bytes, over the limit of 4096 bytes for an ovf environment file"
    );
}

#[test]
fn non_iso_input_is_a_clear_error() {
    let err = read(&vec![0u8; 64 * 1024]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "not an iso9660 image: no CD001 descriptor at sector 16"
    );
    let err = read(ENV).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "not an iso9660 image: no CD001 descriptor at sector 16, the image is only"
        ),
        "{err}"
    );
}

#[test]
fn truncated_image_is_malformed_not_a_panic() {
    let image = build_iso("xorriso", &["-R"], &[("ovf-env.xml", ENV)]);
    let err = read(&image[..18 * 2048]).unwrap_err();
    assert!(matches!(err, IsoError::Malformed(_)), "{err}");
    assert!(
        err.to_string().contains("beyond the end of the volume"),
        "{err}"
    );
}
