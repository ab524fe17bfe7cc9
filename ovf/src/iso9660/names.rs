//! Which root-directory names count as the OVF environment file, and which one wins; how
//! a seed file's name matches a recorded one.

/// Spellings seen on real transports (cloud-init's seed order, Bottlerocket's list), best first.
const PREFERRED: [&str; 4] = ["ovf-env.xml", "ovf_env.xml", "OVF_ENV.XML", "OVF-ENV.XML"];

/// Rank of `name` as an OVF environment file (lower is better), or `None` if it is not one.
///
/// The ISO9660 version (`;1`) and a trailing `.` (level-1 names without extension) are
/// ignored. Exact preferred spellings rank first; other capitalisations after them.
pub(super) fn rank(name: &str) -> Option<usize> {
    let base = bare(name);
    if let Some(i) = PREFERRED.iter().position(|p| *p == base) {
        return Some(i);
    }
    if base.eq_ignore_ascii_case("ovf-env.xml") {
        Some(PREFERRED.len())
    } else if base.eq_ignore_ascii_case("ovf_env.xml") {
        Some(PREFERRED.len() + 1)
    } else {
        None
    }
}

/// `name` without an ISO9660 version (`;1`) and a trailing `.`.
fn bare(name: &str) -> &str {
    let base = match name.rsplit_once(';') {
        Some((base, version)) if version.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    };
    base.strip_suffix('.').unwrap_or(base)
}

/// Whether a recorded name is `wanted` once versions, a trailing `.` and case are set
/// aside (a plain ISO9660 name of a level-2 image: `META_DATA.JSON;1`).
pub(super) fn same_loosely(recorded: &str, wanted: &str) -> bool {
    bare(recorded).eq_ignore_ascii_case(bare(wanted))
}

#[cfg(test)]
mod tests {
    use super::{rank, same_loosely};

    #[test]
    fn loose_names() {
        assert!(same_loosely("META_DATA.JSON;1", "meta_data.json"));
        assert!(same_loosely("USER_DATA.;1", "user_data"));
        assert!(same_loosely("openstack", "OPENSTACK"));
        assert!(!same_loosely("META_DAT.JSO;1", "meta_data.json"));
    }

    #[test]
    fn names_as_builders_write_them() {
        assert_eq!(rank("ovf-env.xml"), Some(0));
        assert_eq!(rank("ovf_env.xml"), Some(1));
        assert_eq!(rank("OVF_ENV.XML;1"), Some(2));
        assert_eq!(rank("OVF_ENV.XML"), Some(2));
        assert_eq!(rank("OVF-ENV.XML;1"), Some(3));
        assert_eq!(rank("OVF_ENV.XML.;1"), Some(2));
        assert_eq!(rank("Ovf-Env.Xml"), Some(4));
        assert_eq!(rank("OVF_ENV.xml"), Some(5));
        assert_eq!(rank("ovf-env.xml.bak"), None);
        assert_eq!(rank("ovf-env.xml;x"), None);
        assert_eq!(rank(""), None);
    }
}
