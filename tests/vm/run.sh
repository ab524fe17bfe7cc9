#!/usr/bin/env bash
# vmcust's real-boot VM tests: builds Debian 12 guest images (one per network stack, and
# variants: sealed, cloud-init) with mmdebstrap, installs vmcust into them with
# scripts/install.sh (not into the cloud-init variant, the baseline), boots them under
# QEMU with VMware's DMI strings and a VMware MAC, lets stand-ins for the VMX's RPC tool
# and open-vm-tools' hand-over play the host (tests/vm/guest/), and checks on the host
# what the guest recorded on its test disk. See tests/vm/README.md.
#
# usage: tests/vm/run.sh [--install-deps] [--rounds N] [--ci | --all | SCENARIO...]
#        tests/vm/run.sh --compare-cloud-init[=ovf|=cloud-config] [--rounds N]
#        tests/vm/run.sh --list
#   (no scenario)    the CI subset, as --ci but without installing packages
#   --ci             install the Debian packages needed, then run the CI subset
#   --all            every scenario
#   --list           list the scenarios with what each checks
#   --compare-cloud-init  run ovf-iso and cloud-init-ovf (the same OVF ISO on the same
#                    image, vmcust vs Debian's cloud-init), and cloud-config-compare and
#                    cloud-init-cloud-config (the same guestinfo #cloud-config), and
#                    print their units' times; =ovf or =cloud-config boots only that pair
#   --rounds N       boot the selection N times over (each round every scenario anew, the
#                    rounds one after another); with --compare-cloud-init, print each
#                    round's ratios and their median: one boot's time under TCG on a
#                    shared host varies by a third from run to run
#   --install-deps   apt-get install what the harness needs (idempotent)
#
# Environment:
#   VMCUST_VM_CACHE         base tarballs and apt archives kept between runs
#                           (default target/vm-cache)
#   VMCUST_VM_WORK          images, disks and results of this run (default target/vm-work)
#   VMCUST_VM_ACCEL         QEMU accelerator (default tcg; kvm only where it runs
#                           ordinary guest kernels)
#   VMCUST_VM_BOOT_TIMEOUT  seconds one boot may take before QEMU is killed (default 480)
#   VMCUST_VM_APT_SOURCES   apt sources file for mmdebstrap (default: the host's own)
#   VMCUST_VM_BINARY        vmcust binary to install (default: scripts/build-portable.sh's)
#   VMCUST_VM_LOG_LEVEL     vmcust's [log] level in the images (default debug: each boot
#                           prints the early stage's time per step; empty: none set, info)
#   VMCUST_VM_IMAGE_HOOK    a script run as HOOK ROOTDIR STACK on each image before it is
#                           packed (experiments; results of such runs prove nothing)
#
# Needs root (mmdebstrap's root mode; image files keep root ownership). Exit status is
# non-zero when any check of any scenario failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${VMCUST_VM_CACHE:-$repo/target/vm-cache}
work=${VMCUST_VM_WORK:-$repo/target/vm-work}
accel=${VMCUST_VM_ACCEL:-tcg}
boot_timeout=${VMCUST_VM_BOOT_TIMEOUT:-480}
suite=bookworm

# The CI subset: IMC static on networkd and on netplan, the OVF ISO, and native cloud-config.
ci_scenarios="imc-static-networkd imc-static-netplan ovf-iso cloud-config-native capv-node packer-nocloud"

# shellcheck source=tests/vm/lib.sh
. "$here/lib.sh"

# ---------------------------------------------------------------------------------------
# Host dependencies

deps="mmdebstrap qemu-system-x86 qemu-utils e2fsprogs genisoimage xorriso dosfstools mtools coreutils openssh-client"

# missing_deps: the packages of $deps that are not installed, one per line.
missing_deps() {
    local p
    for p in $deps; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"
    done
}

install_deps() {
    local missing pass
    missing=$(missing_deps)
    if [ -z "$missing" ]; then
        note "host packages present: $deps"
        return
    fi
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
    # Two passes: installing one package may remove another that conflicts with it (a
    # backported qemu-utils goes when Debian's qemu-system-x86 comes); the second pass
    # installs the removed one again, in the version that fits.
    for pass in 1 2; do
        note "installing $(echo $missing) (pass $pass)"
        # shellcheck disable=SC2086 # one package name per word
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
        missing=$(missing_deps)
        [ -z "$missing" ] && return
    done
    die "still not installed after two passes of apt-get: $(echo $missing)"
}

