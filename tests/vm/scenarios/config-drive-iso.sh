# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# An OpenStack config drive on a CD (ISO9660, label config-2, built by genisoimage) on the
# systemd-networkd template; booted twice (seed_* and check_seed_applied in lib.sh).
stack=networkd
describe="config drive ISO (config-2): host name, SSH key, network_data.json (static address, route, DNS), user_data script run once; second boot changes nothing"
scenario_prepare() { seed_iso config_drive config-2; }
scenario_boots() {
    boot 1
    boot 2
}
scenario_checks() {
    check_seed_applied 1
    check_seed_applied 2
    check "boot 1: found on the CD" has 1 vmcust-journal.txt 'configdrive read from the config drive /dev/(sr0|disk/by-label/config-2)'
    check "boot 2: instance customized already, nothing done" has 2 vmcust-journal.txt 'instance seed-vmtest-0001 was customized already'
}
