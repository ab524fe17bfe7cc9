# Helpers for tests/vm/run.sh and its scenarios (sourced, not run): messages, and the
# checks that read what a guest recorded under $scn_dir/results/boot-<n>/.
# shellcheck shell=bash
# scn_dir and failures_file are set by run.sh for the scenario in hand; the shared
# values below are used by scenarios.
# shellcheck disable=SC2034,SC2154

note() { printf '  %s\n' "$*" >&2; }
heading() { printf '\n== %s\n' "$*" >&2; }
die() {
    printf 'run.sh: %s\n' "$*" >&2
    exit 1
}

# fail MESSAGE: a failed check of the current scenario.
fail() {
    printf '  FAIL %s\n' "$*" >&2
    echo "$*" >>"$failures_file"
}
pass() { printf '  ok   %s\n' "$*" >&2; }

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
    local what=$1
    shift
    if "$@" >/dev/null 2>&1; then pass "$what"; else fail "$what"; fi
}

# known_bug TEXT: says, next to the failures it explains, which not yet fixed engine bug
# causes them (also in the summary). It never turns a failure into a pass.
known_bug() {
    printf '  BUG  %s\n' "$*" >&2
    echo "caused by engine bug: $*" >>"$failures_file"
}

# r N FILE: path of a result file of boot N.
r() { echo "$scn_dir/results/boot-$1/$2"; }

# has N FILE REGEX / lacks N FILE REGEX
has() { grep -Eq -- "$3" "$(r "$1" "$2")"; }
lacks() { ! grep -Eq -- "$3" "$(r "$1" "$2")"; }

# rpcs N REGEX: the RPCs of boot N matching REGEX (tab-separated: boot, uptime, rpc, reply).
rpcs() { awk -F'\t' -v n="$1" '$1 == n' "$scn_dir/results/rpc.log" 2>/dev/null | cut -f3- | grep -E -- "$2"; }
rpc_sent() { rpcs "$1" "$2" >/dev/null; }
no_rpc() { ! rpcs "$1" "$2" >/dev/null; }
# unit_rpcs N PATTERN: as rpcs, but only what boot N's units sent: the lines before the
# collector's mark (its console commands, e.g. collect-logs's detect, talk to the host too).
unit_rpcs() {
    awk -F'\t' -v n="$1" '$1 == n' "$scn_dir/results/rpc.log" 2>/dev/null |
        sed '/\tlog vmtest-collect: console commands follow/,$d' | cut -f3- | grep -E -- "$2"
}
no_unit_rpc() { ! unit_rpcs "$1" "$2" >/dev/null; }

# addresses N DEV: the global addresses on DEV, one per line, "ADDR/LEN [dynamic]".
addresses() {
    awk -v dev="$2" '
        /^[0-9]+: / { cur = $2; sub(":$", "", cur); sub("@.*", "", cur) }
        cur == dev && ($1 == "inet" || $1 == "inet6") && / scope global / {
            line = $2; if (/ dynamic /) line = line " dynamic"; print line
        }' "$(r "$1" ip-addr.txt)"
}
# exact_addresses N DEV ADDR...: DEV has these global addresses, no others, none dynamic.
exact_addresses() {
    local n=$1 dev=$2
    shift 2
    local want got
    want=$(printf '%s\n' "$@" | sort)
    got=$(addresses "$n" "$dev" | sort)
    [ "$want" = "$got" ]
}
no_dhcp_lease() { ! addresses "$1" "$2" | grep -q dynamic; }

