# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# The hand-over comes 22 s after vmtoolsd starts: later than vmcust's default
# [imc] max_wait (15 s), as on a slow or busy host.
stack=networkd
describe="hand-over after max_wait (22 s into tools' start): the spec is still applied on this boot and 5 0 reported"
scenario_prepare() {
    hand_over_spec "$(static_spec)"
    echo 22 >"$scn_dir/disk/host/handover-delay"
}
scenario_boots() { boot 1; }
scenario_checks() {
    check_static 1
    check "boot 1: 5 0 reported" rpc_sent 1 '^deployPkg.update.state 5 0'
    if grep -q 'no /var/run/vmware-imc/cust.cfg within 15 s' "$(r 1 vmcust-journal.txt)"; then
        known_bug "a cust.cfg handed over after [imc] max_wait is never applied (issue 11:" \
            "e.g. a systemd path unit on /var/run/vmware-imc/cust.cfg; fixed by systemd/vmcust-imc.path: a regression)"
    fi
}
