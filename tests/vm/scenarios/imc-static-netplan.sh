# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# IMC static spec on a netplan.io + systemd-resolved template whose
# 01-template.yaml matches name "en*" with dhcp4: true.
stack=netplan
describe="IMC static (IPv4+IPv6, gateway, 2 DNS servers, search domain): exact addresses, no DHCP lease, default route, resolver config, time zone, 4 103/4 104 then 5 0"
scenario_prepare() { hand_over_spec "$(static_spec)"; }
scenario_boots() { boot 1; }
scenario_checks() {
    check_static 1
    check_reported 1
    if has 1 networkctl.txt 'Network File: /run/systemd/network/10-netplan-template.network'; then
        known_bug "no 'netplan generate' after vmcust writes /etc/netplan/50-vmcust.yaml" \
            "(issue 11, fixed in src/boot: a regression): networkd still reads the template's" \
            "/run/systemd/network/10-netplan-template.network, generated at boot before vmcust ran"
    fi
}
