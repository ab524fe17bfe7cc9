# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# guestinfo.metadata (YAML, network v2) and guestinfo.userdata (base64) read through
# the vmware-rpctool stand-in, on the systemd-networkd template.
stack=networkd
describe="guestinfo metadata + userdata over the RPC stand-in: host name, static network, user-data script once, keys redacted, local-ipv4 published"
scenario_prepare() {
    local g=$scn_dir/disk/host/guestinfo
    cat >"$g/guestinfo.metadata" <<'META'
instance-id: gi-vmtest-0001
local-hostname: gi-vm
redact: [userdata]
network:
  version: 2
  ethernets:
    nic0:
      match:
        macaddress: "00:50:56:aa:bb:01"
      addresses: [192.168.70.30/24]
      routes:
        - to: default
          via: 192.168.70.1
      nameservers:
        addresses: [192.168.70.2]
        search: [gi.test]
META
    printf '%s' "$userdata_script" | base64 -w0 >"$g/guestinfo.userdata"
    printf 'base64' >"$g/guestinfo.userdata.encoding"
}
scenario_boots() { boot 1; }
scenario_checks() {
    check "boot 1: both vmcust units succeeded" units_ok 1
    check "boot 1: host name from the metadata" has 1 hostname.txt '^gi-vm$'
    check "boot 1: $dev has exactly 192.168.70.30/24" exact_addresses 1 "$dev" 192.168.70.30/24
    check "boot 1: default route via 192.168.70.1" has 1 ip-route.txt "^default via 192.168.70.1 dev $dev"
    check "boot 1: resolver uses 192.168.70.2 and searches gi.test" resolver_uses 1 192.168.70.2 -- gi.test
    check "boot 1: metadata and userdata read over RPC" rpc_sent 1 '^info-get guestinfo.userdata'
    check "boot 1: user-data script ran once" test "$(wc -l <"$(r 1 vmtest-userdata-runs)")" -eq 1
    check "boot 1: userdata redacted (info-set guestinfo.userdata ---)" rpc_sent 1 '^info-set guestinfo.userdata ---'
    check "boot 1: guestinfo.local-ipv4 published" rpc_sent 1 '^info-set guestinfo.local-ipv4 192.168.70.30'
}
