# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# An OpenStack config drive on an unpartitioned vfat disk (mkfs.vfat -n CONFIG-2, filled
# by mtools; /dev/vdc) on the systemd-networkd template; booted twice.
stack=networkd
describe="config drive vfat (CONFIG-2, a whole virtio disk): host name, SSH key, network_data.json (static address, route, DNS), user_data script run once; second boot changes nothing"
scenario_prepare() { seed_vfat config_drive CONFIG-2; }
scenario_boots() {
    boot 1
    boot 2
}
scenario_checks() {
    check_seed_applied 1
    check_seed_applied 2
    check "boot 1: found on the vfat disk" has 1 vmcust-journal.txt 'configdrive read from the config drive /dev/(vdc|disk/by-label/CONFIG-2)'
    check "boot 2: instance customized already, nothing done" has 2 vmcust-journal.txt 'instance seed-vmtest-0001 was customized already'
}
