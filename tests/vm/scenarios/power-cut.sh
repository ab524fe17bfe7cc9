# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# QEMU killed (a power cut) while the early unit applies the static spec, then a normal
# boot, on the systemd-networkd template.
stack=networkd
describe="power cut during the early stage (QEMU killed once the network files are written and before anything is reported: the RPC stand-in holds ENABLE_NICS on boot 1), then a normal boot that resumes, converges to the full static configuration and reports 5 0"
scenario_prepare() {
    hand_over_spec "$(static_spec)"
    # The host answers ENABLE_NICS (4 103) slowly on boot 1 and says so on the console: a
    # fixed point to cut at, whatever the speed of the apply before it.
    printf '1' >"$scn_dir/disk/host/hold-enable-nics"
}
scenario_boots() {
    boot 1 cut "vmtest-rpctool: holding ENABLE_NICS"
    boot 2
}
scenario_checks() {
    check "boot 2: the unfinished customization was resumed" \
        has 2 vmcust-journal.txt 'resuming the customization an earlier run did not finish'
    check_static 2
    check "boot 2: 5 0 reported" rpc_sent 2 '^deployPkg.update.state 5 0'
}
