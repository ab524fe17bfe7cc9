#!/bin/sh
# Installs vmcust on a system or into an image: the binary, the two systemd units
# (enabled), an example settings file, the man pages, and, only when no real cloud-init is present,
# /usr/bin/cloud-init -> vmcust plus a cloud.cfg.d drop-in so open-vm-tools hands the
# VMware customization to vmcust. See docs/boot.md. The .deb and .rpm (docs/packaging.md)
# are the way to install on a running system; this script is for images and checkouts.
#
# The binary is the portable one (target/pkg/vmcust, built by scripts/build-portable.sh
# when missing), which starts on every supported distribution. A binary that needs a
# newer C library than the oldest of them (glibc 2.17: RHEL/CentOS 7, SLES 12, Ubuntu
# 18.04; scripts/check-glibc.sh) is refused, and nothing is installed: a template
# would otherwise ship a vmcust that cannot start on its clones.
#
# usage: install.sh [--root DIR] [--binary PATH] [--allow-newer-glibc] [--uninstall]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
root=/
binary=
uninstall=no
any_glibc=no

usage() {
    echo "usage: install.sh [--root DIR] [--binary PATH] [--allow-newer-glibc] [--uninstall]"
    echo "  --root DIR           install into the image mounted at DIR (default /)"
    echo "  --binary PATH        the vmcust binary (default target/pkg/vmcust of this checkout,"
    echo "                       built by scripts/build-portable.sh when missing)"
    echo "  --allow-newer-glibc  install a binary that needs a glibc newer than 2.17 (it will"
    echo "                       not start on RHEL/CentOS 7, SLES 12, Ubuntu 18.04, and a build"
    echo "                       on a new system not even on RHEL 8 or Ubuntu 20.04)"
    echo "  --uninstall          remove what install.sh installed (keeps /etc/vmcust/vmcust.conf)"
}

die() {
    echo "install.sh: $*" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case "$1" in
    --root)
        [ $# -ge 2 ] || die "--root needs a directory"
        root=$2
        shift 2
        ;;
    --binary)
        [ $# -ge 2 ] || die "--binary needs a path"
        binary=$2
        shift 2
        ;;
    --allow-newer-glibc)
        any_glibc=yes
        shift
        ;;
    --uninstall)
        uninstall=yes
        shift
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        usage >&2
        die "unknown argument $1"
        ;;
    esac
done

[ -d "$root" ] || die "root $root is not a directory; create it or pass the image's mount point"
root=$(cd "$root" && pwd)
if [ "$root" != / ]; then root_arg=" --root $root"; fi
# Paths below are written as "$r/usr/..."; for / that is "/usr/...".
if [ "$root" = / ]; then r=; else r=$root; fi

unitdir=/etc/systemd/system
wantsdir=$unitdir/multi-user.target.wants
units="vmcust-early.service vmcust-late.service vmcust-imc.path"
dropin=/etc/cloud/cloud.cfg.d/99-vmcust.cfg
marker=vmcust-cloud-init-persona-c3a1f7

# Whether /usr/bin/cloud-init in the root is vmcust: a symlink whose target is named
# vmcust, or a copy of the vmcust binary (it carries the stand-in marker, coexist::STAND_IN_MARKER).
cloud_init_is_vmcust() {
    ci=$r/usr/bin/cloud-init
    if [ -L "$ci" ]; then
        target=$(readlink "$ci")
        [ "$(basename "$target")" = vmcust ] && return 0
    fi
    [ -f "$ci" ] && grep -q "$marker" "$ci" 2>/dev/null && return 0
    return 1
}

# A real cloud-init: anything at /usr/bin/cloud-init (even a dangling symlink) that is
# not vmcust.
real_cloud_init() {
    ci=$r/usr/bin/cloud-init
    { [ -e "$ci" ] || [ -L "$ci" ]; } || return 1
    cloud_init_is_vmcust && return 1
    return 0
}