# resolver N SERVER... -- DOMAIN: the resolver of boot N uses exactly these name servers
# (in resolved's per-link configuration when /etc/resolv.conf is resolved's stub, in
# /etc/resolv.conf otherwise) and searches DOMAIN.
resolver_uses() {
    local n=$1
    shift
    local servers=() domain
    while [ "$1" != -- ]; do
        servers+=("$1")
        shift
    done
    domain=$2
    local conf
    conf=$(r "$n" resolv.conf)
    if grep -q '^nameserver 127.0.0.53' "$conf"; then
        local st
        st=$(r "$n" resolvectl.txt)
        local s
        for s in "${servers[@]}"; do grep -q -- "$s" "$st" || return 1; done
        grep -Eq "DNS Domain:.*\b$domain\b" "$st" || return 1
        grep -Eq "^search .*\b$domain\b" "$conf" || return 1
        ! grep -q "10.0.2.3" "$st"
    else
        local want got
        want=$(printf 'nameserver %s\n' "${servers[@]}")
        got=$(grep '^nameserver' "$conf")
        [ "$want" = "$got" ] || return 1
        grep -Eq "^search .*\b$domain\b" "$conf"
    fi
}

# ---------------------------------------------------------------------------------------
# Shared scenario pieces

# The guest's one NIC: QEMU's virtio NIC in PCI slot 3, with a VMware MAC.
dev=ens3

# static_spec: a vCenter-style static spec for the NIC: an IPv4 and an IPv6 address, a
# gateway, two name servers and a search domain.
static_spec() {
    cat <<'SPEC'
[NETWORK]
NETWORKING = yes
BOOTPROTO = dhcp
HOSTNAME = vm-static
DOMAINNAME = example.test

[NIC-CONFIG]
NICS = NIC1

[NIC1]
MACADDR = 00:50:56:aa:bb:01
ONBOOT = yes
IPv4_MODE = BACKWARDS_COMPATIBLE
BOOTPROTO = static
IPADDR = 192.168.50.10
NETMASK = 255.255.255.0
GATEWAY = 192.168.50.1
PRIMARY = yes
IPv6ADDR|1 = fd00:50::10
IPv6NETMASK|1 = 64

[DNS]
DNSFROMDHCP = no
SUFFIX|1 = example.test
NAMESERVER|1 = 192.168.50.2
NAMESERVER|2 = 192.168.50.3

[DATETIME]
TIMEZONE = Europe/Berlin
UTC = yes

[MISC]
MARKER-ID = vmtest-static-0001
SPEC
}

# hand_over_spec TEXT: the customization vCenter has pending for this VM (delivered by
# the open-vm-tools stand-in on boot 1), with nics.txt naming the one NIC.
hand_over_spec() {
    printf '%s\n' "$1" >"$scn_dir/disk/host/imc/cust.cfg"
    printf '1' >"$scn_dir/disk/host/imc/nics.txt"
}

# unit_prop FILE UNIT PROP: a property of UNIT in `systemctl show` output of several
# units (one blank-line-separated block per unit, properties in systemd's own order).
unit_prop() {
    awk -v RS= -v unit="$2" -v prop="$3" '
        { delete p; n = split($0, lines, "\n")
          for (i = 1; i <= n; i++) { k = lines[i]; sub(/=.*/, "", k); v = lines[i]; sub(/^[^=]*=/, "", v); p[k] = v }
          if (p["Id"] == unit) { print p[prop]; exit } }' "$1"
}

