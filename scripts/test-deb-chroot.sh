#!/usr/bin/env bash
# Installs, upgrades and removes the vmcust .deb in a Debian chroot and checks each step:
# files, units enabled once (an administrator's disable survives the upgrade), the
# cloud-init stand-in and drop-in only without a real cloud-init (a dpkg trigger takes
# them away when a cloud-init package arrives and brings them back when it goes), the
# conffile kept across the upgrade, and nothing left after purge.
#   scripts/test-deb-chroot.sh OLD.deb NEW.deb
# Needs root and mmdebstrap (scripts/test-packages.txt). The chroot tarball is made once
# from this machine's apt sources and cached in /var/cache/vmcust-test. Every check
# either passes or fails; nothing is skipped. Ends with "N passed, N failed".
set -euo pipefail
old=$(realpath "${1:?usage: test-deb-chroot.sh OLD.deb NEW.deb}")
new=$(realpath "${2:?usage: test-deb-chroot.sh OLD.deb NEW.deb}")
cd "$(dirname "$0")/.."
repo=$(pwd)

[ "$(id -u)" = 0 ] || { echo "test-deb-chroot.sh: needs root (chroot, dpkg)" >&2; exit 1; }
command -v mmdebstrap >/dev/null || { echo "test-deb-chroot.sh: mmdebstrap missing; apt-get install mmdebstrap" >&2; exit 1; }

suite=${VMCUST_TEST_SUITE:-bookworm}
cache=/var/cache/vmcust-test
# man-db: `systemd-analyze verify` checks that each unit's man: links resolve. The name
# says what the tarball holds, so a cached one without man-db is not reused.
tarball=$cache/$suite-systemd-man-db.tar
# A directory by that name is what an earlier version of this script left (mmdebstrap
# picks its output format from the name, and "*.tmp" is a directory): make the tarball.
if [ -d "$tarball" ]; then rm -rf "$tarball"; fi
if [ ! -s "$tarball" ]; then
    mkdir -p "$cache"
    # The first apt sources file this machine has: a deb822 file on a current Debian
    # (often the only one), the one-line sources.list on older ones. Neither need exist.
    sources=
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
        if [ -s "$f" ]; then sources=$f; break; fi
    done
    [ -n "$sources" ] || { echo "test-deb-chroot.sh: no apt sources file in /etc/apt (sources.list.d/*.sources or sources.list)" >&2; exit 1; }
    echo "== making the $suite chroot tarball (once) from $sources"
    rm -rf "$tarball.tmp"
    # --format: the name ends in .tmp, from which mmdebstrap would choose a directory.
    mmdebstrap --variant=minbase --format=tar --include=systemd,man-db "$suite" "$tarball.tmp" "$sources"
    mv "$tarball.tmp" "$tarball"
fi

