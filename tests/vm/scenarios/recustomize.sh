# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# The static spec on boot 1, then vCenter customizes the same VM again (same BIOS UUID
# and MAC, a new spec and marker) and the hand-over delivers it on boot 2.
stack=networkd
describe="re-customization of the same VM on a later boot (same UUID and MAC, new spec): boot 2 applies the new host name and address and reports 5 0"
scenario_prepare() {
    hand_over_spec "$(static_spec)"
    local b2=$scn_dir/disk/host/imc-boot-2
    mkdir -p "$b2"
    static_spec | sed -e 's/^HOSTNAME = vm-static/HOSTNAME = vm-recust/' \
        -e 's/^IPADDR = 192.168.50.10/IPADDR = 192.168.50.20/' \
        -e 's/^MARKER-ID = .*/MARKER-ID = vmtest-recust-0002/' >"$b2/cust.cfg"
    printf '1' >"$b2/nics.txt"
}
scenario_boots() {
    boot 1
    boot 2
}
scenario_checks() {
    check_static 1
    check "boot 2: host name is the new spec's" has 2 hostname.txt '^vm-recust$'
    check "boot 2: $dev has exactly 192.168.50.20/24 and fd00:50::10/64" \
        exact_addresses 2 "$dev" 192.168.50.20/24 fd00:50::10/64
    check "boot 2: no DHCP lease on $dev" no_dhcp_lease 2 "$dev"
    check "boot 2: NIC handshake then 5 0 reported" nic_handshake_then_success 2
}
