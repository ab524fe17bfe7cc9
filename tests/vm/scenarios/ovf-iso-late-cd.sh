# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# The OVF ISO of ovf-iso on a guest whose CD-ROM driver is not loaded at boot
# (modprobe.blacklist=sr_mod): vmtest-late-cd.service loads sr_mod 3 s after vmcust's
# early unit started, so /dev/sr0 appears while the early unit waits for a cust.cfg or a
# CD device on this new VM.
stack=networkd
scenario_kernel_args="modprobe.blacklist=sr_mod vmtest.late_cd=3"
describe="OVF ISO with the CD driver loaded late (sr_mod blacklisted, loaded 3 s after the guest saw the early unit running): no /dev/sr0 when the early unit started, and the OVF environment still applied on that boot"
scenario_prepare() { ovf_env_iso; }
scenario_boots() { boot 1; }
# late_cd_event N REGEX: the uptime of the first late-cd.log event of boot N matching REGEX.
late_cd_event() {
    awk -F'\t' -v n="$1" -v re="$2" '$1 == n && $3 ~ re { print $2; exit }' "$scn_dir/results/late-cd.log" 2>/dev/null
}
# sr0_attached N: when the kernel attached sr0 on boot N (its journal, monotonic seconds).
sr0_attached() {
    awk '/Attached scsi CD-ROM sr0/ { match($0, /[0-9]+\.[0-9]+/); print substr($0, RSTART, RLENGTH); exit }' \
        "$(r "$1" journal.txt)"
}
# later A B: A and B are numbers and A > B.
later() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
scenario_checks() {
    local early loaded attached
    early=$(unit_start_secs "$(r 1 units.txt)" vmcust-early.service)
    loaded=$(late_cd_event 1 '^modprobe sr_mod done')
    attached=$(sr0_attached 1)
    note "early unit started at ${early:-?} s; sr_mod loaded at ${loaded:-?} s; kernel attached sr0 at ${attached:-?} s"
    check "boot 1: the late CD driver saw the early unit running with no /dev/sr0" \
        test -n "$(late_cd_event 1 '^vmcust-early.service activating; /dev/sr0 absent')"
    check "boot 1: sr_mod loaded after the early unit started" later "$loaded" "$early"
    check "boot 1: the kernel attached sr0 after the early unit started" later "$attached" "$early"
    check_ovf_env_applied 1
    note "vmcust's journal on the CD: $(grep -E 'CD|cust.cfg|OVF|ovf' "$(r 1 vmcust-journal.txt)" | sed -E 's/^\[ *[0-9.]+\] [^ ]+ //' | head -n 6 | tr '\n' '|')"
}
