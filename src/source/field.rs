//! The one way a source turns its raw strings into the model's validated values: every
//! failure becomes an [`InvalidValue`] that names the source and the key path.

use std::fmt::Display;
use std::net::Ipv4Addr;

use crate::model::{DnsName, HostName, InvalidValue};

/// Attaches `place` (source and key path) to a constructor's verdict.
pub(crate) fn field<T, E: Display>(
    place: impl Into<String>,
    verdict: Result<T, E>,
) -> Result<T, InvalidValue> {
    verdict.map_err(|e| InvalidValue::new(place, e.to_string()))
}

/// Splits a host name as cloud-init does and validates both parts: an IPv4 literal becomes
/// `ip-a-b-c-d` with no domain; otherwise the first label is the host name and the rest,
/// if any, the domain. A trailing dot is dropped.
pub(crate) fn host_and_domain(
    place: &str,
    raw: &str,
) -> Result<(HostName, Option<DnsName>), InvalidValue> {
    let name = raw.trim().trim_end_matches('.');
    if let Ok(ip) = name.parse::<Ipv4Addr>() {
        let h = format!("ip-{}", ip.to_string().replace('.', "-"));
        return Ok((field(place, HostName::parse(&h))?, None));
    }
    let (host, domain) = match name.split_once('.') {
        Some((h, d)) if !d.is_empty() => (h, Some(d)),
        _ => (name, None),
    };
    let host = field(place, HostName::parse(host))?;
    let domain = match domain {
        Some(d) => Some(field(place, DnsName::parse(d))?),
        None => None,
    };
    fqdn_fits(place, Some(&host), domain.as_ref())?;
    Ok((host, domain))
}

/// Refuses a host name and domain whose FQDN (`host.domain`) is longer than DNS allows
/// ([`vmcust_imc::MAX_FQDN`] characters), though each part fits on its own.
pub(crate) fn fqdn_fits(
    place: &str,
    host: Option<&HostName>,
    domain: Option<&DnsName>,
) -> Result<(), InvalidValue> {
    let (Some(host), Some(domain)) = (host, domain) else {
        return Ok(());
    };
    let length = host.short().len() + 1 + domain.as_str().len();
    if length <= vmcust_imc::MAX_FQDN {
        return Ok(());
    }
    Err(InvalidValue::new(
        place,
        format!(
            "the fqdn {}.<domain> would be {length} characters, more than the {} dns allows; \
             shorten the host name or the domain",
            crate::model::quote(host.short()),
            vmcust_imc::MAX_FQDN
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_split_and_validate() {
        let (h, d) = host_and_domain("k", "web.example.com.").unwrap();
        assert_eq!(
            (h.as_str(), d.as_ref().map(|d| d.as_str())),
            ("web", Some("example.com"))
        );
        let (h, d) = host_and_domain("k", "10.1.2.3").unwrap();
        assert_eq!((h.as_str(), d), ("ip-10-1-2-3", None));
        // The whole name counts, not only the domain: 254 to 317 characters used to pass.
        let name = |labels: &[usize]| {
            let parts: Vec<String> = labels.iter().map(|&n| "a".repeat(n)).collect();
            parts.join(".")
        };
        let rows: &[(&[usize], usize, bool)] = &[
            (&[63, 63, 63, 61], 253, true),
            (&[63, 63, 63, 62], 254, false),
            (&[63, 63, 63, 63, 61], 317, false),
        ];
        for &(labels, length, fits) in rows {
            let n = name(labels);
            assert_eq!(n.len(), length);
            match host_and_domain("ovf property hostname", &n) {
                Ok(_) => assert!(fits, "{length} accepted"),
                Err(e) => {
                    assert!(!fits, "{length}: {e}");
                    assert!(e.to_string().starts_with("ovf property hostname: "), "{e}");
                    assert!(e.reason.contains(&format!("{length} characters")), "{e}");
                }
            }
        }
        let (h, d) = host_and_domain("k", "10.1.2.3").unwrap();
        assert_eq!((h.as_str(), d), ("ip-10-1-2-3", None));
        for bad in [
            "a\nb",
            "a<b>c",
            "web.exa mple.com",
            "",
            "x.\n127.0.0.1 evil",
        ] {
            let e = host_and_domain("guestinfo.metadata: local-hostname", bad).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("guestinfo.metadata: local-hostname: "),
                "{e}"
            );
        }
    }
}
