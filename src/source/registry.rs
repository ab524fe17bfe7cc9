//! The registry: every source, in precedence order (highest first). A field of the
//! customization is taken from the highest source that sets it; user-data, vendor-data
//! and the metadata's side settings likewise (see [`super::merge`]). The precedence table
//! in `docs/sources.md` is tested against this list.

use super::Source;

/// Every source, highest precedence first.
///
/// The vSphere spec is an explicit request made for this clone; a NoCloud seed and a
/// config drive are per-VM media attached for it (cloud-init's own order puts NoCloud,
/// then ConfigDrive, before OVF and VMware guestinfo); the OVF environment is set at
/// deployment; guestinfo is set on the VM and stays across boots.
pub(crate) static SOURCES: &[&dyn Source] = &[
    &super::imc::Imc,
    &super::nocloud::NoCloud,
    &super::config_drive::ConfigDrive,
    &super::ovf::Ovf,
    &super::guestinfo::Guestinfo,
];

/// Every source name, in precedence order (sub-sources after their source).
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().flat_map(|s| s.names().iter().copied())
}

/// The rank of a source name: lower is higher precedence; unknown names rank last.
pub(crate) fn rank(name: &str) -> usize {
    names().position(|n| n == name).unwrap_or(usize::MAX)
}

/// A set of sources (by their own names), as `[trust] sources` gives it.
#[derive(Debug, Clone, Copy)]
pub struct SourceSet(u32);

impl PartialEq for SourceSet {
    /// Two sets are equal when they hold the same sources of the registry.
    fn eq(&self, other: &SourceSet) -> bool {
        let mask = (1u32 << SOURCES.len()) - 1;
        self.0 & mask == other.0 & mask
    }
}

impl Eq for SourceSet {}

impl SourceSet {
    /// Every source on.
    pub const ALL: SourceSet = SourceSet(u32::MAX);
    /// No source on.
    pub const NONE: SourceSet = SourceSet(0);

    fn bit(name: &str) -> Option<u32> {
        SOURCES
            .iter()
            .position(|s| s.names()[0] == name)
            .map(|i| 1 << i)
    }

    /// Whether the source called `name` is on (a sub-source follows its source).
    pub fn contains(&self, name: &str) -> bool {
        SOURCES
            .iter()
            .position(|s| s.names().contains(&name))
            .is_some_and(|i| self.0 & (1 << i) != 0)
    }

    /// This set with `name` on; `None` when no source has that name.
    pub fn with(self, name: &str) -> Option<SourceSet> {
        Self::bit(name).map(|b| SourceSet(self.0 | b))
    }

    /// This set with `name` off.
    pub fn without(self, name: &str) -> SourceSet {
        SourceSet(self.0 & !Self::bit(name).unwrap_or(0))
    }

    /// Only `name` of this set.
    pub fn only(self, name: &str) -> SourceSet {
        SourceSet(self.0 & Self::bit(name).unwrap_or(0))
    }

    /// The names of the sources that are on, in precedence order.
    pub fn names(&self) -> Vec<&'static str> {
        SOURCES
            .iter()
            .map(|s| s.names()[0])
            .filter(|n| self.contains(n))
            .collect()
    }

    /// The sources that are on, comma-separated, or `none`.
    pub fn list(&self) -> String {
        match self.names() {
            n if n.is_empty() => "none".to_string(),
            n => n.join(", "),
        }
    }
}

/// The names a source may be given by in `[trust] sources`.
pub(crate) fn own_names() -> Vec<&'static str> {
    SOURCES.iter().map(|s| s.names()[0]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_ranked_in_registry_order() {
        let all: Vec<_> = names().collect();
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "{all:?}");
        assert!(rank("imc") < rank("nocloud"));
        assert!(rank("nocloud") < rank("configdrive"));
        assert!(rank("configdrive") < rank("ovf"));
        assert!(rank("ovf") < rank("ovfseed"));
        assert!(rank("ovfseed") < rank("guestinfo"));
        assert_eq!(rank("nonsense"), usize::MAX);
    }

    #[test]
    fn a_set_switches_sources_by_name() {
        let s = SourceSet::NONE.with("ovf").unwrap();
        assert!(s.contains("ovf") && s.contains("ovfseed") && !s.contains("imc"));
        assert_eq!(s.list(), "ovf");
        assert_eq!(SourceSet::ALL.without("imc").names()[0], "nocloud");
        assert_eq!(SourceSet::ALL.only("imc").list(), "imc");
        assert!(SourceSet::NONE.with("cdrom").is_none());
        assert_eq!(SourceSet::NONE.list(), "none");
        let each = own_names()
            .into_iter()
            .fold(SourceSet::NONE, |s, n| s.with(n).unwrap());
        assert_eq!(each, SourceSet::ALL);
    }

    /// The precedence table in docs/sources.md lists every source, in this order.
    #[test]
    fn the_docs_precedence_table_follows_the_registry() {
        let doc = include_str!("../../docs/sources.md");
        let table: Vec<&str> = doc
            .split("<!-- precedence -->")
            .nth(1)
            .expect("docs/sources.md has a <!-- precedence --> table")
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        assert_eq!(table, names().collect::<Vec<_>>());
    }
}
