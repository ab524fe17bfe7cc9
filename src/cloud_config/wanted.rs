//! What a document asks of the root's facts: the request ([`Wanted`]) its modules make,
//! as their rows in the module table say (`programs`, `wants`).

use crate::cloud_config::modules::TABLE;
use crate::cloud_config::CloudConfig;
use crate::facts::Wanted;

/// The facts the modules of `cfg` need: the distribution, the account files, the
/// accounts planner's databases and whether `/etc/hostname` exists (every document's: the
/// default user is created without a `users` key too), and what each module's row asks
/// for.
pub(crate) fn wanted(cfg: &CloudConfig) -> Wanted {
    let mut w = Wanted {
        os: true,
        account_files: true,
        hostname_file: true,
        // A document whose accounts keys are invalid is refused before its accounts are
        // planned: nothing to read for them then.
        accounts_db: crate::cloud_config::modules::accounts::request(cfg)
            .ok()
            .map(crate::plan::accounts::wanted),
        ..Wanted::default()
    };
    for m in TABLE {
        w.programs
            .extend((m.programs)(cfg).iter().map(|p| p.to_string()));
        (m.wants)(cfg, &mut w);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::modules::test_support::clean_config as cfg;

    /// Each module's row asks for what its planner reads, and only with its keys.
    #[test]
    fn rows_ask_for_their_facts() {
        let bare = wanted(&cfg("#cloud-config\n"));
        assert!(bare.os && bare.account_files && bare.hostname_file);
        assert!(bare.files.is_empty() && bare.appended.is_empty() && bare.zones.is_empty());
        assert!(!bare.programs.contains("systemd-timesyncd"));
        assert!(bare.apt.is_none() && bare.mounts.is_none() && bare.disks.is_none());
        assert!(!bare.network && !bare.adjtime && bare.accounts.is_none());
        // The default user is planned without a `users` key too.
        assert_eq!(bare.accounts_db.map(|a| a.salts), Some(0));

        let doc = [
            "#cloud-config",
            "timezone: Europe/Berlin",
            "ntp: {enabled: true}",
            "write_files:",
            "  - {path: /etc/motd, content: hi, append: true}",
            "  - {path: /etc/x, content: y}",
            "mounts: [[sdb, /data]]",
            "apt:",
            "  preserve_sources_list: false",
            "  primary: [{arches: [default], search_dns: true}]",
            "",
        ]
        .join("\n");
        let w = wanted(&cfg(&doc));
        assert_eq!(w.zones, ["Europe/Berlin".to_string()].into());
        assert!(w.programs.contains("systemd-timesyncd") && w.programs.contains("chronyd"));
        assert_eq!(w.appended, ["/etc/motd".to_string()].into());
        let m = w.mounts.unwrap();
        assert_eq!(m.mount_points, ["/data"]);
        assert_eq!(m.devices, [("sdb".to_string(), "sdb".to_string())]);
        let apt = w.apt.unwrap();
        assert!(apt.files.contains("/etc/apt/sources.list"));
        assert_eq!(apt.searches.len(), 2);
        assert!(apt.searches[0].1[0].search_dns);
    }
}
