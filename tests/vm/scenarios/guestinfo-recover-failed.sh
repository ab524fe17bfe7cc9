# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# Threat T17 of docs/security.md on a real boot: the first customization from guestinfo
# names a MAC address the VM does not have, so it fails and changes nothing; at the end of
# boot 1 the host's guestinfo is corrected (the after-boot-1 script writes the host's
# store, as an administrator editing extraConfig would); boot 2, the same VM, is customized
# from the corrected data and `vmcust status` says done.
stack=networkd
describe="a first guestinfo customization fails and changes nothing (a MAC the VM lacks); the host corrects guestinfo; boot 2 on the same VM customizes from it"
scenario_prepare() {
    local g=$scn_dir/disk/host/guestinfo
    cat >"$g/guestinfo.metadata" <<'META'
instance-id: gi-recover-0001
local-hostname: gi-recovered
network:
  version: 2
  ethernets:
    nic0:
      match: {macaddress: '00:50:56:00:00:01'}
      dhcp4: true
META
    # The host's correction, written into its own store after boot 1's results.
    cat >"$scn_dir/disk/host/after-boot-1" <<'AFTER'
printf 'instance-id: gi-recover-0001\nlocal-hostname: gi-recovered\n' \
    >/vmtest/host/guestinfo/guestinfo.metadata
cat /vmtest/host/guestinfo/guestinfo.metadata
cp /var/lib/vmcust/instances/gi-recover-0001/result.json /vmtest/results/boot-1/ 2>&1
AFTER
}
scenario_boots() {
    boot 1
    boot 2
}
# early_failed N: the early unit ended in failure (its exit status, 65).
early_failed() {
    [ "$(unit_prop "$(r "$1" units.txt)" vmcust-early.service Result)" != success ]
}
scenario_checks() {
    check "boot 1: the early unit failed" early_failed 1
    check "boot 1: the log names the MAC the VM lacks" has 1 vmcust-journal.txt 'no network device has MAC address 00:50:56:00:00:01'
    check "boot 1: host name still the template's" has 1 hostname.txt '^template$'
    check "boot 1: recorded failed, nothing changed" has 1 result.json '"nothing_changed": true'
    check "boot 1: vmcust status says failed" has 1 vmcust-status.txt 'failed'
    check "boot 2: both vmcust units succeeded" units_ok 2
    check "boot 2: the log says the failed instance is customized again" has 2 vmcust-journal.txt 'instance gi-recover-0001 failed before and changed nothing; customizing it again'
    check "boot 2: host name from the corrected guestinfo" has 2 hostname.txt '^gi-recovered$'
    check "boot 2: vmcust status says done" has 2 vmcust-status.txt 'done'
}
