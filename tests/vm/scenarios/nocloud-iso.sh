# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# A NoCloud seed on a CD (ISO9660, label cidata, as cloud-localds makes it) on the
# systemd-networkd template; booted twice.
stack=networkd
describe="NoCloud ISO (cidata): meta-data host name and key, network-config v2 (static address, route, DNS), user-data script run once; second boot changes nothing"
scenario_prepare() { seed_iso nocloud cidata; }
scenario_boots() {
    boot 1
    boot 2
}
scenario_checks() {
    check_seed_applied 1 ovf.test
    check_seed_applied 2 ovf.test
    check "boot 1: found on the CD" has 1 vmcust-journal.txt 'nocloud read from the NoCloud seed /dev/(sr0|disk/by-label/cidata)'
    check "boot 2: instance customized already, nothing done" has 2 vmcust-journal.txt 'instance seed-vmtest-0001 was customized already'
}
