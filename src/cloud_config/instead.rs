//! What vmcust offers in place of a cloud-init key it does not implement: the nearest
//! thing it does (a module such as `write_files:` or `runcmd:`, or one of its own
//! settings), or what the key needs that vmcust cannot give. The hint ends the message of
//! every such key, so `schema`, `plan`, `status` and `query` all show it.

/// `(key, hint)`: the key by its name (a nested key by its own name, `config` of `ntp` as
/// `ntp.config`); the hint says what to write instead, or why nothing is.
const HINTS: &[(&str, &str)] = &[
    ("add_apt_repo_match", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {add_apt_repo_match: …}"),
    ("apt_custom_sources_list", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {sources_list: …}"),
    ("apt_ftp_proxy", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {ftp_proxy: …}"),
    ("apt_http_proxy", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {http_proxy: …}"),
    ("apt_https_proxy", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {https_proxy: …}"),
    ("apt_mirror", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {primary: [{arches: [default], uri: …}]}"),
    ("apt_mirror_search", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {primary: [{arches: [default], search: […]}]}"),
    ("apt_mirror_search_dns", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {primary: [{arches: [default], search_dns: true}]}"),
    ("apt_preserve_sources_list", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {preserve_sources_list: …}"),
    ("apt_proxy", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {proxy: …}"),
    ("apt_sources", "cloud-init's legacy apt key (deprecated since 22.1): write it as apt: {sources: {NAME: {source: …}}}"),
    ("allow_public_ssh_keys", "sshd's AuthorizedKeysFile stays as the template has it; change it with write_files: (an /etc/ssh/sshd_config.d/ drop-in)"),
    ("apk_repos", "write /etc/apk/repositories with write_files:"),
    ("autoinstall", "needs Ubuntu's installer (subiquity); not a first-boot setting"),
    ("byobu_by_default", "run byobu-enable with runcmd:"),
    ("chef", "install and run chef-client with packages: and runcmd:"),
    ("cloud_config_modules", "vmcust's modules and their order are fixed (docs/cloud-config.md)"),
    ("cloud_final_modules", "vmcust's modules and their order are fixed (docs/cloud-config.md)"),
    ("cloud_init_modules", "vmcust's modules and their order are fixed (docs/cloud-config.md)"),
    ("disable_ec2_metadata", "there is no EC2 metadata service on VMware; if wanted, runcmd: [[ip, route, add, prohibit, 169.254.169.254]]"),
    ("drivers", "install drivers with packages: (or runcmd: [[ubuntu-drivers, install]])"),
    ("fan", "needs Ubuntu FAN networking: write /etc/network/fan with write_files: and enable it with runcmd:"),
    ("grub-dpkg", "set the grub-pc debconf answers with runcmd: (debconf-set-selections)"),
    ("grub_dpkg", "set the grub-pc debconf answers with runcmd: (debconf-set-selections)"),
    ("landscape", "install landscape-client with packages: and register with runcmd: (landscape-config)"),
    ("launch-index", "EC2 launch indexes do not exist on VMware: every part applies"),
    ("lxd", "install lxd with packages: and run lxd init --preseed with runcmd:"),
    ("mcollective", "install it with packages: and write its configuration with write_files:"),
    ("migrate", "nothing to do: cloud-init's own semaphore migration"),
    ("output", "vmcust logs to the journal and /var/log/vmcust.log"),
    ("phone_home", "post what is wanted with runcmd: (curl …)"),
    ("puppet", "install and run puppet with packages: and runcmd:"),
    ("random_seed", "write the seed with write_files: (each clone already gets a fresh machine-id and SSH host keys)"),
    ("reporting", "vmcust reports to vCenter (guestinfo) and to its log"),
    ("rpi", "needs a Raspberry Pi"),
    ("salt_minion", "install salt-minion with packages: and write /etc/salt/minion with write_files:"),
    ("spacewalk", "register with runcmd: (rhnreg_ks …)"),
    ("ssh", "nothing to do: vmcust prints no host keys to the console"),
    ("ssh_fp_console_blacklist", "nothing to do: vmcust prints no keys to the console"),
    ("ssh_import_id", "list the keys in ssh_authorized_keys: (nothing is fetched at boot)"),
    ("ssh_key_console_blacklist", "nothing to do: vmcust prints no keys to the console"),
    ("system_info", "distribution settings are vmcust's own (docs/cloud-config.md)"),
    ("ubuntu_advantage", "attach with runcmd: [[pro, attach, TOKEN]]"),
    ("ubuntu_pro", "attach with runcmd: [[pro, attach, TOKEN]]"),
    ("updates", "the network is configured once per clone; there is no hotplug"),
    ("version", "nothing to do"),
    ("wireguard", "write /etc/wireguard/NAME.conf with write_files: (permissions: '0600') and runcmd: [[systemctl, enable, --now, wg-quick@NAME]]"),
    ("doas", "write /etc/doas.conf with write_files:"),
    ("inactive", "set it with runcmd: [[usermod, --inactive, DAYS, NAME]]"),
    ("selinux_user", "map the user with runcmd: [[semanage, login, -a, -s, SEUSER, NAME]]"),
    ("ssh_redirect_user", "write the user's authorized_keys with write_files: (each key with a command=\"echo …\" option)"),
    ("ntp.config", "vmcust configures chrony, systemd-timesyncd or ntp from servers: and pools: itself; for another client write its file with write_files:"),
];

/// The hint for `key` (a top-level key, a nested key's own name, or `module.key`).
pub(crate) fn instead(key: &str) -> Option<&'static str> {
    HINTS.iter().find(|(k, _)| *k == key).map(|(_, h)| *h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud_config::modules::CLOUD_INIT_ONLY;

    /// Every cloud-init key vmcust lacks has its hint, so no report of one ends without
    /// the nearest thing vmcust offers.
    #[test]
    fn every_cloud_init_only_key_has_a_hint() {
        let missing: Vec<&&str> = CLOUD_INIT_ONLY
            .iter()
            .filter(|k| instead(k).is_none())
            .collect();
        assert!(missing.is_empty(), "no hint for {missing:?}");
        for (k, h) in HINTS {
            assert!(!h.is_empty() && !h.ends_with('.'), "{k}");
        }
    }

    /// No hint stays for a key a module of the table now reads (it would be dead text).
    #[test]
    fn no_hint_for_a_key_the_table_reads() {
        let read: Vec<&str> = crate::cloud_config::modules::TABLE
            .iter()
            .flat_map(|m| m.keys.iter().flat_map(|k| k.names.iter().copied()))
            .collect();
        let dead: Vec<&str> = HINTS
            .iter()
            .map(|(k, _)| *k)
            .filter(|k| read.contains(k))
            .collect();
        assert!(dead.is_empty(), "hints for keys vmcust reads: {dead:?}");
    }
}
