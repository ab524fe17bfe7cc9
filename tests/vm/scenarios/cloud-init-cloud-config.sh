# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# The guestinfo metadata and `#cloud-config` of cloud-config-compare given to Debian's own
# cloud-init 22.4 (its VMware data source, through the same vmware-rpctool stand-in) on
# the same networkd image without vmcust: the baseline of run.sh --compare-cloud-init for
# cloud-config. The same results are checked on both sides; the network is only reported.
stack=networkd
variant=cloud-init
# ds-identify runs as a generator, before any disk is mounted, so its rpctool check cannot
# reach the stand-in's store (on VMware it would see guestinfo.metadata): the kernel
# command line names the data source it would have found.
scenario_kernel_args="ci.ds=VMware"
describe="Debian's cloud-init 22.4 (no vmcust) on cloud-config-compare's guestinfo: users, key, sudo, files, bootcmd, runcmd, apt source, mounts checked; unit times recorded for --compare-cloud-init"
scenario_prepare() { compare_cloud_config; }
scenario_boots() { boot 1; }
scenario_checks() {
    check "boot 1: vmcust is not installed" has 1 vmcust-status.txt 'not found|No such file'
    check "boot 1: host name from the metadata" has 1 hostname.txt '^cc-compare$'
    check_compare_cloud_config 1
    note "cloud-init status: $(grep -E '^(status|detail|errors|extended_status):?' "$(r 1 cloud-init-status-long.txt)" | tr '\n' ' ')"
    note "data source: $(grep -ohE 'DataSource[A-Za-z]+( \[[^]]*\])?' "$(r 1 cloud-init-log-tail.txt)" 2>/dev/null | tail -n1)"
    note "failed modules: $(grep -oE 'Running module [a-z_]+ .* failed' "$(r 1 journal.txt)" | awk '{ print $3 }' | sort -u | tr '\n' ' ')"
    note "$dev addresses: $(addresses 1 "$dev" | tr '\n' ' ') (asked: exactly 192.168.72.40/24)"
    local u f
    f=$(r 1 units.txt)
    for u in $cloud_init_units; do
        note "$u: $(unit_prop "$f" "$u" Result), $(unit_secs "$f" "$u") s (started $(unit_start_secs "$f" "$u") s into boot)"
    done
}
