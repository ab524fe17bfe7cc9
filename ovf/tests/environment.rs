//! Parsing of our own OVF environment documents in `tests/data/` (shaped like the ones
//! cloud-init's docs and unit tests use) and vSphere-style ones, and the error table with
//! positions.

use std::path::PathBuf;

use vmcust_ovf::{parse, EnvError, EthernetAdapter, Platform, Property};

/// One of this crate's test inputs (see docs/testing.md, "Test inputs").
fn testdata(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The PlatformSection every document in `tests/data/` carries.
fn esxi_platform() -> Platform {
    Platform {
        kind: Some("VMware ESXi".into()),
        version: Some("7.0.3".into()),
        vendor: Some("VMware, Inc.".into()),
        locale: Some("en_GB".into()),
        time_zone: None,
    }
}

#[test]
fn example_with_every_property_and_comments() {
    let env = parse(&testdata("all-properties-example.xml")).unwrap();
    assert_eq!(env.id.as_deref(), Some("AppTier"));
    assert_eq!(env.platform, Some(esxi_platform()));
    assert_eq!(env.property("instance-id"), Some("vm-web-0007"));
    assert_eq!(
        env.property("seedfrom"),
        Some("http://seed.example.net/web-")
    );
    assert_eq!(env.property("hostname"), Some("web-07"));
    assert_eq!(
        env.property("user-data"),
        Some("IyEvYmluL3NoCmVjaG8gImhlbGxvIGZyb20gdGhlIG92ZiBzZWVkIgo=")
    );
    assert_eq!(env.property("password"), Some("Web07-s3cret"));
    assert!(env
        .property("public-keys")
        .unwrap()
        .starts_with("ssh-ed25519 AAAAC3"));
    assert!(env
        .property("network-config")
        .unwrap()
        .starts_with("bmV0d29yazoK"));
    assert_eq!(env.properties.len(), 7);
    assert!(env.entities.is_empty() && env.adapters.is_empty());
}

#[test]
fn documents_with_each_set_of_properties() {
    let cases: [(&str, &[&str], &[&str]); 6] = [
        (
            "guestinfo-b64-network-config.xml",
            &["network-config", "password", "instance-id"],
            &["user-data"],
        ),
        (
            "b64-network-config.xml",
            &["network-config", "password", "instance-id"],
            &["user-data"],
        ),
        (
            "b64-userdata.xml",
            &["user-data", "password", "instance-id"],
            &["network-config"],
        ),
        (
            "no-userdata.xml",
            &["password", "instance-id"],
            &["user-data"],
        ),
        (
            "plain-yaml-network-config.xml",
            &["network-config", "password", "instance-id"],
            &["user-data"],
        ),
        (
            "plain-userdata.xml",
            &["user-data", "instance-id"],
            &["password"],
        ),
    ];
    for (file, present, absent) in cases {
        let env = parse(&testdata(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let keys: Vec<&str> = env.properties.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, present, "{file}");
        for key in absent {
            assert_eq!(env.property(key), None, "{file}: {key}");
        }
        assert_eq!(env.property("instance-id"), Some("vm-7c1e-0042"), "{file}");
        assert_eq!(env.platform, Some(esxi_platform()), "{file}");
    }
    let env = parse(&testdata("b64-userdata.xml")).unwrap();
    assert_eq!(
        env.property("user-data"),
        Some("IyEvYmluL3NoCmVjaG8gImNvbmZpZ3VyZWQgYnkgb3ZmIiA+IC9ydW4vdm1jdXN0LWhlbGxvCg==")
    );
    let env = parse(&testdata("plain-userdata.xml")).unwrap();
    assert_eq!(env.property("user-data"), Some("plain-text-user-data"));
}

#[test]
fn literal_newlines_in_attributes_become_spaces() {
    // XML attribute-value normalization: this is why multi-line values must be base64 or &#10;.
    let env = parse(&testdata("plain-yaml-network-config.xml")).unwrap();
    let value = env.property("network-config").unwrap();
    // "network:\n  version: 2": the newline became a third space.
    assert!(value.starts_with("network:   version: 2"), "{value:?}");
    assert!(!value.contains('\n'));
}

#[test]
fn unfilled_template_has_no_properties() {
    // The template still holds the placeholder `{properties}` as text.
    let env = parse(&testdata("template-unfilled-properties.xml")).unwrap();
    assert!(env.properties.is_empty());
    assert_eq!(env.id.as_deref(), Some("AppTier"));
    assert_eq!(env.platform, Some(esxi_platform()));
}

const VSPHERE: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<Environment
     xmlns="http://schemas.dmtf.org/ovf/environment/1"
     xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xmlns:oe="http://schemas.dmtf.org/ovf/environment/1"
     xmlns:ve="http://www.vmware.com/schema/ovfenv"
     oe:id=""
     ve:vCenterId="vm-4242">
   <PlatformSection>
      <Kind>VMware ESXi</Kind>
      <Version>8.0.2</Version>
      <Vendor>VMware, Inc.</Vendor>
      <Locale>en</Locale>
      <TimeZone>60</TimeZone>
   </PlatformSection>
   <PropertySection>
         <Property oe:key="hostname" oe:value="web-01"/>
         <Property oe:key="script" oe:value="#!/bin/sh&#10;echo &quot;hi&quot; &amp;&amp; true&#10;"/>
         <Property oe:key="empty"/>
   </PropertySection>
   <Entity oe:id="db">
      <PropertySection>
         <Property oe:key="hostname" oe:value="db-01"/>
      </PropertySection>
   </Entity>
   <ve:EthernetAdapterSection>
      <ve:Adapter ve:mac="00:50:56:a1:b2:c3" ve:network="VM Network" ve:unitNumber="7"/>
      <ve:Adapter ve:mac="00:50:56:a1:b2:c4"/>
   </ve:EthernetAdapterSection>
   <PropertySection>
         <Property oe:key="hostname" oe:value="web-02"/>
   </PropertySection>
</Environment>
"##;

#[test]
fn vsphere_document_with_all_sections() {
    let env = parse(VSPHERE.as_bytes()).unwrap();
    assert_eq!(env.id.as_deref(), Some(""));
    assert_eq!(env.vcenter_id.as_deref(), Some("vm-4242"));
    let platform = env.platform.as_ref().unwrap();
    assert_eq!(platform.kind.as_deref(), Some("VMware ESXi"));
    assert_eq!(platform.version.as_deref(), Some("8.0.2"));
    assert_eq!(platform.time_zone.as_deref(), Some("60"));
    // &#10; survives attribute normalization; entities are unescaped.
    assert_eq!(
        env.property("script"),
        Some("#!/bin/sh\necho \"hi\" && true\n")
    );
    assert_eq!(env.property("empty"), Some(""));
    // Both PropertySections are merged in order; the last hostname wins.
    assert_eq!(env.properties.len(), 4);
    assert_eq!(env.property("hostname"), Some("web-02"));
    // Entity properties are kept apart and never shadow the environment's own.
    assert_eq!(env.entities.len(), 1);
    assert_eq!(env.entities[0].id.as_deref(), Some("db"));
    assert_eq!(
        env.entities[0].properties,
        [Property {
            key: "hostname".into(),
            value: "db-01".into()
        }]
    );
    assert_eq!(
        env.adapters,
        [
            EthernetAdapter {
                mac: "00:50:56:a1:b2:c3".into(),
                network: Some("VM Network".into()),
                unit_number: Some(7),
            },
            EthernetAdapter {
                mac: "00:50:56:a1:b2:c4".into(),
                network: None,
                unit_number: None,
            },
        ]
    );
}

#[test]
fn unprefixed_attributes_and_prefixed_root_are_accepted() {
    let xml = br#"<oe:Environment xmlns:oe="http://schemas.dmtf.org/ovf/environment/1" id="x">
      <PropertySection><Property key="a" value="1"/><Property oe:key="b" key="ignored" oe:value="2"/></PropertySection>
    </oe:Environment>"#;
    let env = parse(xml).unwrap();
    assert_eq!(env.id.as_deref(), Some("x"));
    assert_eq!(env.property("a"), Some("1"));
    assert_eq!(env.property("b"), Some("2"));
}

#[test]
fn foreign_namespaces_are_not_ours() {
    let xml = br#"<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1"
        xmlns:x="urn:other">
      <x:PropertySection><Property x:key="a" key="b" value="1"/></x:PropertySection>
      <PropertySection><Property x:key="z" key="k" x:value="no" value="yes"/></PropertySection>
      <x:Property key="c" value="2"/>
    </Environment>"#;
    let env = parse(xml).unwrap();
    assert_eq!(env.properties.len(), 1);
    assert_eq!(env.property("k"), Some("yes"));
}

#[test]
fn bom_leading_blanks_and_trailing_nuls_are_accepted() {
    let mut xml = b"\xEF\xBB\xBF".to_vec();
    xml.extend_from_slice(b"\n  <?xml version=\"1.0\"?>\n<!-- c --><Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"/>\n<!-- after -->\n\0\0 \n\0");
    let env = parse(&xml).unwrap();
    assert!(env.properties.is_empty());
    assert_eq!(env.platform, None);
}

/// `(document, expected line:column, a fragment the message must contain)`.
const ERRORS: &[(&str, (usize, usize), &str)] = &[
    ("", (1, 1), "no root element"),
    ("  \n <!-- only a comment -->", (2, 25), "no root element"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\">\n<PropertySection>\n</Environment>", (3, 1), "malformed xml"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\">\n  <PropertySection>", (2, 20), "not closed"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" a=\"1\" a=\"2\"/>", (1, 1), "malformed xml"),
    ("<?xml version=\"1.0\"?>\n<Envelope xmlns=\"http://schemas.dmtf.org/ovf/envelope/1\"/>", (2, 1), "root element is <Envelope>, expected <Environment>"),
    ("\n\n   <Environment/>", (3, 4), "missing or wrong namespace on <Environment>: found no namespace"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/2\"/>", (1, 1), "found \"http://schemas.dmtf.org/ovf/environment/2\""),
    ("<oe:Environment/>", (1, 1), "undeclared prefix"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\">\n <PropertySection>\n  <Property value=\"v\"/>", (3, 3), "<Property> has no oe:key attribute"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" xmlns:ve=\"http://www.vmware.com/schema/ovfenv\"><ve:EthernetAdapterSection>\n<ve:Adapter ve:network=\"n\"/>", (2, 1), "<ve:Adapter> has no ve:mac attribute"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" xmlns:ve=\"http://www.vmware.com/schema/ovfenv\"><ve:EthernetAdapterSection>\n<ve:Adapter ve:mac=\"m\" ve:unitNumber=\"x\"/>", (2, 1), "ve:unitNumber=\"x\" is invalid"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"><PropertySection><Property key=\"a\" value=\"&nbsp;\"/>", (1, 81), "malformed xml"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"><PropertySection>\n<Property oe:key=\"undeclared-prefix\"/>", (2, 1), "<Property> has no oe:key attribute"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"/>\n<Environment/>", (2, 1), "second root element"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"/>\ntrailing", (2, 1), "text after the root element"),
    ("junk<Environment/>", (1, 1), "text before the root element"),
    ("<Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\"><PlatformSection><Kind>&bogus;</Kind>", (1, 87), "unknown entity"),
];

#[test]
fn errors_carry_line_column_and_a_lower_case_message() {
    for (xml, (line, column), fragment) in ERRORS {
        let err: EnvError = parse(xml.as_bytes()).expect_err(xml);
        let message = err.to_string();
        assert!(message.contains(fragment), "{xml:?}: {message}");
        assert!(
            message.starts_with(&format!("line {line}, column {column}: ")),
            "{xml:?}: {message}"
        );
        assert_eq!((err.line(), err.column()), (*line, *column), "{xml:?}");
        assert!(!message.ends_with('.'), "{message}");
        let after = message.split_once(": ").unwrap().1;
        assert!(after.starts_with(|c: char| !c.is_uppercase()), "{message}");
    }
}
