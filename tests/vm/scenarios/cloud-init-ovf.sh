# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# The OVF ISO of ovf-iso on the same networkd template with Debian's own cloud-init
# (22.4) in place of vmcust (variant cloud-init): the baseline vmcust is compared with
# (run.sh --compare-cloud-init). Checked: what both must do (host name, SSH key); only
# reported: what cloud-init made of network-config and user-data, which its OVF data
# source may not take from OVF properties.
stack=networkd
variant=cloud-init
describe="Debian's cloud-init 22.4 (no vmcust) on the ovf-iso CD: its four units ran, host name and SSH key in root's authorized_keys checked; units' results, network-config and user-data only reported (22.4's OVF source ignores network-config); unit times recorded for --compare-cloud-init"
scenario_prepare() { ovf_env_iso; }
scenario_boots() { boot 1; }
# Each of cloud-init's four units ran (its result is reported: on this minimal image
# cloud-config fails in its locale module, update-locale having no en_US.UTF-8).
units_ran() {
    local u
    for u in $cloud_init_units; do
        [ -n "$(unit_start_secs "$(r 1 units.txt)" "$u")" ] || return 1
    done
}
scenario_checks() {
    check "boot 1: cloud-init's four units ran" units_ran
    check "boot 1: vmcust is not installed" has 1 vmcust-status.txt 'not found|No such file'
    check "boot 1: host name from the OVF environment" has 1 hostname.txt '^ovf-vm$'
    check "boot 1: SSH key in root's authorized_keys" has 1 root-ssh/authorized_keys "vmtest@host"
    # Reported, not checked (see the header).
    note "cloud-init status: $(grep -E '^(status|detail|errors|extended_status):?' "$(r 1 cloud-init-status-long.txt)" | tr '\n' ' ')"
    note "failed modules: $(grep -oE 'Running module [a-z_]+ .* failed' "$(r 1 journal.txt)" | awk '{ print $3 }' | sort -u | tr '\n' ' ')"
    note "data source: $(grep -ohE 'DataSource[A-Za-z]+( \[[^]]*\])?' "$(r 1 cloud-init-log-tail.txt)" 2>/dev/null | tail -n1)"
    if grep -q 'command=' "$(r 1 root-ssh/authorized_keys)" 2>/dev/null; then
        note "root's key carries a login refusal (Debian's disable_root: true); default user's keys: $(cat "$scn_dir"/results/boot-1/home-ssh/*/authorized_keys 2>/dev/null | grep -c vmtest@host) with the key"
    fi
    note "cloud-init's network file: $(tar -xzOf "$(r 1 network-config.tar.gz)" --wildcards 'etc/systemd/network/10-cloud-init-*' 2>/dev/null | grep -E '^(Name|DHCP|Address|Gateway|DNS)=' | tr '\n' ' ')"
    note "$dev addresses: $(addresses 1 "$dev" | tr '\n' ' ') (network-config asks for exactly 192.168.60.20/24)"
    note "default route: $(grep '^default' "$(r 1 ip-route.txt)" | tr '\n' ' ') (asked: via 192.168.60.1)"
    note "resolver: $(grep -E '^(nameserver|search)' "$(r 1 resolv.conf)" | tr '\n' ' ') (asked: 192.168.60.2, search ovf.test)"
    note "user-data script runs: $(user_data_runs 1) (asked: 1)"
    local u f
    f=$(r 1 units.txt)
    for u in $cloud_init_units; do
        note "$u: $(unit_prop "$f" "$u" Result), $(unit_secs "$f" "$u") s (started $(unit_start_secs "$f" "$u") s into boot; blame $(blame_secs "$(r 1 blame.txt)" "$u") s)"
    done
}