# unit_secs FILE UNIT: UNIT's run time in seconds, from its main process's start to its
# exit (systemd's monotonic timestamps, µs), or nothing when it did not run.
unit_secs() {
    awk -v s="$(unit_prop "$1" "$2" ExecMainStartTimestampMonotonic)" \
        -v e="$(unit_prop "$1" "$2" ExecMainExitTimestampMonotonic)" \
        'BEGIN { if (s > 0 && e >= s) printf "%.2f\n", (e - s) / 1e6 }'
}
# unit_cpu_secs FILE UNIT: the CPU time UNIT's processes used, in seconds (systemd's CPU
# accounting, ns), or nothing when it was not counted.
unit_cpu_secs() {
    awk -v n="$(unit_prop "$1" "$2" CPUUsageNSec)" \
        'BEGIN { if (n ~ /^[0-9]+$/) printf "%.2f\n", n / 1e9 }'
}
# unit_start_secs FILE UNIT: when UNIT's main process started, in seconds since boot.
unit_start_secs() {
    awk -v s="$(unit_prop "$1" "$2" ExecMainStartTimestampMonotonic)" \
        'BEGIN { if (s > 0) printf "%.2f\n", s / 1e6 }'
}
# blame_secs FILE UNIT: UNIT's time in `systemd-analyze blame` output (e.g. "1min 2.3s",
# "850ms"), in seconds, or nothing when it is not listed.
blame_secs() {
    awk -v unit="$2" '$NF == unit {
        t = 0
        for (i = 1; i < NF; i++) {
            v = $i
            if (v ~ /min$/) { sub(/min$/, "", v); t += v * 60 }
            else if (v ~ /ms$/) { sub(/ms$/, "", v); t += v / 1000 }
            else if (v ~ /us$/) { sub(/us$/, "", v); t += v / 1e6 }
            else if (v ~ /s$/) { sub(/s$/, "", v); t += v }
        }
        printf "%.2f\n", t; exit
    }' "$1"
}

# The units each side runs for a boot's customization.
vmcust_units="vmcust-early.service vmcust-late.service"
cloud_init_units="cloud-init-local.service cloud-init.service cloud-config.service cloud-final.service"

# units_ok N: both vmcust units ran and succeeded.
units_ok() {
    local u u_file
    u_file=$(r "$1" units.txt)
    for u in vmcust-early.service vmcust-late.service; do
        [ "$(unit_prop "$u_file" "$u" ActiveState)" = active ] || return 1
        [ "$(unit_prop "$u_file" "$u" Result)" = success ] || return 1
    done
}

# nic_handshake_then_success N: 4 103 answered, 4 104 answered "connected", then 5 0.
nic_handshake_then_success() {
    local seq
    seq=$(rpcs "$1" '^deployPkg.update.state' | cut -f1 | awk '{print $2, $3}' | tr '\n' ',')
    [[ $seq == *"4 103,4 104,"*"5 0,"* ]]
}

# check_static N: everything the static spec asks for is in place after boot N.
check_static() {
    local n=$1
    check "boot $n: both vmcust units succeeded" units_ok "$n"
    check "boot $n: host name is the spec's" has "$n" hostname.txt '^vm-static$'
    check "boot $n: $dev has exactly 192.168.50.10/24 and fd00:50::10/64" \
        exact_addresses "$n" "$dev" 192.168.50.10/24 fd00:50::10/64
    check "boot $n: no DHCP lease on $dev" no_dhcp_lease "$n" "$dev"
    check "boot $n: default route via 192.168.50.1" has "$n" ip-route.txt "^default via 192.168.50.1 dev $dev"
    check "boot $n: resolver uses 192.168.50.2, 192.168.50.3 and searches example.test" \
        resolver_uses "$n" 192.168.50.2 192.168.50.3 -- example.test
    check "boot $n: time zone Europe/Berlin" has "$n" localtime.txt 'Europe/Berlin$'
}

# check_reported N: vCenter saw the NIC handshake and then success, and no failure.
check_reported() {
    local n=$1
    check "boot $n: NIC handshake (4 103, 4 104) then 5 0 sent" nic_handshake_then_success "$n"
    check "boot $n: no failure state sent" no_rpc "$n" '^deployPkg.update.state 4 (6|7|8|9|100|101)( |$)'
    check "boot $n: /var/run/vmware-imc cleaned up" has "$n" imc-dir.txt 'No such file|^total 0'
}

