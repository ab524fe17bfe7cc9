# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# IMC DHCP spec (DNS from DHCP) on the systemd-networkd template.
stack=networkd
describe="IMC DHCP: host name set, the NIC takes a DHCP lease and default route, 4 103/4 104 then 5 0"
scenario_prepare() {
    hand_over_spec "$(static_spec | sed -e '/^IPADDR\|^NETMASK\|^GATEWAY\|^IPv6\|^SUFFIX\|^NAMESERVER/d' \
        -e 's/^BOOTPROTO = static/BOOTPROTO = dhcp/' -e 's/^DNSFROMDHCP = no/DNSFROMDHCP = yes/' \
        -e 's/^HOSTNAME = vm-static/HOSTNAME = vm-dhcp/')"
}
scenario_boots() { boot 1; }
scenario_checks() {
    check "boot 1: both vmcust units succeeded" units_ok 1
    check "boot 1: host name is the spec's" has 1 hostname.txt '^vm-dhcp$'
    check "boot 1: $dev has a DHCP lease (10.0.2.15/24 dynamic)" has 1 ip-addr.txt 'inet 10.0.2.15/24 .*dynamic'
    check "boot 1: default route from DHCP" has 1 ip-route.txt "^default via 10.0.2.2 dev $dev"
    check "boot 1: vmcust's networkd file, not the template's, configures $dev" \
        has 1 networkctl.txt 'Network File: /etc/systemd/network/10-vmcust'
    check_reported 1
}
