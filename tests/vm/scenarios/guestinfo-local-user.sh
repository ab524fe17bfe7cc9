# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# Threat T2/T3 of docs/security.md on a real boot: a VM deployed from guestinfo; at the
# end of boot 1 a local user (nobody) sets guestinfo.metadata (new instance-id, host name,
# SSH key), guestinfo.userdata and guestinfo.ovfEnv with the RPC stand-in, as any guest
# user can on VMware by default; boot 2 (the same VM) changes nothing and says why.
stack=networkd
describe="a non-root user sets guestinfo (new instance-id, SSH key, user-data, ovfEnv) and reboots: nothing changes, no guestinfo read on boot 2, the log says why"
evil_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEV2aWxFdmlsRXZpbEV2aWxFdmlsRXZpbEV2aWxFdmls evil@guest"
scenario_prepare() {
    local g=$scn_dir/disk/host/guestinfo
    cat >"$g/guestinfo.metadata" <<'META'
instance-id: gi-trust-0001
local-hostname: gi-vm
redact: [userdata]
META
    printf '%s' "$userdata_script" | base64 -w0 >"$g/guestinfo.userdata"
    printf 'base64' >"$g/guestinfo.userdata.encoding"
    local evil_ud
    evil_ud=$(printf '#!/bin/sh\necho evil >>/var/lib/vmtest-userdata-runs\n' | base64 -w0)
    # What the user runs, as nobody, at the end of boot 1.
    cat >"$scn_dir/disk/host/as-user-boot-1" <<USER
id -u
vmware-rpctool "info-set guestinfo.metadata instance-id: evil-0001
local-hostname: pwned
public-keys: $evil_key
" || exit 1
vmware-rpctool "info-set guestinfo.userdata $evil_ud" || exit 1
vmware-rpctool "info-set guestinfo.userdata.encoding base64" || exit 1
vmware-rpctool "info-set guestinfo.ovfEnv <Environment xmlns=\"http://schemas.dmtf.org/ovf/environment/1\" xmlns:oe=\"http://schemas.dmtf.org/ovf/environment/1\"><PropertySection><Property oe:key=\"instance-id\" oe:value=\"evil-ovf-0001\"/><Property oe:key=\"hostname\" oe:value=\"pwned-ovf\"/><Property oe:key=\"password\" oe:value=\"evil-password\"/></PropertySection></Environment>" || exit 1
vmware-rpctool "info-get guestinfo.metadata"
USER
}
scenario_boots() {
    boot 1
    boot 2
}
# no_evil_key N: the user's key is in no authorized_keys vmcust could have written.
no_evil_key() {
    ! grep -rqs 'evil@guest' "$(r "$1" root-ssh)" "$(r "$1" home-ssh)"
}
scenario_checks() {
    check "boot 1: both vmcust units succeeded" units_ok 1
    check "boot 1: host name from the host's metadata" has 1 hostname.txt '^gi-vm$'
    check "boot 1: user-data script ran once" test "$(user_data_runs 1)" -eq 1
    check "boot 1: the user is uid 65534 and every info-set was accepted" \
        bash -c "head -n1 '$(r 1 as-user.txt)' | grep -qx 65534 && grep -qx exit=0 '$(r 1 as-user.txt)'"
    check "boot 1: the host holds the user's metadata" has 1 as-user.txt '^instance-id: evil-0001$'
    check "boot 1: the host logged the user's info-set" rpc_sent 1 '^info-set guestinfo.metadata instance-id: evil-0001'
    check "boot 2: both vmcust units succeeded" units_ok 2
    check "boot 2: host name unchanged (not pwned, not pwned-ovf)" has 2 hostname.txt '^gi-vm$'
    check "boot 2: the user's SSH key is nowhere" no_evil_key 2
    check "boot 2: no user-data ran again (neither the host's nor the user's)" test "$(user_data_runs 2)" -eq 1
    check "boot 2: no guestinfo read by the units (no info-get at all)" no_unit_rpc 2 '^info-get '
    check "boot 2: the log says why" has 2 vmcust-journal.txt 'guestinfo is not read this boot: the same VM as customized before'
    check "boot 2: no instance but the host's recorded" lacks 2 markers.txt 'evil'
}
