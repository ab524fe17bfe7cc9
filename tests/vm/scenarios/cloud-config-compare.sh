# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# vmcust's side of run.sh --compare-cloud-init for cloud-config: guestinfo metadata and a
# `#cloud-config` (users, a key, sudo, files, bootcmd, runcmd; compare_cloud_config in
# lib.sh) on the networkd template, applied natively. cloud-init-cloud-config gives the
# same bytes to Debian's cloud-init on the same image.
stack=networkd
describe="guestinfo #cloud-config (users, key, sudo, files, bootcmd, runcmd, apt source, mounts) applied natively: vmcust's side of --compare-cloud-init"
scenario_prepare() { compare_cloud_config; }
scenario_boots() { boot 1; }
scenario_checks() {
    check "boot 1: both vmcust units succeeded" units_ok 1
    check "boot 1: vmcust status is ok (exit 0, nothing degraded)" has 1 vmcust-status.txt '^exit=0$'
    check "boot 1: host name from the metadata" has 1 hostname.txt '^cc-compare$'
    check "boot 1: $dev (matched by MAC) has exactly 192.168.72.40/24" exact_addresses 1 "$dev" 192.168.72.40/24
    check_compare_cloud_config 1
    # The debug log (the harness's default level) says how each device was looked at:
    # the empty drive is ruled out by udev's verdict or, before udev has one, by sysfs,
    # never opened (opened, it would be "opened" or "no disc in the drive)" from the ioctl).
    check "boot 1: the empty CD drive was not opened" \
        lacks 1 vmcust-journal.txt 'sr0: (opened|not opened \(no disc in the drive\))'
}