# Tells a running systemd about changed units (not when installing into an image).
reload_systemd() {
    if [ -z "$r" ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
        systemctl daemon-reload || echo "install.sh: systemctl daemon-reload failed; run it by hand" >&2
    fi
}

if [ "$uninstall" = yes ]; then
    for unit in $units vmcust-imc.service; do
        rm -f "$r$wantsdir/$unit" "$r$unitdir/$unit"
    done
    if cloud_init_is_vmcust; then
        rm -f "$r/usr/bin/cloud-init"
        echo "removed /usr/bin/cloud-init (vmcust's stand-in)"
    fi
    if [ -f "$r$dropin" ] && grep -q "Installed by vmcust" "$r$dropin"; then
        rm -f "$r$dropin"
    fi
    rm -f "$r/usr/bin/vmcust" "$r/etc/vmcust/vmcust.conf.example" "$r/usr/share/doc/vmcust/boot.md"
    rmdir "$r/usr/share/doc/vmcust" 2>/dev/null || true
    # The pages install.sh installed (uncompressed; a package's are compressed).
    for page in "$r"/usr/share/man/man[1-9]/vmcust.[1-9] "$r"/usr/share/man/man[1-9]/vmcust[.-]*.[1-9]; do
        [ -f "$page" ] && rm -f "$page"
    done
    rmdir "$r/etc/vmcust" 2>/dev/null || true
    reload_systemd
    echo "vmcust removed from $root (kept: /etc/vmcust/vmcust.conf if any, /var/lib/vmcust)"
    exit 0
fi

portable=$repo/target/pkg/vmcust
if [ -z "$binary" ]; then
    binary=$portable
    if [ ! -f "$binary" ]; then
        echo "install.sh: no portable binary at $binary yet; building it (scripts/build-portable.sh, a few minutes)" >&2
        "$here/build-portable.sh" >&2 || die "scripts/build-portable.sh failed; fix the build and run install.sh again"
    elif [ -n "$(find "$repo/src" "$repo/imc/src" "$repo/ovf/src" "$repo/Cargo.toml" "$repo/Cargo.lock" -newer "$binary" 2>/dev/null | head -1)" ]; then
        echo "install.sh: note: $binary is older than the sources; run scripts/build-portable.sh to install your changes" >&2
    fi
fi
[ -f "$binary" ] && [ -x "$binary" ] || die "no vmcust binary at $binary; build it with scripts/build-portable.sh (it makes target/pkg/vmcust) or pass --binary PATH"
# The little-endian unsigned number of SIZE bytes at OFFSET of the file $elf (od and shell
# arithmetic only: a minimal template has no binutils, and maybe no python).
le() {
    n=0
    m=1
    for b in $(od -An -v -t u1 -j "$1" -N "$2" "$elf"); do
        n=$((n + b * m))
        m=$((m * 256))
    done
    echo "$n"
}

# What the ELF file $1 needs to start: `static` (no program interpreter and no NEEDED
# library: no glibc at all), `dynamic`, or `unknown` (not a little-endian ELF file). Read
# from the ELF header, the program headers (PT_INTERP, PT_DYNAMIC) and the dynamic
# section (DT_NEEDED), with bounded loops.
elf_kind() {
    elf=$1
    set -- $(od -An -v -t u1 -N 6 "$elf")
    [ "$#" -eq 6 ] && [ "$1 $2 $3 $4" = "127 69 76 70" ] && [ "$6" = 1 ] || {
        echo unknown
        return
    }
    case $5 in
    2) phoff=$(le 32 8) phentsize=$(le 54 2) phnum=$(le 56 2) word=8 ;;
    1) phoff=$(le 28 4) phentsize=$(le 42 2) phnum=$(le 44 2) word=4 ;;
    *)
        echo unknown
        return
        ;;
    esac
    [ "$phnum" -le 64 ] || phnum=64
    dyn_off=
    i=0
    while [ "$i" -lt "$phnum" ]; do
        ph=$((phoff + i * phentsize))
        case $(le "$ph" 4) in
        3) # PT_INTERP
            echo dynamic
            return
            ;;
        2) # PT_DYNAMIC: p_offset, p_filesz
            dyn_off=$(le $((ph + word)) "$word")
            dyn_size=$(le $((ph + 4 * word)) "$word")
            ;;
        esac
        i=$((i + 1))
    done
    if [ -n "$dyn_off" ]; then
        # Entries of two words (tag, value); DT_NULL (0) ends them, DT_NEEDED is 1.
        count=$((dyn_size / (2 * word)))
        [ "$count" -le 1024 ] || count=1024
        i=0
        while [ "$i" -lt "$count" ]; do
            case $(le $((dyn_off + i * 2 * word)) "$word") in
            0) break ;;
            1)
                echo dynamic
                return
                ;;
            esac
            i=$((i + 1))
        done
    fi
    echo static
}

# Refused before anything is installed: the most common mistake is `cargo build
# --release` on a new system and installing target/release/vmcust, which needs its glibc.
if [ "$any_glibc" = no ] && ! { command -v bash && command -v objdump; } >/dev/null 2>&1; then
    # No binutils (a minimal template): a static binary, like the portable one, is
    # recognised from its ELF headers; a dynamic one cannot be checked.
    case $(elf_kind "$binary") in
    static)
        if grep -aq 'libnss_' "$binary"; then
            die "refusing to install $binary: it is static but uses glibc's NSS (it would load the running system's libnss_*.so); build it with scripts/build-portable.sh"
        fi
        echo "install.sh: $binary is static (no program interpreter, no needed library): it needs no glibc (checked from its ELF headers: objdump is not installed, so its ELF ABI tag was not checked)" >&2
        ;;
    dynamic)
        die "cannot check which C library $binary needs: it is dynamically linked, and reading its glibc symbol versions needs bash and objdump (apt-get install binutils, dnf install binutils); install the portable build (scripts/build-portable.sh), or pass --allow-newer-glibc"
        ;;
    *)
        die "$binary is not a little-endian ELF executable; pass the vmcust binary built for this system (scripts/build-portable.sh)"
        ;;
    esac
