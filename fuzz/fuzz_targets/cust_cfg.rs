//! cust.cfg: the strict reader and the validation, with the documented caps. A message may
//! never be longer than a few hundred bytes per problem, whatever the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match vmcust_imc::Spec::parse(data) {
        Ok(parsed) => {
            for w in &parsed.warnings {
                assert!(w.to_string().len() < 1024);
            }
            let _ = parsed.spec.kind();
        }
        Err(vmcust_imc::SpecError::Invalid(problems)) => {
            for p in &problems {
                assert!(p.to_string().len() < 1024, "{} bytes", p.to_string().len());
            }
        }
        Err(e) => assert!(e.to_string().len() < 1024),
    }
});