# ---------------------------------------------------------------------------------------
# Images

common_packages="systemd-sysv,udev,dbus,kmod,iproute2,procps,tzdata,linux-image-cloud-amd64,e2fsprogs,less"

stack_packages() {
    case "$1" in
    networkd) echo "$common_packages" ;;
    netplan) echo "$common_packages,netplan.io,systemd-resolved" ;;
    nm) echo "$common_packages,network-manager" ;;
    ifupdown) echo "$common_packages,ifupdown,isc-dhcp-client" ;;
    *) die "unknown network stack $1" ;;
    esac
}

# variant_packages VARIANT: what an image variant adds to its stack's packages.
#   sealed      a template with an SSH server and sudo, sealed as a Packer build does
#   cloud-init  Debian's own cloud-init instead of vmcust (the baseline it is compared to)
variant_packages() {
    case "$1" in
    "") ;;
    sealed) echo ",openssh-server,sudo" ;;
    cloud-init) echo ",cloud-init" ;;
    *) die "unknown image variant $1" ;;
    esac
}

# image_name STACK [VARIANT]: the image's name, STACK or STACK-VARIANT.
image_name() { echo "$1${2:+-$2}"; }

# base_tarball STACK [VARIANT]: path of the cached mmdebstrap tarball for the image,
# built if missing. The cache key covers the suite, the package list and the apt sources.
base_tarball() {
    local stack=$1 variant=${2:-} name packages sources key tarball
    name=$(image_name "$stack" "$variant")
    packages=$(stack_packages "$stack")$(variant_packages "$variant")
    sources=$(apt_sources)
    key=$({ echo "$suite $packages"; cat "$sources"; } | sha256sum | cut -c1-12)
    tarball=$cache/base-$name-$key.tar
    if [ ! -f "$tarball" ]; then
        mkdir -p "$cache/apt-archives"
        note "building the $name base tarball with mmdebstrap (cached as $(basename "$tarball"))"
        local t0=$SECONDS
        # The .deb files are kept in the cache and shared by every stack's build.
        mmdebstrap --variant=minbase --format=tar --include="$packages" \
            --aptopt='Apt::Install-Recommends "false"' \
            --setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
            --setup-hook="sync-in $cache/apt-archives /var/cache/apt/archives/" \
            --customize-hook="sync-out /var/cache/apt/archives $cache/apt-archives" \
            "$suite" "$tarball.tmp" "$sources" >"$cache/mmdebstrap-$name.log" 2>&1 ||
            die "mmdebstrap failed; see $cache/mmdebstrap-$name.log"
        mv "$tarball.tmp" "$tarball"
        note "base tarball for $name built in $((SECONDS - t0)) s"
    fi
    echo "$tarball"
}

# The template's own DHCP configuration, in the shape real templates have it.
template_network() {
    local stack=$1 root=$2
    case "$stack" in
    networkd)
        # A catch-all by name pattern that sorts before anything vmcust writes.
        cat >"$root/etc/systemd/network/01-template.network" <<'EOF'
[Match]
Name=en*

[Network]
DHCP=ipv4
EOF
        systemctl --root="$root" enable systemd-networkd.service >/dev/null 2>&1
        # What the template's last DHCP lease left behind (no resolved on this stack).
        printf 'nameserver 10.0.2.3\n' >"$root/etc/resolv.conf"
        ;;
    netplan)
        mkdir -p "$root/etc/netplan"
        cat >"$root/etc/netplan/01-template.yaml" <<'EOF'
network:
  version: 2
  renderer: networkd
  ethernets:
    template:
      match:
        name: "en*"
      dhcp4: true
EOF
        chmod 600 "$root/etc/netplan/01-template.yaml"
        systemctl --root="$root" enable systemd-networkd.service systemd-resolved.service >/dev/null 2>&1
        ln -sfn ../run/systemd/resolve/stub-resolv.conf "$root/etc/resolv.conf"
        ;;
    nm)
        # No keyfile: NetworkManager's automatic wired connection ("Wired connection 1").
        systemctl --root="$root" enable NetworkManager.service >/dev/null 2>&1
        printf 'nameserver 10.0.2.3\n' >"$root/etc/resolv.conf"
        ;;
    ifupdown)
        cat >"$root/etc/network/interfaces" <<'EOF'
