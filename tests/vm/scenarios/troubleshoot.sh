# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# The person at the console on a real boot: the static spec with a custom script, then a
# second boot; `vmcust query`, `analyze` and `collect-logs` as the guest records them.
stack=networkd
describe="query/analyze/collect-logs: what the spec applied (name, address, DNS, time zone, pre/post script results), each boot's stages under its own boot id, a tarball with the units' journal and the kernel log"
script='#!/bin/sh
exit 0
'
scenario_prepare() {
    hand_over_spec "$(static_spec | sed 's/^MARKER-ID = .*/&\nDEFAULT-RUN-POST-CUST-SCRIPT = yes/'; printf '\n[CUSTOM-SCRIPT]\nSCRIPT-NAME = script0001.bat\n')"
    printf '%s' "$script" >"$scn_dir/disk/host/imc/script0001.bat"
}
scenario_boots() {
    boot 1
    boot 2
}
scenario_checks() {
    check_static 1
    check "boot 1: query: the source is the vSphere spec" has 1 vmcust-query.txt '^source: imc$'
    check "boot 1: query: host name and FQDN" has 1 vmcust-query.txt '^host name: vm-static \(vm-static\.example\.test\)$'
    check "boot 1: query: the NIC's static addresses" has 1 vmcust-query.txt ': ipv4 192\.168\.50\.10/24, ipv6 fd00:50::10/64$'
    check "boot 1: query: DNS servers and search domain" has 1 vmcust-query.txt 'servers 192\.168\.50\.2, 192\.168\.50\.3; search example\.test$'
    check "boot 1: query: time zone" has 1 vmcust-query.txt '^time zone: Europe/Berlin'
    check "boot 1: query: the pre-customization script's result" has 1 vmcust-query.txt '^  precustomization customize\.sh: succeeded'
    check "boot 1: query: the post-customization script's result" has 1 vmcust-query.txt '^  postcustomization customize\.sh: succeeded'
    check "boot 1: analyze: one boot under its kernel boot id" has 1 vmcust-analyze.txt '^-- boot 1 of 1 \(boot id [0-9a-f-]{36}\) --$'
    check "boot 1: analyze: the early stage and its apply step" has 1 vmcust-analyze.txt '^  \|`-> apply @'
    check "boot 1: analyze: the late stage in the same boot" has 1 vmcust-analyze.txt '^stage late started .*: done in'
    check "boot 1: blame: slowest steps of the boot" has 1 vmcust-blame.txt 's \(early\) apply$'
    check "boot 2: analyze: a second boot of its own" has 2 vmcust-analyze.txt '^-- boot 2 of 2 \(boot id [0-9a-f-]{36}\) --$'
    check "boot 2: query still shows the instance" has 2 vmcust-query.txt '^host name: vm-static'
    check "boot 1: collect-logs: the units' journal, the kernel log, query and analyze" \
        bash -c "grep -qx vmcust-logs/journal.txt '$(r 1 collect-logs.txt)' && grep -qx vmcust-logs/kernel.txt '$(r 1 collect-logs.txt)' && grep -qx vmcust-logs/query.json '$(r 1 collect-logs.txt)' && grep -qx vmcust-logs/analyze.txt '$(r 1 collect-logs.txt)'"
    check "boot 1: collect-logs: the journal holds vmcust's lines" has 1 collect-logs.txt '^vmcust journal lines: [1-9]'
    check "boot 1: collect-logs: the kernel log is not empty" has 1 collect-logs.txt '^kernel log lines: [1-9]'
    check "boot 1: collect-logs: the tarball is root's, 0600" has 1 collect-logs.txt '^tarball mode 600 owner root$'
    note "boot 1 blame: $(head -n 3 "$(r 1 vmcust-blame.txt)" | tr -s ' ' | tr '\n' ';')"
}
