//! The remotes block `rsyslog` writes is read by rsyslog itself: the planned files are
//! written into a scratch directory and `rsyslogd -N1` (its configuration check) must
//! accept a main file including them; a broken file is refused, so the check checks.

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;

use vmcust::test_api::document;
use vmcust::test_api::facts::Facts;
use vmcust::test_api::plan::Action;
use vmcust::test_api::rsyslog;

/// `rsyslogd -N1` on a main file including every `*.conf` of `dir`.
fn check(dir: &Path) -> (bool, String) {
    let main = dir.join("main.conf.in");
    fs::write(&main, format!("$IncludeConfig {}/*.conf\n", dir.display())).unwrap();
    let out = Command::new("rsyslogd")
        .arg("-N1")
        .arg("-f")
        .arg(&main)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn rsyslogd_accepts_the_files_rsyslog_writes() {
    support::require_tool("rsyslogd", "rsyslog");
    let table: &[&str] = &[
        "rsyslog: {remotes: {maas: 192.168.1.1, juju: '10.0.4.1'}}",
        "rsyslog: {remotes: {tcp: '*.* @@logs.example:6514', v6: 'kern.* [fd00::1]:514', udp: 'mail.err @10.0.0.9'}}",
        "rsyslog: {configs: ['*.* @@192.0.2.1', {filename: 01-x.conf, content: 'auth.* /var/log/x.log'}], remotes: {a: '@@h.example'}}",
    ];
    for doc in table {
        let (cfg, problems) = document::from_text(doc);
        assert!(problems.is_empty(), "{doc}: {problems:?}");
        let plan = rsyslog::plan_rsyslog(&cfg, &Facts::default())
            .unwrap()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        for a in &plan.actions {
            let Action::WriteFile { path, contents, .. } = a else {
                panic!("{a:?}")
            };
            fs::write(dir.path().join(path.file_name().unwrap()), contents.bytes()).unwrap();
        }
        let (ok, out) = check(dir.path());
        assert!(ok, "{doc}:\n{out}");
    }
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("20.conf"), "garbage line here {\n").unwrap();
    assert!(!check(dir.path()).0, "rsyslogd -N1 accepted a broken file");
}