work=$(mktemp -d /tmp/vmcust-chroot.XXXXXX)
cleanup() {
    umount "$work/root/proc" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
root=$work/root
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
mount -t proc proc "$root/proc"
cp "$old" "$root/tmp/old.deb"
cp "$new" "$root/tmp/new.deb"

pass=0
fail=0
check() { # check NAME COMMAND...: runs COMMAND on the host (paths under $root)
    local name=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
        echo "ok   $name"
    else
        fail=$((fail + 1))
        echo "FAIL $name"
    fi
}
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
snapshot() {
    (cd "$root" && find . -xdev \( -path ./proc -o -path ./var/lib/dpkg -o -path ./var/cache \
        -o -path ./var/log -o -path ./tmp -o -path ./run -o -path ./var/lib/apt \
        -o -path ./etc/systemd/system \) -prune -o -print | sort)
}
enabled() { [ -L "$root/etc/systemd/system/multi-user.target.wants/$1" ]; }
is_link_to_vmcust() { [ "$(readlink "$root/usr/bin/cloud-init")" = vmcust ]; }

# A template's machine-id and host key, so the install-time record can be checked.
echo 0123456789abcdef0123456789abcdef >"$root/etc/machine-id"
before=$(snapshot)

echo "== install $(basename "$old")"
check "dpkg -i old" in_root dpkg -i /tmp/old.deb
check "binary runs in the chroot" in_root /usr/bin/vmcust --version
check "units in /usr/lib/systemd/system" test -f "$root/usr/lib/systemd/system/vmcust-early.service" -a -f "$root/usr/lib/systemd/system/vmcust-late.service"
check "preset file" test -f "$root/usr/lib/systemd/system-preset/80-vmcust.preset"
check "early unit enabled" enabled vmcust-early.service
check "late unit enabled" enabled vmcust-late.service
check "cloud-init stand-in" is_link_to_vmcust
check "stand-in answers as cloud-init" in_root sh -c '/usr/bin/cloud-init --version | grep -q "standing in"'
check "drop-in installed" grep -q "Installed by vmcust" "$root/etc/cloud/cloud.cfg.d/99-vmcust.cfg"
check "settings conffile" test -f "$root/etc/vmcust/vmcust.conf"
man_page() { test -f "$root/usr/share/man/$1.gz" -o -f "$root/usr/share/man/$1"; }
for page in man1/vmcust.1 man1/vmcust-clean.1 man5/vmcust.conf.5 man8/vmcust-cloud-init.8; do
    check "man page $page" man_page "$page"
done
check "man finds vmcust.conf(5)" in_root man -w 5 vmcust.conf
# Every unit loads, and its man: links resolve to installed pages (systemd-analyze runs
# man for each; a link to a page that is not shipped fails here).
check "units pass systemd-analyze verify" in_root systemd-analyze verify --man=yes \
    /usr/lib/systemd/system/vmcust-early.service /usr/lib/systemd/system/vmcust-late.service \
    /usr/lib/systemd/system/vmcust-imc.path /usr/lib/systemd/system/vmcust-imc.service
check "bash completion" test -f "$root/usr/share/bash-completion/completions/vmcust"
check "docs" test -f "$root/usr/share/doc/vmcust/packaging.md"
check "template machine-id recorded" grep -q 0123456789abcdef "$root/var/lib/vmcust/hygiene/template-machine-id"
check "settings check is clean" in_root vmcust settings check

echo "== administrator changes: late unit disabled, settings edited"
in_root systemctl disable vmcust-late.service >/dev/null 2>&1
echo "# local edit" >>"$root/etc/vmcust/vmcust.conf"

echo "== upgrade to $(basename "$new")"
check "dpkg -i new (upgrade)" in_root sh -c 'dpkg -i --force-confold /tmp/new.deb'
check "version upgraded" in_root sh -c "dpkg-query -W -f='\${Version}' vmcust | grep -qx '$(dpkg-deb -f "$new" Version)'"
check "early unit still enabled" enabled vmcust-early.service
check "disabled late unit stays disabled" bash -c "! [ -L '$root/etc/systemd/system/multi-user.target.wants/vmcust-late.service' ]"
check "local settings edit kept" grep -q "# local edit" "$root/etc/vmcust/vmcust.conf"
check "stand-in still there" is_link_to_vmcust

echo "== a real cloud-init arrives (a package owning /usr/bin/cloud-init)"
pkg=$work/cloud-init-fake
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin"
printf 'Package: cloud-init\nVersion: 99.0\nArchitecture: all\nMaintainer: test <test@localhost>\nDescription: stand-in for a real cloud-init in the package test\n' >"$pkg/DEBIAN/control"
printf '#!/bin/sh\necho "cloud-init 99.0"\n' >"$pkg/usr/bin/cloud-init"
chmod 755 "$pkg/usr/bin/cloud-init"
dpkg-deb --root-owner-group -b "$pkg" "$root/tmp/cloud-init.deb" >/dev/null
check "dpkg -i cloud-init" in_root dpkg -i /tmp/cloud-init.deb
check "real cloud-init in place" bash -c "[ ! -L '$root/usr/bin/cloud-init' ] && grep -q 99.0 '$root/usr/bin/cloud-init'"
check "trigger removed the drop-in" test ! -e "$root/etc/cloud/cloud.cfg.d/99-vmcust.cfg"
check "dpkg -r cloud-init" in_root dpkg -r cloud-init
check "trigger brought the stand-in back" is_link_to_vmcust
check "and the drop-in" test -f "$root/etc/cloud/cloud.cfg.d/99-vmcust.cfg"

echo "== remove"
check "dpkg -r vmcust" in_root dpkg -r vmcust
check "binary gone" test ! -e "$root/usr/bin/vmcust"
check "stand-in gone" bash -c "! [ -L '$root/usr/bin/cloud-init' ] && ! [ -e '$root/usr/bin/cloud-init' ]"
check "drop-in gone" test ! -e "$root/etc/cloud/cloud.cfg.d/99-vmcust.cfg"
check "units gone" test ! -e "$root/usr/lib/systemd/system/vmcust-early.service"
check "no enablement links left" bash -c "! ls '$root'/etc/systemd/system/*/vmcust-* >/dev/null 2>&1"
check "conffile kept after remove" test -f "$root/etc/vmcust/vmcust.conf"
check "dpkg -P vmcust" in_root dpkg -P vmcust
check "conffile gone after purge" test ! -e "$root/etc/vmcust/vmcust.conf"
check "state gone after purge" test ! -e "$root/var/lib/vmcust"
rmdir "$root/etc/cloud/cloud.cfg.d" "$root/etc/cloud" 2>/dev/null || true
after=$(snapshot)
leftovers=$(comm -13 <(echo "$before") <(echo "$after"))
check "nothing left behind${leftovers:+: $leftovers}" test -z "$leftovers"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
