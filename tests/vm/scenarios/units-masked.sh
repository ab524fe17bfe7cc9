# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# A VMware VM whose vmcust units do not run this boot (masked from the kernel command
# line): no stage will write a status, so `cloud-init status --wait` must answer from
# systemd's view at once instead of waiting out its 915 s bound (issue 18).
stack=networkd
describe="units masked this boot: cloud-init status --wait answers disabled at once, says why"
scenario_kernel_args="systemd.mask=vmcust-early.service systemd.mask=vmcust-late.service systemd.mask=vmcust-imc.path"
scenario_prepare() { :; }
scenario_boots() { boot 1; }
masked() {
    local f
    f=$(r 1 units.txt)
    [ "$(unit_prop "$f" vmcust-early.service ActiveState)" = inactive ] &&
        [ "$(unit_prop "$f" vmcust-late.service ActiveState)" = inactive ] &&
        [ -z "$(unit_prop "$f" vmcust-early.service ExecMainStartTimestampMonotonic | tr -d 0)" ]
}
# The `time -p` line of the collected `cloud-init status --wait`, in whole seconds.
answered_within() {
    local real
    real=$(awk '$1 == "real" { print int($2) }' "$(r 1 cloud-init-status.txt)")
    [ -n "$real" ] && [ "$real" -lt "$2" ]
}
scenario_checks() {
    check "boot 1: systemd sees VMware" has 1 detect-virt.txt '^vmware$'
    check "boot 1: neither vmcust stage ran" masked
    check "boot 1: cloud-init status --wait answers disabled" has 1 cloud-init-status.txt '^status: disabled'
    check "boot 1: and exits 0" has 1 cloud-init-status.txt '^exit=0'
    check "boot 1: within 5 s, not after the 915 s bound" answered_within 1 5
    check "boot 1: status --long says no unit is queued" has 1 cloud-init-status-long.txt 'none is queued'
}