source /etc/network/interfaces.d/*

auto lo
iface lo inet loopback

allow-hotplug ens3
iface ens3 inet dhcp
EOF
        printf 'nameserver 10.0.2.3\n' >"$root/etc/resolv.conf"
        ;;
    esac
}

# image STACK [VARIANT]: builds $work/images/NAME.{raw,vmlinuz,initrd} once per run, NAME
# being image_name's. A sealed image also leaves NAME.ssh-fingerprints (the template's
# host keys, `ssh-keygen -lf` of each) for the checks.
image() {
    local stack=$1 variant=${2:-} name
    name=$(image_name "$stack" "$variant")
    local img=$work/images/$name
    [ -f "$img.raw" ] && return
    local tarball t0 root
    tarball=$(base_tarball "$stack" "$variant")
    t0=$SECONDS
    root=$work/images/$name.root
    rm -rf "$root"
    mkdir -p "$root"
    tar -xf "$tarball" -C "$root" --numeric-owner
    echo template >"$root/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\ttemplate\n' >"$root/etc/hosts"
    printf 'LABEL=vmroot / ext4 defaults 0 1\nLABEL=vmtest /vmtest ext4 defaults,x-systemd.device-timeout=30s 0 2\n' \
        >"$root/etc/fstab"
    mkdir -p "$root/vmtest"
    if [ "$variant" = sealed ]; then
        # A template whose engineer forgot to clear the machine-id: a fixed, known one,
        # written before install.sh so that vmcust records it as the template's.
        printf '%s\n' "$template_machine_id" >"$root/etc/machine-id"
    else
        # A template has a machine id emptied for cloning.
        : >"$root/etc/machine-id"
    fi
    template_network "$stack" "$root"
    # The guest reaches no mirror: the image's apt sources name a local repository instead
    # (what a template of an offline site has in its internal mirror), and the cloud-config
    # pair's `apt: sources` adds a second one, so `apt-get update` reads files on both sides
    # of --compare-cloud-init instead of waiting on DNS for the mirror.
    local repo_dir
    for repo_dir in vmtest-repo vmtest-extra; do
        mkdir -p "$root/opt/$repo_dir"
        : >"$root/opt/$repo_dir/Packages"
    done
    rm -f "$root"/etc/apt/sources.list.d/*.sources "$root"/etc/apt/sources.list.d/*.list
    printf 'deb [trusted=yes] file:/opt/vmtest-repo ./\n' >"$root/etc/apt/sources.list"
    if [ "$variant" != cloud-init ]; then
        # vmcust as a user installs it.
        "$repo/scripts/install.sh" --root "$root" --binary "$binary" >/dev/null
        local level=${VMCUST_VM_LOG_LEVEL-debug}
        if [ -n "$level" ]; then
            printf '[log]\nlevel = %s\n' "$level" >"$root/etc/vmcust/vmcust.conf"
        fi
    fi
    # The test stand-ins for the host side (tests/vm/guest/).
    install -m 0755 "$work/vmware-rpctool" "$root/usr/bin/vmware-rpctool"
    install -D -m 0755 "$here/guest/vmtest-tools" "$root/usr/local/sbin/vmtest-tools"
    install -m 0755 "$here/guest/vmtest-collect" "$root/usr/local/sbin/vmtest-collect"
    install -m 0755 "$here/guest/vmtest-late-cd" "$root/usr/local/sbin/vmtest-late-cd"
    local unit
    for unit in open-vm-tools.service vmtest-boot.service vmtest-collect.service \
        vmtest-late-cd.service; do
        install -m 0644 "$here/guest/$unit" "$root/etc/systemd/system/$unit"
    done
    systemctl --root="$root" enable open-vm-tools.service vmtest-boot.service \
        vmtest-collect.service vmtest-late-cd.service >/dev/null 2>&1
    if [ "$variant" = cloud-init ]; then
        # On VMware the guestinfo store answers from power-on; the stand-in's lives on the
        # test disk, so cloud-init's first unit (DefaultDependencies=no) waits for it.
        mkdir -p "$root/etc/systemd/system/cloud-init-local.service.d"
        printf '[Unit]\nRequiresMountsFor=/vmtest\n' \
            >"$root/etc/systemd/system/cloud-init-local.service.d/vmtest.conf"
    fi
    # An experiment on the image (e.g. trying a fix in the guest): a script run with the
    # image's root directory and the stack's name.
    if [ -n "${VMCUST_VM_IMAGE_HOOK:-}" ]; then
        "$VMCUST_VM_IMAGE_HOOK" "$root" "$stack"
    fi
    if [ "$variant" = sealed ]; then
        seal_template "$root" "$img"
    fi
    cp -L "$root"/boot/vmlinuz-* "$img.vmlinuz"
    cp -L "$root"/boot/initrd.img-* "$img.initrd"
    mkfs.ext4 -q -F -L vmroot -d "$root" "$img.raw.tmp" 3G >/dev/null
    mv "$img.raw.tmp" "$img.raw"
    rm -rf "$root"
    note "image $name built in $((SECONDS - t0)) s"
}

# seal_template ROOT IMG: the last step of a Packer build's clean-up script: `cloud-init
# clean --logs` (here vmcust's cloud-init stand-in) in the image, and nothing for the
# machine-id (the forgotten step). Keeps the host keys' fingerprints at IMG.ssh-fingerprints.
seal_template() {
    local root=$1 img=$2 out
    if ! out=$(chroot "$root" /usr/bin/cloud-init clean --logs 2>&1); then
        die "sealing the template: cloud-init clean --logs failed: $out"
    fi
    note "sealed: cloud-init clean --logs: $(printf '%s' "$out" | tr '\n' ' ')"
    local key
    : >"$img.ssh-fingerprints"
    for key in "$root"/etc/ssh/ssh_host_*_key.pub; do
        [ -f "$key" ] || die "sealing the template: no SSH host keys in the image"
        ssh-keygen -lf "$key" >>"$img.ssh-fingerprints"
    done
}

# ---------------------------------------------------------------------------------------
# Booting

vm_uuid=564d2f1a-3b4c-5d6e-7f80-91a2b3c4d5e6
vm_serial="VMware-56 4d 2f 1a 3b 4c 5d 6e-7f 80 91 a2 b3 c4 d5 e6"
vm_mac=00:50:56:aa:bb:01

# boot N [cut PATTERN]: one boot of the current scenario's VM. With "cut", QEMU is
# killed (a power cut) as soon as the serial console shows PATTERN.
boot() {
    local n=$1 mode=${2:-normal} pattern=${3:-}
    local console=$scn_dir/console-$n.log
    # QEMU's options are comma-separated inside one argument.
    # shellcheck disable=SC2054
    local args=(
        # vmport=off: QEMU's emulation of VMware's backdoor port would make the guest
        # kernel take VMware's paravirtual paths (TSC marked reliable) under TCG.
        -machine pc,vmport=off -accel "$accel" -m 1024 -smp 1
        -display none -monitor none -no-reboot
        -serial "file:$console"
        -kernel "$work/images/$image.vmlinuz" -initrd "$work/images/$image.initrd"
        -append "root=LABEL=vmroot rw console=ttyS0,115200 net.ifnames=1 systemd.show_status=1${scenario_kernel_args:+ $scenario_kernel_args}"
        -drive "file=$scn_dir/disk.qcow2,if=virtio,format=qcow2"
        -drive "file=$scn_dir/test.img,if=virtio,format=raw"
        # A scenario may set QEMU user networking's addresses and port forwards.
        -netdev "user,id=n0${scenario_netdev:+,$scenario_netdev}"
        -device "virtio-net-pci,netdev=n0,mac=$vm_mac,addr=0x3"
    )
    if [ "${scenario_vmware:-yes}" = yes ]; then
        # shellcheck disable=SC2054
        # What a VMware VM's firmware reports. No hypervisor CPUID bit, so systemd and
        # vmcust go by DMI (QEMU's CPUID would say "TCG"/"KVM" first).
        args+=(
            -cpu max,hypervisor=off
            -smbios "type=0,vendor=VMware,, Inc."
            -smbios "type=1,manufacturer=VMware,, Inc.,product=VMware Virtual Platform,serial=$vm_serial,uuid=$vm_uuid"
        )
    else
        args+=(-cpu max)
    fi
    if [ -f "$scn_dir/ovf.iso" ]; then
        # shellcheck disable=SC2054
        args+=(
            -device virtio-scsi-pci,id=scsi0
            -drive "file=$scn_dir/ovf.iso,if=none,id=cd0,media=cdrom,format=raw,readonly=on"
            -device scsi-cd,drive=cd0
        )
    fi
    if [ -f "$scn_dir/seed.img" ]; then
        # A seed drive on an unpartitioned disk (vfat config-2, cidata): /dev/vdc.
        args+=(-drive "file=$scn_dir/seed.img,if=virtio,format=raw,readonly=on")
    fi
    local t0=$SECONDS rc=0
    if [ "$mode" = cut ]; then
        qemu-system-x86_64 "${args[@]}" &
        local pid=$!
        local deadline=$((SECONDS + boot_timeout))
        until grep -q -- "$pattern" "$console" 2>/dev/null; do
            if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
                kill -9 "$pid" 2>/dev/null || true
                wait "$pid" 2>/dev/null || true
                fail "boot $n: never reached \"$pattern\" to cut the power"
                return
            fi
            sleep 0.2
        done
        kill -9 "$pid"
        wait "$pid" 2>/dev/null || true
        note "boot $n: power cut after \"$pattern\" at $((SECONDS - t0)) s"
        return
    fi
    # What the host does while the guest runs (e.g. log in over a forwarded port): a
    # scenario's scenario_during_boot N, started with QEMU and waited for after it.
    local during=
    if declare -F scenario_during_boot >/dev/null; then
        scenario_during_boot "$n" &
        during=$!
    fi
    timeout --kill-after=10 "$boot_timeout" qemu-system-x86_64 "${args[@]}" || rc=$?
    if [ -n "$during" ]; then
        kill "$during" 2>/dev/null || true
        wait "$during" 2>/dev/null || true
    fi
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        fail "boot $n: QEMU killed after ${boot_timeout} s (see $console)"
    elif [ $rc -ne 0 ]; then
        fail "boot $n: QEMU exited with $rc (see $console)"
    fi
    # The guest's results, read without mounting the disk.
    rm -rf "$scn_dir/results"
    debugfs -R "rdump /results $scn_dir" "$scn_dir/test.img" >/dev/null 2>&1 ||
        fail "boot $n: cannot read the test disk"
    local b=$scn_dir/results/boot-$n
    if [ ! -f "$b/collected" ]; then
        fail "boot $n: the guest collected no results (see $console)"
        # Nothing to check: leave this scenario (run_scenario's subshell).
        exit 1
    fi
    note "boot $n: $((SECONDS - t0)) s wall; $(unit_times "$b")"
    # The engine's own profile (debug level): each step of each vmcust unit and its time,
    # by the unit whose start came last (the units do not overlap).
    awk '/systemd\[1\]: Starting vmcust-/ { match($0, /vmcust-[a-z]+/); unit = substr($0, RSTART + 7, RLENGTH - 7) }
         / vmcust\[[0-9]+\]: vmcust: debug: .* took [0-9.]+ ms$/ {
             sub(/.*vmcust: debug: /, ""); steps[unit] = steps[unit] (steps[unit] ? "; " : "") $0
             if (!(unit in seen)) { seen[unit] = 1; order[++n] = unit } }
         END { for (i = 1; i <= n; i++) printf "    %s steps: %s\n", order[i], steps[order[i]] }' \
        "$b/vmcust-journal.txt" 2>/dev/null || true
}

# unit_times DIR: the early and late units' run times, when the early unit started, and
# its first log line, from systemd's monotonic timestamps (µs) and the journal.
unit_times() {
    local f=$1/units.txt early start late first
    early=$(unit_secs "$f" vmcust-early.service)
    start=$(unit_start_secs "$f" vmcust-early.service)
    late=$(unit_secs "$f" vmcust-late.service)
    first=$(awk '/ vmcust\[[0-9]+\]: / { match($0, /[0-9]+\.[0-9]+/); print substr($0, RSTART, RLENGTH); exit }' \
        "$1/vmcust-journal.txt")
    if [ -n "$early" ]; then
        printf 'early unit %s s (started %s s into boot' "$early" "$start"
        [ -n "$first" ] && awk -v f="$first" -v s="$start" 'BEGIN { printf "; first log line after %.2f s", f - s }'
        printf ')'
    else
        printf 'early unit did not run'
    fi
    [ -n "$late" ] && printf ', late unit %s s' "$late"
    # A boot run by Debian's cloud-init (the cloud-init variant): its four units.
    if [ -n "$(unit_secs "$f" cloud-init-local.service)" ]; then
        local u
        printf '; cloud-init:'
        for u in $cloud_init_units; do printf ' %s %s s' "${u%.service}" "$(unit_secs "$f" "$u")"; done
    fi
}

# The pairs --compare-cloud-init boots: vmcust's scenario and cloud-init's, the same
# input on the same image (networkd, and its cloud-init variant).
compare_pairs="ovf-iso:cloud-init-ovf cloud-config-compare:cloud-init-cloud-config"

# compare_cloud_init VMCUST CLOUD_INIT [ROUND]: the table of --compare-cloud-init, from the first
# boots of scenario VMCUST (vmcust) and CLOUD_INIT (Debian's cloud-init) of this run: each
# unit's run time (main process start to exit, systemd's monotonic timestamps), its time
# in `systemd-analyze blame` and the CPU time its processes used (less at the mercy of
# what else the one emulated CPU runs meanwhile), each side's totals, and vmcust's run
# time as a fraction of cloud-init's. Also written to $work/compare-VMCUST.txt (and, with
# ROUND, to $work/compare-VMCUST-roundROUND.txt); the totals are appended to
# $work/compare-VMCUST-totals.txt, "0 0 0 0" when a side recorded nothing.
compare_cloud_init() {
    local v=$work/scenarios/$1/results/boot-1 c=$work/scenarios/$2/results/boot-1
    local tables=("$work/compare-$1.txt")
    [ -z "${3:-}" ] || tables+=("$work/compare-$1-round$3.txt")
    local side dir units u t b cpu total cputotal vtotal=0 ctotal=0 vcpu=0 ccpu=0 rows=()
    for side in vmcust cloud-init; do
        if [ $side = vmcust ]; then dir=$v units=$vmcust_units; else dir=$c units=$cloud_init_units; fi
        [ -f "$dir/units.txt" ] || {
            echo "no results of $side's boot in $dir" >&2
            echo "0 0 0 0" >>"$work/compare-$1-totals.txt"
            return 1
        }
        total=0 cputotal=0
        for u in $units; do
            t=$(unit_secs "$dir/units.txt" "$u")
            b=$(blame_secs "$dir/blame.txt" "$u")
            cpu=$(unit_cpu_secs "$dir/units.txt" "$u")
            rows+=("$(printf '%-12s %-26s %9s %9s %9s' "$side" "$u" "${t:--}" "${b:--}" "${cpu:--}")")
            total=$(awk -v a="$total" -v b="${t:-0}" 'BEGIN { printf "%.2f", a + b }')
            cputotal=$(awk -v a="$cputotal" -v b="${cpu:-0}" 'BEGIN { printf "%.2f", a + b }')
        done
        rows+=("$(printf '%-12s %-26s %9s %9s %9s' "$side" total "$total" "" "$cputotal")")
        if [ $side = vmcust ]; then vtotal=$total vcpu=$cputotal; else ctotal=$total ccpu=$cputotal; fi
    done
    {
        printf '%s against %s\n' "$1" "$2"
        printf '%-12s %-26s %9s %9s %9s\n' side unit "run (s)" "blame (s)" "CPU (s)"
        printf '%s\n' "${rows[@]}"
        awk -v v="$vtotal" -v c="$ctotal" 'BEGIN {
            if (c > 0 && v > 0) printf "vmcust / cloud-init = %.2f / %.2f s = 1/%.1f (%.1f %%; target at most 1/20)\n", v, c, c / v, 100 * v / c
        }'
        awk -v v="$vcpu" -v c="$ccpu" 'BEGIN {
            if (c > 0 && v > 0) printf "CPU time: vmcust / cloud-init = %.2f / %.2f s = 1/%.1f\n", v, c, c / v
        }'
        printf 'first unit started, seconds into boot: vmcust %s; cloud-init %s\n' \
            "$(unit_start_secs "$v/units.txt" vmcust-early.service) s" \
            "$(unit_start_secs "$c/units.txt" cloud-init-local.service) s"
        # The whole boot as systemd counts it (to multi-user.target), each side.
        printf 'systemd-analyze: vmcust image: %s\n' "$(head -n1 "$v/analyze.txt")"
        printf 'systemd-analyze: cloud-init image: %s\n' "$(head -n1 "$c/analyze.txt")"
    } | tee "${tables[@]}"
    # One line a call, for --rounds: vmcust's and cloud-init's totals, run then CPU.
    printf '%s %s %s %s\n' "$vtotal" "$ctotal" "$vcpu" "$ccpu" >>"$work/compare-$1-totals.txt"
    # Where both sides recorded what they made of the input (compare_cloud_config), the
    # records must be the same: a booted cloud-init and vmcust agree on it.
    if [ -f "$v/alice.txt" ] || [ -f "$c/alice.txt" ]; then
        local f differ=no failures_file=$work/failed-$2
        for f in alice.txt alice-keys.txt sudoers.txt files.txt vmtest-bootcmd-runs vmtest-runcmd-runs; do
            if ! diff -u --label "cloud-init: $f" --label "vmcust: $f" "$c/$f" "$v/$f" >&2; then
                differ=yes
            fi
        done
        if [ $differ = yes ]; then
            fail "$1 and $2: vmcust's results differ from cloud-init's (diff above)"
        else
            pass "$1 and $2: the same users, groups, keys, sudo rule, files and command runs"
        fi
    fi
}

# compare_rounds VMCUST: each round's ratios of the pair whose vmcust scenario is VMCUST
# (from compare_cloud_init's totals file), then their median, run time and CPU time each
# (rounds.awk). Also written to $work/compare-VMCUST-rounds.txt.
compare_rounds() {
    local totals=$work/compare-$1-totals.txt
    [ -s "$totals" ] || return 0
    awk -v name="$1" -f "$here/rounds.awk" "$totals" | tee "$work/compare-$1-rounds.txt"
}

# ---------------------------------------------------------------------------------------
# Scenarios

scenario_files() { ls "$here"/scenarios/*.sh; }
scenario_names() { for f in $(scenario_files); do basename "$f" .sh; done; }

list() {
    local f
    for f in $(scenario_files); do
        (
            # shellcheck source=/dev/null
            . "$f"
            # shellcheck disable=SC2154
            printf '%-26s %-19s %s\n' "$(basename "$f" .sh)" "$(image_name "$stack" "${variant:-}")" "$describe"
        )
    done
}

# run_scenario NAME: prepares the test disk, boots, checks. Runs in a subshell; its failed
# checks are appended to $work/failed-NAME (so that --rounds keeps every round's).
run_scenario() {
    local name=$1
    (
        scn_dir=$work/scenarios/$name
        failures_file=$work/failed-$name
        # shellcheck source=/dev/null
        . "$here/scenarios/$name.sh"
        image=$(image_name "$stack" "${variant:-}")
        heading "$name ($image): $describe"
        rm -rf "$scn_dir"
        mkdir -p "$scn_dir/disk/host/guestinfo" "$scn_dir/disk/host/imc" "$scn_dir/disk/results"
        # Any guest user may set guestinfo, as on a VMX without guest_rpc.rpci.auth.cmd.info-set
        # (guest/vmware-rpctool.rs), and the host logs every caller's RPC.
        chmod 0777 "$scn_dir/disk/host/guestinfo"
        install -m 0666 /dev/null "$scn_dir/disk/results/rpc.log"
        scenario_prepare
        mkfs.ext4 -q -F -L vmtest -d "$scn_dir/disk" "$scn_dir/test.img" 64M >/dev/null
        qemu-img create -q -f qcow2 -b "$work/images/$image.raw" -F raw "$scn_dir/disk.qcow2"
        local t0=$SECONDS
        scenario_boots
        scenario_checks
        note "$name: $((SECONDS - t0)) s"
    ) || echo "scenario aborted" >>"$work/failed-$name"
}

main() {
    local want_deps=no selection=() all=no compare=no rounds=1
    while [ $# -gt 0 ]; do
        case "$1" in
        --list)
            list
            exit 0
            ;;
        --install-deps) want_deps=yes ;;
        --ci)
            want_deps=yes
            # shellcheck disable=SC2206
            selection+=($ci_scenarios)
            ;;
        --all) all=yes ;;
        --compare-cloud-init | --compare-cloud-init=*)
            compare=yes
            case "$1" in
            *=ovf) compare_pairs=${compare_pairs%% *} ;;
            *=cloud-config) compare_pairs=${compare_pairs##* } ;;
            *=*) die "--compare-cloud-init takes ovf or cloud-config, not ${1#*=}" ;;
            esac
            # shellcheck disable=SC2206
            selection+=(${compare_pairs//:/ })
            ;;
        --rounds)
            [[ "${2:-}" =~ ^[1-9][0-9]?$ ]] || die "--rounds needs a number of rounds, 1 to 99"
            rounds=$2
            shift
            ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        -*) die "unknown option $1 (try --help)" ;;
        *) selection+=("$1") ;;
        esac
        shift
    done
    [ "$(id -u)" = 0 ] || die "run as root (mmdebstrap root mode, root-owned image files)"
    [ $want_deps = yes ] && install_deps
    if [ $all = yes ]; then
        mapfile -t selection < <(scenario_names)
    elif [ ${#selection[@]} -eq 0 ]; then
        # shellcheck disable=SC2206
        selection=($ci_scenarios)
    fi
    local s
    for s in "${selection[@]}"; do
        [ -f "$here/scenarios/$s.sh" ] || die "no scenario $s (see --list)"
    done

    local t_start=$SECONDS
    mkdir -p "$work" "$cache"
    rm -rf "$work/images" "$work"/failed-* "$work"/compare-*
    mkdir -p "$work/images"
    if [ -n "${VMCUST_VM_BINARY:-}" ]; then
        binary=$VMCUST_VM_BINARY
    else
        # The binary the packages ship (static, stripped).
        note "scripts/build-portable.sh"
        (cd "$repo" && scripts/build-portable.sh >/dev/null)
        binary=$repo/target/pkg/vmcust
    fi
    # The rpctool stand-in is a small static program, as the real tool is: a script would
    # add its own start-up to every RPC vmcust makes during boot. Not position-independent:
    # QEMU's TCG translates a process's code anew wherever ASLR loads it, so a PIE stand-in
    # cost 36-42 ms a call in the guest against 17 ms at a fixed address (10 calls timed in
    # a booted guest, docs/benchmarks.md). On a VMware host vmcust makes its RPCs over the
    # backdoor, in its own process; the stand-in's start-up is the harness's, not vmcust's.
    rustc --edition 2021 -O -C target-feature=+crt-static -C relocation-model=static -C strip=symbols \
        -o "$work/vmware-rpctool" "$here/guest/vmware-rpctool.rs"
    # Each image (stack and variant) once, before any boot.
    local images i st va
    # shellcheck disable=SC1090
    mapfile -t images < <(for s in "${selection[@]}"; do (. "$here/scenarios/$s.sh" && echo "$stack ${variant:-}"); done | sort -u)
    for i in "${images[@]}"; do
        read -r st va <<<"$i"
        image "$st" "$va" </dev/null
    done
    note "images ready after $((SECONDS - t_start)) s"

    local round pair round_tag=
    for round in $(seq "$rounds"); do
        [ "$rounds" = 1 ] || heading "round $round of $rounds"
        # Each round's compare table under its own name; one round's is compare-VMCUST.txt.
        [ "$rounds" = 1 ] || round_tag=$round
        for s in "${selection[@]}"; do run_scenario "$s"; done
        if [ $compare = yes ]; then
            for pair in $compare_pairs; do
                heading "vmcust against Debian's cloud-init: the same input on the same image"
                compare_cloud_init "${pair%%:*}" "${pair#*:}" "$round_tag" || true
            done
        fi
    done
    if [ $compare = yes ] && [ "$rounds" != 1 ]; then
        heading "vmcust against Debian's cloud-init: $rounds rounds"
        for pair in $compare_pairs; do compare_rounds "${pair%%:*}"; done
    fi

    heading "summary ($((SECONDS - t_start)) s)"
    local bad=0
    for s in "${selection[@]}"; do
        if [ -s "$work/failed-$s" ]; then
            printf 'FAIL  %s\n' "$s"
            sed 's/^/        /' "$work/failed-$s"
            bad=$((bad + 1))
        else
            printf 'pass  %s\n' "$s"
        fi
    done
    [ $bad -eq 0 ]
}

main "$@"
exit
