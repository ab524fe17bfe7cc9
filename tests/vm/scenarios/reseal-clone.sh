# shellcheck shell=bash
# Variables here (stack, describe) and the scenario_* functions are read by run.sh;
# scn_dir, dev and the shared values come from run.sh and lib.sh.
# shellcheck disable=SC2034,SC2154
# A template engineer's round trip: boot 1 customizes the template VM (the static spec;
# the template's DHCP file is moved aside), then the engineer seals it at the console
# with `vmcust clean --state --logs --machine-id --network-configs` and powers off. The
# sealed template is cloned (boot 2: a new DMI product UUID and serial) and the clone
# gets a different spec. The template's own configuration must be back after sealing,
# byte for byte with its mode and owner, and the clone's customization must take.
stack=networkd
describe="seal a customized VM with vmcust clean, then clone it (new product UUID) and customize again: the template's networkd file and resolv.conf are back exactly after sealing; the clone gets the new host name and address, a new machine-id, and reports 5 0"

# What run.sh writes as the networkd template's own configuration (template_network).
template_file=/etc/systemd/network/01-template.network
template_text='[Match]
Name=en*

[Network]
DHCP=ipv4
'

scenario_prepare() {
    hand_over_spec "$(static_spec)"
    local b2=$scn_dir/disk/host/imc-boot-2
    mkdir -p "$b2"
    static_spec | sed -e 's/^HOSTNAME = vm-static/HOSTNAME = vm-clone/' \
        -e 's/^IPADDR = 192.168.50.10/IPADDR = 192.168.50.30/' \
        -e 's/^IPv6ADDR|1 = fd00:50::10/IPv6ADDR|1 = fd00:50::30/' \
        -e 's/^MARKER-ID = .*/MARKER-ID = vmtest-clone-0002/' >"$b2/cust.cfg"
    printf '1' >"$b2/nics.txt"
    # The engineer, at the console after boot 1: looks at what the customization kept,
    # seals, and looks again. find prints name, mode, owner, group, size.
    cat >"$scn_dir/disk/host/after-boot-1" <<'SEAL'
out=/vmtest/results/boot-1
list() {
    find /etc/systemd/network -mindepth 1 -printf '%P %m %U %G %s\n' | sort
    (cd /etc/systemd/network && find . -type f -exec sha256sum {} + | sed 's| \./| |' | sort -k2)
    stat -c 'resolv.conf %F %a %u %g %s' /etc/resolv.conf
    sha256sum /etc/resolv.conf
}
list >"$out/before-seal.txt" 2>&1
vmcust clean --state --logs --machine-id --network-configs
echo "clean exit=$?"
list >"$out/after-seal.txt" 2>&1
SEAL
}

scenario_boots() {
    boot 1
    # The clone: same disk, new VM identity (the MAC stays; vCenter's spec names it).
    vm_uuid=564d2f1a-3b4c-5d6e-7f80-0000c10e0002
    vm_serial="VMware-56 4d 2f 1a 3b 4c 5d 6e-7f 80 00 00 c1 0e 00 02"
    boot 2
}

# sha TEXT: the sha256 of TEXT (exactly, no newline added).
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
# line_of N FILE NAME: the `find -printf` line of NAME in boot N's FILE, without the name.
line_of() { awk -v n="$3" '$1 == n && NF == 5 { print $2, $3, $4, $5 }' "$(r "$1" "$2")"; }
sum_of() { awk -v n="$3" 'NF == 2 && $2 == n { print $1 }' "$(r "$1" "$2")"; }
# tmpl_stat PATH / tmpl_sum PATH: "MODE UID GID SIZE" and the sha256 of PATH in the
# template itself, the image as run.sh built it (read with debugfs, not mounted).
tmpl_stat() {
    debugfs -R "stat $1" "$work/images/$image.raw" 2>/dev/null | awk '
        { for (i = 1; i < NF; i++) {
            if ($i == "Mode:") m = $(i + 1); if ($i == "User:") u = $(i + 1)
            if ($i == "Group:") g = $(i + 1); if ($i == "Size:" && s == "") s = $(i + 1) } }
        END { sub(/^0+/, "", m); if (m != "") print m, u, g, s }'
}
tmpl_sum() { debugfs -R "cat $1" "$work/images/$image.raw" 2>/dev/null | sha256sum | cut -d' ' -f1; }
# After sealing, the template's file is the template's: the mode, owner, group, size
# and contents it has in the image (run.sh's exact text), and the same the customization
# had kept aside in .vmcust-disabled/.
template_back() {
    local want
    want=$(tmpl_stat "$template_file")
    [ -n "$want" ] &&
        [ "$(line_of 1 after-seal.txt 01-template.network)" = "$want" ] &&
        [ "$(line_of 1 before-seal.txt .vmcust-disabled/01-template.network)" = "$want" ] &&
        [ "$(sum_of 1 after-seal.txt 01-template.network)" = "$(tmpl_sum "$template_file")" ] &&
        [ "$(tmpl_sum "$template_file")" = "$(sha "$template_text")" ]
}
# After sealing the directory holds only the template's file: nothing of vmcust's.
only_template_left() {
    [ "$(awk 'NF == 5 { print $1 }' "$(r 1 after-seal.txt)")" = 01-template.network ]
}
# /etc/resolv.conf is the template's again (vmcust had rewritten it: no resolved here).
resolv_back() {
    local want
    want=$(tmpl_stat /etc/resolv.conf)
    [ -n "$want" ] && has 1 after-seal.txt "^resolv.conf regular file $want\$" &&
        [ "$(awk '$2 == "/etc/resolv.conf" { print $1 }' "$(r 1 after-seal.txt)")" = "$(tmpl_sum /etc/resolv.conf)" ] &&
        lacks 1 before-seal.txt "^resolv.conf regular file $want\$"
}
machine_id_of() { tr -d '[:space:]' <"$(r "$1" machine-id)"; }
in_network_tar() { tar -tzf "$(r "$1" network-config.tar.gz)" | grep -x -- "$2" >/dev/null; } # not -q: an early exit would SIGPIPE tar, and pipefail fail the check

scenario_checks() {
    check_static 1
    check_reported 1
    check "boot 1: the customization moved the template's file aside" \
        has 1 before-seal.txt '^\.vmcust-disabled/01-template\.network '
    check "boot 1: vmcust clean exited 0" has 1 after.txt '^clean exit=0$'
    check "boot 1: clean said it put the template's file back" \
        has 1 after.txt "^put back $template_file \(the template's"
    check "sealed: $template_file is back, bytes, mode and owner as the template had it" template_back
    check "sealed: nothing of vmcust's left in /etc/systemd/network" only_template_left
    check "sealed: /etc/resolv.conf is the template's again" resolv_back
    check "clone (boot 2): both vmcust units succeeded" units_ok 2
    check "clone: host name is the second spec's" has 2 hostname.txt '^vm-clone$'
    check "clone: $dev has exactly 192.168.50.30/24 and fd00:50::30/64" \
        exact_addresses 2 "$dev" 192.168.50.30/24 fd00:50::30/64
    check "clone: no DHCP lease on $dev" no_dhcp_lease 2 "$dev"
    check "clone: NIC handshake then 5 0 reported" nic_handshake_then_success 2
    check "clone: the template's file moved aside again" \
        in_network_tar 2 etc/systemd/network/.vmcust-disabled/01-template.network
    check "clone: a new machine-id" test "$(machine_id_of 2)" != "$(machine_id_of 1)"
    note "after sealing: $(tr '\n' ';' <"$(r 1 after-seal.txt)")"
}
