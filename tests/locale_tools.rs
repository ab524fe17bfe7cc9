//! The `/etc/locale.gen` line `locale` enables is one glibc builds: for each name, the
//! line chosen from the system's `/usr/share/i18n/SUPPORTED` (the `locales` package) is
//! compiled by `localedef` into a scratch directory, as Debian's `locale-gen` compiles
//! it, and the `LANG=` file the module writes names that locale.

mod support;

use std::fs;
use std::process::Command;

use vmcust::test_api::document;
use vmcust::test_api::facts::{Current, Facts, Family};
use vmcust::test_api::plan::Action;
use vmcust::test_api::{locale, locale::supported_line};

#[test]
fn localedef_builds_the_locale_enabled_for_each_name() {
    support::require_tool("localedef", "libc-bin");
    let supported = fs::read_to_string(locale::SUPPORTED)
        .expect("/usr/share/i18n/SUPPORTED is installed (package locales)");
    let out = tempfile::tempdir().unwrap();
    // (the document's name, the locale.gen line)
    let table: &[(&str, &str)] = &[
        ("de_DE.UTF-8", "de_DE.UTF-8 UTF-8"),
        ("fi_FI", "fi_FI.UTF-8 UTF-8"),
        ("fi_FI.ISO-8859-1", "fi_FI ISO-8859-1"),
        ("sr_RS@latin", "sr_RS@latin UTF-8"),
    ];
    for (name, want) in table {
        let line = supported_line(Some(&supported), name);
        assert_eq!(line, *want, "{name}");
        let (locale, charset) = line.split_once(' ').unwrap();
        // locale-gen's input: the name without its charset, the modifier kept.
        let (base, modifier) = locale
            .split_once('@')
            .map_or((locale, None), |(b, m)| (b, Some(m)));
        let input = base.split('.').next().unwrap().to_string()
            + &modifier.map(|m| format!("@{m}")).unwrap_or_default();
        let built = Command::new("localedef")
            .args(["-i", &input, "-c", "-f", charset])
            .arg(out.path().join(locale))
            .output()
            .unwrap();
        assert!(
            built.status.success() && out.path().join(locale).join("LC_CTYPE").is_file(),
            "{name}: localedef -i {input} -f {charset}: {}",
            String::from_utf8_lossy(&built.stderr)
        );
        // The module enables exactly that line and sets LANG to the name.
        let (cfg, problems) = document::from_text(&format!("locale: {name}"));
        assert!(problems.is_empty(), "{problems:?}");
        let mut facts = Facts {
            family: Family::Debian,
            ..Default::default()
        };
        facts.files.insert(
            locale::SUPPORTED.into(),
            Current::File(supported.clone().into_bytes()),
        );
        let plan = locale::plan_locale(&cfg, &facts).unwrap().unwrap();
        let texts: Vec<String> = plan
            .before
            .iter()
            .chain(&plan.config)
            .map(|a| match a {
                Action::WriteFile { contents, .. } => {
                    String::from_utf8(contents.bytes().to_vec()).unwrap()
                }
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(texts, [format!("{want}\n"), format!("LANG={name}\n")]);
    }
}
