# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# OVF environment on a CD (the "ISO" OVF transport) on the systemd-networkd template:
# host name, SSH key, a netplan v2 network-config and a user-data shell script.
stack=networkd
describe="OVF ISO: host name, SSH key in root's authorized_keys, network-config (static address, route, DNS), user-data #! script run once"
network_config='version: 2
ethernets:
  nic0:
    match:
      macaddress: "00:50:56:aa:bb:01"
    addresses: [192.168.60.20/24]
    routes:
      - to: default
        via: 192.168.60.1
    nameservers:
      addresses: [192.168.60.2]
      search: [ovf.test]
'
scenario_prepare() {
    ovf_iso "$scn_dir/ovf.iso" \
        instance-id=ovf-vmtest-0001 \
        hostname=ovf-vm \
        "public-keys=$test_ssh_key" \
        "user-data=$(printf '%s' "$userdata_script" | base64 -w0)" \
        "network-config=$(printf '%s' "$network_config" | base64 -w0)"
}
scenario_boots() { boot 1; }
scenario_checks() {
    check "boot 1: both vmcust units succeeded" units_ok 1
    check "boot 1: host name from the OVF environment" has 1 hostname.txt '^ovf-vm$'
    check "boot 1: SSH key in root's authorized_keys" has 1 root-ssh/authorized_keys "vmtest@host"
    check "boot 1: $dev has exactly 192.168.60.20/24" exact_addresses 1 "$dev" 192.168.60.20/24
    check "boot 1: no DHCP lease on $dev" no_dhcp_lease 1 "$dev"
    check "boot 1: default route via 192.168.60.1" has 1 ip-route.txt "^default via 192.168.60.1 dev $dev"
    check "boot 1: resolver uses 192.168.60.2 and searches ovf.test" resolver_uses 1 192.168.60.2 -- ovf.test
    check "boot 1: user-data script ran once" test "$(wc -l <"$(r 1 vmtest-userdata-runs)")" -eq 1
    check "boot 1: no deployPkg state sent (not an IMC customization)" no_rpc 1 '^deployPkg'
}