# ovf_iso FILE KEY=VALUE...: an OVF transport CD (label "OVF ENV", ovf-env.xml at the
# root, as vSphere builds it) with these properties and the VM's NIC, at FILE.
ovf_iso() {
    local iso=$1
    shift
    local d
    d=$(mktemp -d)
    {
        printf '<?xml version="1.0" encoding="UTF-8"?>\n'
        printf '<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:oe="http://schemas.dmtf.org/ovf/environment/1" xmlns:ve="http://www.vmware.com/schema/ovfenv" oe:id="" ve:vCenterId="vm-4242">\n'
        printf '  <PlatformSection><Kind>VMware ESXi</Kind><Version>8.0.3</Version><Vendor>VMware, Inc.</Vendor><Locale>en</Locale></PlatformSection>\n'
        printf '  <PropertySection>\n'
        local kv
        for kv in "$@"; do
            printf '    <Property oe:key="%s" oe:value="%s"/>\n' "${kv%%=*}" "${kv#*=}"
        done
        printf '  </PropertySection>\n'
        printf '  <ve:EthernetAdapterSection>\n    <ve:Adapter ve:mac="00:50:56:aa:bb:01" ve:network="VM Network" ve:unitNumber="7"/>\n  </ve:EthernetAdapterSection>\n'
        printf '</Environment>\n'
    } >"$d/ovf-env.xml"
    genisoimage -quiet -o "$iso" -V "OVF ENV" -J -r "$d"
    rm -rf "$d"
}

# A user-data script that counts its runs in the guest (collected by vmtest-collect).
userdata_script='#!/bin/sh
echo "ran $(cut -d" " -f1 /proc/uptime)" >>/var/lib/vmtest-userdata-runs
'
test_ssh_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHZtdGVzdHZtdGVzdHZtdGVzdHZtdGVzdHZtdGVzdHZt vmtest@host"

# The OVF environment the OVF ISO scenarios share (ovf-iso, ovf-iso-late-cd,
# cloud-init-ovf): host name, SSH key, a netplan v2 network-config and the user-data script.
ovf_network_config='version: 2
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
# ovf_env_iso: that environment on a CD at $scn_dir/ovf.iso (boot attaches it).
ovf_env_iso() {
    ovf_iso "$scn_dir/ovf.iso" \
        instance-id=ovf-vmtest-0001 \
        hostname=ovf-vm \
        "public-keys=$test_ssh_key" \
        "user-data=$(printf '%s' "$userdata_script" | base64 -w0)" \
        "network-config=$(printf '%s' "$ovf_network_config" | base64 -w0)"
}
# user_data_runs N: how many times the user-data script had run by the end of boot N.
user_data_runs() {
    local c
    c=$(grep -c . "$(r "$1" vmtest-userdata-runs)" 2>/dev/null)
    echo "${c:-0}"
}
# check_ovf_env_applied N: vmcust applied everything ovf_env_iso asks for on boot N.
check_ovf_env_applied() {
    local n=$1
    check "boot $n: both vmcust units succeeded" units_ok "$n"
    check "boot $n: host name from the OVF environment" has "$n" hostname.txt '^ovf-vm$'
    check "boot $n: SSH key in root's authorized_keys" has "$n" root-ssh/authorized_keys "vmtest@host"
    check "boot $n: $dev has exactly 192.168.60.20/24" exact_addresses "$n" "$dev" 192.168.60.20/24
    check "boot $n: no DHCP lease on $dev" no_dhcp_lease "$n" "$dev"
    check "boot $n: default route via 192.168.60.1" has "$n" ip-route.txt "^default via 192.168.60.1 dev $dev"
    check "boot $n: resolver uses 192.168.60.2 and searches ovf.test" resolver_uses "$n" 192.168.60.2 -- ovf.test
    check "boot $n: user-data script ran once" test "$(user_data_runs "$n")" -eq 1
    check "boot $n: no deployPkg state sent (not an IMC customization)" no_rpc "$n" '^deployPkg'
}

# The machine-id the sealed image's template keeps (its engineer forgot to clear it).
template_machine_id=5c1e0d2f7a9b4c3d8e6f1a2b3c4d5e6f

