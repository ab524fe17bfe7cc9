# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# The same template booted without VMware's DMI strings (plain QEMU), with a spec on
# the test disk that a VMware host would deliver.
stack=networkd
scenario_vmware=no
describe="off VMware: both units skipped by their condition, cloud-init stand-in answers disabled at once, no RPC, template DHCP untouched"
scenario_prepare() { hand_over_spec "$(static_spec)"; }
scenario_boots() { boot 1; }
condition_false() {
    local f
    f=$(r 1 units.txt)
    [ "$(unit_prop "$f" vmcust-early.service ConditionResult)" = no ] &&
        [ "$(unit_prop "$f" vmcust-late.service ConditionResult)" = no ]
}
scenario_checks() {
    check "boot 1: systemd does not see VMware" lacks 1 detect-virt.txt '^vmware$'
    check "boot 1: both vmcust units skipped by ConditionVirtualization" condition_false
    check "boot 1: cloud-init status --wait answers disabled at once" has 1 cloud-init-status.txt 'disabled'
    check "boot 1: no RPC at all" test ! -s "$scn_dir/results/rpc.log"
    check "boot 1: host name still the template's" has 1 hostname.txt '^template$'
    check "boot 1: $dev on the template's DHCP" has 1 ip-addr.txt 'inet 10.0.2.15/24 .*dynamic'
}
