# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# QEMU killed (a power cut) while the early unit applies the static spec, then a normal
# boot, on the systemd-networkd template.
stack=networkd
describe="power cut during the early stage (QEMU killed once cust.cfg is handed over), then a normal boot that converges to the full static configuration and reports 5 0"
scenario_prepare() { hand_over_spec "$(static_spec)"; }
scenario_boots() {
    # Cut as vmcust takes the spec: its whole apply and report take about 0.4 s now, so
    # the stand-in's own "copied cust.cfg" line can come after vmcust has finished.
    boot 1 cut "cust.cfg found after"
    boot 2
}
scenario_checks() {
    check_static 2
    check "boot 2: 5 0 reported" rpc_sent 2 '^deployPkg.update.state 5 0'
}
