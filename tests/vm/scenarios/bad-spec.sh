# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# A spec that cannot be applied (an unknown time zone) on the systemd-networkd template.
stack=networkd
describe="bad spec: 4 100 with a reason, NICs still connected (4 103/4 104), no 5 0, template untouched (host name, DHCP)"
scenario_prepare() { hand_over_spec "$(static_spec | sed 's|^TIMEZONE = .*|TIMEZONE = Mars/Olympus_Mons|')"; }
scenario_boots() { boot 1; }
scenario_checks() {
    check "boot 1: 4 100 sent with a reason after @" rpc_sent 1 '^deployPkg.update.state 4 100 [^ ]+@.+'
    check "boot 1: NICs connected (4 103, 4 104 answered)" rpc_sent 1 '^deployPkg.update.state 4 104'
    check "boot 1: no 5 0 sent" no_rpc 1 '^deployPkg.update.state 5 '
    check "boot 1: host name still the template's" has 1 hostname.txt '^template$'
    check "boot 1: template network file untouched" \
        sh -c "tar -tzf '$(r 1 network-config.tar.gz)' | grep -qx etc/systemd/network/01-template.network"
    check "boot 1: $dev still on the template's DHCP" has 1 ip-addr.txt 'inet 10.0.2.15/24 .*dynamic'
}
