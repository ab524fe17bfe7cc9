//! cloud-config accounts keys: a YAML document read by the accounts parser and, when it is
//! valid, planned against a small fixed root; both must return, and no value the door let
//! through may make the account-file writer fail.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmcust::test_api::account_facts::{AccountDbFacts, DbFile, SALT_LEN, Salt};
use vmcust::test_api::{accounts, accounts::AccountsError, parse::parse_accounts};

fn db(text: &str) -> Option<DbFile> {
    Some(DbFile {
        contents: text.as_bytes().to_vec(),
        mode: 0o644,
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(serde_norway::Value::Mapping(doc)) = serde_norway::from_str(text) else {
        return;
    };
    let Ok(req) = parse_accounts("user-data", &doc) else {
        return;
    };
    let facts = AccountDbFacts {
        passwd: db("root:x:0:0:root:/root:/bin/bash\nbin:x:2:2::/bin:/usr/sbin/nologin\n"),
        shadow: db("root:*:1:0:99999:7:::\nbin:*:1:0:99999:7:::\n"),
        group: db("root:x:0:\nsudo:x:27:\nusers:x:100:\n"),
        gshadow: db("root:*::\nsudo:*::\nusers:*::\n"),
        os_release: Some("ID=debian\n".into()),
        entropy: vec![Salt([7; SALT_LEN]); accounts::salts_needed(&req)],
        today: 20_000,
        ..Default::default()
    };
    if let Err(AccountsError::Format(e)) = accounts::plan_accounts(&req, &facts) {
        panic!("a validated value broke an account file: {e}");
    }
});
