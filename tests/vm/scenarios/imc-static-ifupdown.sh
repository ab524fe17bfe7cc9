# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# IMC static spec on a ifupdown template whose
# /etc/network/interfaces has "iface ens3 inet dhcp".
stack=ifupdown
describe="IMC static (IPv4+IPv6, gateway, 2 DNS servers, search domain): exact addresses, no DHCP lease, default route, resolver config, time zone, 4 103/4 104 then 5 0"
scenario_prepare() { hand_over_spec "$(static_spec)"; }
scenario_boots() { boot 1; }
scenario_checks() {
    check_static 1
    check_reported 1
}