elif [ "$any_glibc" = no ]; then
    if ! why=$(bash "$here/check-glibc.sh" "$binary" 2>&1 >/dev/null); then
        die "refusing to install $binary: it would not start on the oldest supported distributions (RHEL/CentOS 7, SLES 12, Ubuntu 18.04): $(printf '%s\n' "$why" | head -1 | sed -e 's/^check-glibc.sh: //' -e 's/; these symbols are too new:$//').
Run instead:  scripts/build-portable.sh && scripts/install.sh${root_arg:-}
(or pass --allow-newer-glibc to install it for systems as new as the one it was built on)"
    fi
fi
for f in "$repo/systemd/vmcust-early.service" "$repo/systemd/vmcust-late.service" \
    "$repo/systemd/vmcust-imc.path" "$repo/systemd/vmcust-imc.service" \
    "$repo/systemd/99-vmcust.cfg" "$repo/scripts/vmcust.conf.example" "$repo/docs/boot.md"; do
    [ -f "$f" ] || die "missing $f; run install.sh from a complete vmcust checkout"
done

# Decide before installing anything: our own /usr/bin/vmcust must not change the answer.
if real_cloud_init; then has_real=yes; else has_real=no; fi

# The man pages the units' Documentation= names, generated by the binary itself (as
# scripts/package.sh does). A binary that cannot run here (an image of another
# architecture) installs without them, with a note.
mandir=$(mktemp -d)
trap 'rm -rf "$mandir"' EXIT
if ! "$binary" generate man "$mandir" >/dev/null 2>&1; then
    echo "install.sh: could not generate the man pages with $binary (another architecture?); installing without them" >&2
fi

install -D -m 0755 "$binary" "$r/usr/bin/vmcust"
for unit in $units; do
    install -D -m 0644 "$repo/systemd/$unit" "$r$unitdir/$unit"
    # Enabled by hand (what `systemctl enable` does for WantedBy=multi-user.target), so
    # it works the same in an image with no systemd running.
    mkdir -p "$r$wantsdir"
    ln -sfn "$unitdir/$unit" "$r$wantsdir/$unit"
done
# Started by vmcust-imc.path, never enabled by itself.
install -D -m 0644 "$repo/systemd/vmcust-imc.service" "$r$unitdir/vmcust-imc.service"
install -D -m 0644 "$repo/scripts/vmcust.conf.example" "$r/etc/vmcust/vmcust.conf.example"
# The units' Documentation= names it too.
install -D -m 0644 "$repo/docs/boot.md" "$r/usr/share/doc/vmcust/boot.md"
pages=0
for page in "$mandir"/*; do
    [ -f "$page" ] || continue
    name=$(basename "$page")
    install -D -m 0644 "$page" "$r/usr/share/man/man${name##*.}/$name"
    pages=$((pages + 1))
done

if [ "$has_real" = yes ]; then
    echo "a real cloud-init is installed at /usr/bin/cloud-init: not installing vmcust as cloud-init"
    echo "or the $dropin drop-in; when cloud-init is configured for VMware customization"
    echo "(disable_vmware_customization: false), vmcust steps aside and leaves the spec to it;"
    echo "set [cloud-init] step_aside = false in /etc/vmcust/vmcust.conf to change that"
    # A drop-in left from an install without cloud-init would now switch on cloud-init's
    # VMware customization behind the administrator's back.
    if [ -f "$r$dropin" ] && grep -q "Installed by vmcust" "$r$dropin"; then
        rm -f "$r$dropin"
        echo "removed vmcust's earlier $dropin"
    fi
else
    mkdir -p "$r/usr/bin"
    ln -sfn vmcust "$r/usr/bin/cloud-init"
    install -D -m 0644 "$repo/systemd/99-vmcust.cfg" "$r$dropin"
    echo "no real cloud-init: installed /usr/bin/cloud-init -> vmcust and $dropin,"
    echo "so open-vm-tools hands the VMware customization to vmcust"
fi
# The root vmcust is installed into is the template: record its machine-id and SSH host
# key types so clones are recognised (docs/boot.md, "Clone hygiene"). The binary runs on
# this machine; for an image of another architecture run `vmcust clean --record-only`
# in the image later.
if ! "$r/usr/bin/vmcust" clean --record-only --root "$root" >/dev/null 2>&1; then
    echo "install.sh: could not record the template's identity; run \`vmcust clean --record-only\` in the image" >&2
fi
reload_systemd
echo "vmcust installed into $root (units enabled: $units; $pages man pages)"