# early_unit_under N SECONDS: the early unit of boot N took less than SECONDS.
early_unit_under() {
    local t
    t=$(unit_secs "$(r "$1" units.txt)" vmcust-early.service)
    [ -n "$t" ] && awk -v t="$t" -v max="$2" 'BEGIN { exit !(t < max) }'
}

# Seed drives (config-drive-iso, config-drive-vfat, nocloud-iso): the same host name,
# key, static address, route, DNS and user-data script as the OVF ISO scenarios.
# seed_config_drive DIR: an OpenStack config drive's files under DIR.
seed_config_drive() {
    local d=$1/openstack/latest
    mkdir -p "$d"
    cat >"$d/meta_data.json" <<JSON
{"uuid": "seed-vmtest-0001", "hostname": "seed-vm.seed.test", "name": "seed-vm",
 "public_keys": {"vmtest": "$test_ssh_key"}}
JSON
    cat >"$d/network_data.json" <<'JSON'
{"links": [{"id": "tap0", "type": "phy", "ethernet_mac_address": "00:50:56:aa:bb:01", "mtu": 1500}],
 "networks": [{"id": "net0", "type": "ipv4", "link": "tap0", "ip_address": "192.168.60.20",
   "netmask": "255.255.255.0",
   "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "192.168.60.1"}]}],
 "services": [{"type": "dns", "address": "192.168.60.2"}]}
JSON
    printf '%s' "$userdata_script" >"$d/user_data"
}
# seed_nocloud DIR: a NoCloud seed's files under DIR.
seed_nocloud() {
    printf 'instance-id: seed-vmtest-0001\nlocal-hostname: seed-vm.seed.test\npublic-keys:\n  - %s\n' \
        "$test_ssh_key" >"$1/meta-data"
    printf '%s' "$ovf_network_config" >"$1/network-config"
    printf '%s' "$userdata_script" >"$1/user-data"
}
# seed_iso KIND LABEL: that seed on the CD ($scn_dir/ovf.iso is the CD boot attaches).
seed_iso() {
    local d
    d=$(mktemp -d)
    "seed_$1" "$d"
    genisoimage -quiet -o "$scn_dir/ovf.iso" -V "$2" -J -R "$d"
    rm -rf "$d"
}
# seed_vfat KIND LABEL: that seed on an unpartitioned vfat disk ($scn_dir/seed.img).
seed_vfat() {
    local d img=$scn_dir/seed.img
    d=$(mktemp -d)
    "seed_$1" "$d"
    rm -f "$img"
    truncate -s 8M "$img"
    mkfs.vfat -n "$2" "$img" >/dev/null
    (cd "$d" && find . -mindepth 1 -type d | sed 's|^\./||' | while read -r sub; do mmd -i "$img" "::$sub"; done)
    (cd "$d" && find . -type f | sed 's|^\./||' | while read -r f; do mcopy -i "$img" "$f" "::$f"; done)
    rm -rf "$d"
}
# resolver_servers N SERVER: boot N's resolver uses SERVER and not QEMU's 10.0.2.3.
resolver_servers() {
    local conf
    conf=$(r "$1" resolv.conf)
    if grep -q '^nameserver 127.0.0.53' "$conf"; then
        grep -q -- "$2" "$(r "$1" resolvectl.txt)" && ! grep -q "10.0.2.3" "$(r "$1" resolvectl.txt)"
    else
        [ "$(grep '^nameserver' "$conf")" = "nameserver $2" ]
    fi
}
# check_seed_applied N: vmcust applied everything the seed asks for on boot N (the
# config drive's network_data.json has no search domain: DOMAIN is empty for it).
check_seed_applied() {
    local n=$1 domain=${2:-}
    check "boot $n: both vmcust units succeeded" units_ok "$n"
    check "boot $n: host name from the seed" has "$n" hostname.txt '^seed-vm$'
    check "boot $n: SSH key in root's authorized_keys" has "$n" root-ssh/authorized_keys "vmtest@host"
    check "boot $n: $dev has exactly 192.168.60.20/24" exact_addresses "$n" "$dev" 192.168.60.20/24
    check "boot $n: no DHCP lease on $dev" no_dhcp_lease "$n" "$dev"
    check "boot $n: default route via 192.168.60.1" has "$n" ip-route.txt "^default via 192.168.60.1 dev $dev"
    if [ -n "$domain" ]; then
        check "boot $n: resolver uses 192.168.60.2 and searches $domain" resolver_uses "$n" 192.168.60.2 -- "$domain"
    else
        check "boot $n: resolver uses 192.168.60.2 (not QEMU's DHCP DNS)" resolver_servers "$n" 192.168.60.2
    fi
    check "boot $n: user-data script ran once" test "$(user_data_runs "$n")" -eq 1
    check "boot $n: no deployPkg state sent (not an IMC customization)" no_rpc "$n" '^deployPkg'
}

# apt_sources: the host's own apt sources (for $suite), so the harness uses whatever mirror this machine is
# configured for (and never names one itself).
apt_sources() {
    if [ -n "${VMCUST_VM_APT_SOURCES:-}" ]; then
        echo "$VMCUST_VM_APT_SOURCES"
        return
    fi
    local f
    for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
        if [ -s "$f" ] && grep -q "$suite" "$f"; then
            echo "$f"
            return
        fi
    done
    die "no apt sources for $suite found on this host; set VMCUST_VM_APT_SOURCES to a sources file"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on, for a QEMU port forward.
free_port() {
    local p
    for p in $(shuf -i 20000-40000 -n 50); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
    die "no free TCP port on 127.0.0.1 for a port forward"
}

# ssh_from_host PORT KEY USER COMMAND: logs in to the guest from the host, through QEMU's
# forward of 127.0.0.1:PORT to the guest's SSH port, with KEY (no password, no agent),
# retrying while the guest boots (until $boot_timeout), and runs COMMAND. Prints
# COMMAND's output, then "ssh exit=N" and how many attempts it took.
ssh_from_host() {
    local port=$1 key=$2 user=$3 cmd=$4 deadline=$((SECONDS + boot_timeout)) tries=0 rc=255 out
    while [ $SECONDS -lt $deadline ]; do
        tries=$((tries + 1))
        rc=0
        out=$(timeout 60 ssh -o BatchMode=yes -o IdentitiesOnly=yes -o StrictHostKeyChecking=no \
            -o UserKnownHostsFile=/dev/null -o ConnectTimeout=15 -o LogLevel=ERROR \
            -p "$port" -i "$key" "$user@127.0.0.1" "$cmd" 2>&1) || rc=$?
        # 255: ssh itself failed (nothing listens yet, key refused before the user exists).
        [ $rc -ne 255 ] && break
        sleep 3
    done
    printf '%s\nssh exit=%s after %s attempts\n' "$out" "$rc" "$tries"
}

# compare_cloud_config: guestinfo metadata (a static address on the NIC matched by MAC)
# and a `#cloud-config` userdata with users, a key, sudo, files, bootcmd and runcmd (no
# packages: their time is the package manager's) for cloud-config-compare (vmcust) and
# cloud-init-cloud-config (Debian's cloud-init): the same bytes to both, and an
# after-boot-1 that records what each made of it.
compare_cloud_config() {
    local g=$scn_dir/disk/host/guestinfo key=$work/compare-id_ed25519
    # One key for both sides of the pair (their records are compared).
    [ -f "$key.pub" ] || ssh-keygen -q -t ed25519 -N '' -C alice@vmtest -f "$key" </dev/null
    cat >"$g/guestinfo.metadata" <<META
instance-id: cc-compare-0001
local-hostname: cc-compare
network:
  version: 2
  ethernets:
    lan:
      match:
        macaddress: "$vm_mac"
      addresses: [192.168.72.40/24]
      gateway4: 192.168.72.1
      nameservers:
        addresses: [192.168.72.2]
META
    {
        printf '#cloud-config\ngroups: [ops]\nusers:\n  - name: alice\n'
        printf '    groups: [ops]\n    sudo: ALL=(ALL) NOPASSWD:ALL\n    shell: /bin/bash\n'
        printf '    lock_passwd: true\n    ssh_authorized_keys:\n      - %s\n' "$(cat "$key.pub")"
        cat <<'CC'
bootcmd:
  - [sh, -c, 'echo boot >> /var/lib/vmtest-bootcmd-runs']
write_files:
  - path: /etc/vmtest/site.conf
    content: |
      site = lab
    permissions: '0644'
  - path: /home/alice/welcome.txt
    content: welcome alice
    owner: alice:alice
    permissions: '0640'
    defer: true
runcmd:
  - [sh, -c, 'echo run >> /var/lib/vmtest-runcmd-runs']
apt:
  preserve_sources_list: true
  sources:
    vmtest:
      source: deb [trusted=yes] file:/opt/vmtest-extra ./
mounts:
  - [tmpfs, /mnt/vmtest, tmpfs, 'size=1m', '0', '0']
CC
    } | base64 -w0 >"$g/guestinfo.userdata"
    printf 'base64' >"$g/guestinfo.userdata.encoding"
    cat >"$scn_dir/disk/host/after-boot-1" <<'AFTER'
out=/vmtest/results/boot-1
getent passwd alice >"$out/alice.txt" 2>&1
id -Gn alice >>"$out/alice.txt" 2>&1
cat /home/alice/.ssh/authorized_keys >"$out/alice-keys.txt" 2>&1
grep -h alice /etc/sudoers.d/* >"$out/sudoers.txt" 2>&1
stat -c '%a %U:%G %n' /etc/vmtest/site.conf /home/alice/welcome.txt >"$out/files.txt" 2>&1
cat /etc/vmtest/site.conf /home/alice/welcome.txt >>"$out/files.txt" 2>&1
cp /var/lib/vmtest-bootcmd-runs /var/lib/vmtest-runcmd-runs "$out/" 2>&1
cat /etc/apt/sources.list.d/vmtest.list >"$out/apt-source.txt" 2>&1
findmnt -n -o FSTYPE,TARGET /mnt/vmtest >"$out/mounts.txt" 2>&1
AFTER
}

# check_compare_cloud_config N: what compare_cloud_config asks for is in place after boot N.
check_compare_cloud_config() {
    local n=$1
    check "boot $n: alice exists, bash, in ops" has "$n" alice.txt '^alice:x:[0-9]+:[0-9]+::/home/alice:/bin/bash$'
    check "boot $n: alice is in ops" has "$n" alice.txt '(^| )ops( |$)'
    check "boot $n: alice's key is in her authorized_keys" has "$n" alice-keys.txt 'alice@vmtest$'
    check "boot $n: alice's sudo rule" has "$n" sudoers.txt '^alice ALL=\(ALL\) NOPASSWD:ALL$'
    check "boot $n: /etc/vmtest/site.conf, 0644 root:root" has "$n" files.txt '^644 root:root /etc/vmtest/site.conf$'
    check "boot $n: alice's deferred file, 0640 alice:alice" has "$n" files.txt '^640 alice:alice /home/alice/welcome.txt$'
    check "boot $n: the files hold what was written" has "$n" files.txt '^welcome alice$'
    check "boot $n: bootcmd ran once" test "$(wc -l <"$(r "$n" vmtest-bootcmd-runs)")" -eq 1
    check "boot $n: runcmd ran once" test "$(wc -l <"$(r "$n" vmtest-runcmd-runs)")" -eq 1
    check "boot $n: the apt source is in its list file" has "$n" apt-source.txt '^deb \[trusted=yes\] file:/opt/vmtest-extra \./$'
    check "boot $n: the tmpfs of mounts is mounted" has "$n" mounts.txt '^tmpfs +/mnt/vmtest$'
}
