#!/usr/bin/env bash
# cloud-config parity: each document of the corpus (tests/data/cloud-config-parity/*.yaml, and the corpus documents that
# `vmcust schema` accepts and that runs in a chroot) applied twice to the same Debian 12
# image, once by Debian's own cloud-init 22.4 (`cloud-init single`, module by module, in
# cloud-init's order) and once by vmcust (`vmcust run --stage early`, then `late`, as a
# boot runs them); the users, groups, shadow fields (salt and date aside), sudoers rules,
# authorized_keys, written files (content, mode, owner) and command effects of the two
# are compared. Each document's accepted differences are listed, with their reason, in
# tests/vm/parity/differences.txt (and explained in docs/differences-from-cloud-init.md);
# any other difference fails.
#
# usage: tests/vm/cloud-config-parity.sh [DOC.yaml...]
# Environment: VMCUST_VM_CACHE (the image tarball), VMCUST_VM_WORK, VMCUST_VM_BINARY,
# VMCUST_VM_APT_SOURCES, as tests/vm/run.sh. Needs root (overlay mounts, chroot).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${VMCUST_VM_CACHE:-$repo/target/vm-cache}
work=${VMCUST_VM_WORK:-$repo/target/vm-work}/parity
binary=${VMCUST_VM_BINARY:-$repo/target/debug/vmcust}
suite=bookworm
failures_file=$work/failures
scn_dir=$work
# shellcheck source=tests/vm/lib.sh
. "$here/lib.sh"

[ "$(id -u)" = 0 ] || die "needs root (overlay mounts and chroot)"
[ -x "$binary" ] || die "no vmcust binary at $binary (cargo build, or set VMCUST_VM_BINARY)"
for tool in mmdebstrap sha256sum; do
    command -v "$tool" >/dev/null || die "$tool is missing: apt-get install mmdebstrap coreutils"
done

packages="systemd-sysv,udev,dbus,kmod,iproute2,procps,tzdata,e2fsprogs,less,passwd,sudo,openssh-server,cloud-init"

# The image, built once and cached under a key of the suite, packages and apt sources.
tarball() {
    local sources key t
    sources=$(apt_sources)
    key=$({ echo "$suite $packages"; cat "$sources"; } | sha256sum | cut -c1-12)
    t=$cache/parity-$key.tar
    if [ ! -f "$t" ]; then
        mkdir -p "$cache"
        note "building the parity image with mmdebstrap (cached as $(basename "$t"))"
        mmdebstrap --variant=minbase --format=tar --include="$packages" \
            --aptopt='Apt::Install-Recommends "false"' \
            "$suite" "$t.tmp" "$sources" >"$cache/mmdebstrap-parity.log" 2>&1 ||
            die "mmdebstrap failed; see $cache/mmdebstrap-parity.log"
        mv "$t.tmp" "$t"
    fi
    echo "$t"
}

mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT

# overlay NAME: a fresh writable copy of the image at $work/NAME/root.
overlay() {
    local d=$work/$1
    rm -rf "$d"
    mkdir -p "$d/upper" "$d/work" "$d/root"
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$d/upper,workdir=$d/work" "$d/root"
    mounted+=("$d/root")
    echo "$d/root"
}

# The modules cloud-init 22.4 runs for the parity keys, in its cloud.cfg order.
cloud_init_modules="bootcmd write_files update_etc_hosts users_groups ssh set_passwords timezone runcmd write_files_deferred"

# by_cloud_init ROOT DOC
by_cloud_init() {
    local root=$1 doc=$2 m
    cat >"$root/etc/cloud/cloud.cfg.d/99-parity.cfg" <<'EOF'
datasource_list: [ None ]
resize_rootfs: false
growpart: {mode: "off"}
EOF
    cp "$doc" "$root/tmp/parity.yaml"
    for m in proc dev sys; do
        mount --bind "/$m" "$root/$m"
        mounted+=("$root/$m")
    done
    for m in $cloud_init_modules; do
        chroot "$root" cloud-init --file /tmp/parity.yaml single --name "$m" --frequency always \
            >>"$root/../cloud-init.out" 2>&1 || echo "module $m failed" >>"$root/../cloud-init.out"
    done
    # scripts_user: `single` cannot run it (its start-up drops the instance link it reads),
    # so the harness does what it does: run-parts of the instance's scripts, in order.
    local s
    for s in "$root"/var/lib/cloud/instances/*/scripts/*; do
        [ -x "$s" ] || continue
        chroot "$root" "${s#"$root"}" >>"$root/../cloud-init.out" 2>&1 ||
            echo "script $s failed" >>"$root/../cloud-init.out"
    done
    for m in sys dev proc; do umount -l "$root/$m"; done
    rm -f "$root/tmp/parity.yaml" "$root/etc/cloud/cloud.cfg.d/99-parity.cfg"
}

# by_vmcust ROOT DOC: the document as guestinfo user-data, both boot stages.
by_vmcust() {
    local root=$1 doc=$2 host
    host=$root/../host
    mkdir -p "$host"
    cp "$doc" "$host/guestinfo.userdata"
    printf 'instance-id: iid-datasource-none\n' >"$host/guestinfo.metadata"
    # The image has cloud-init (for the other side): vmcust must apply it itself.
    mkdir -p "$root/etc/vmcust"
    printf '[user-data]\nhandler = native\n' >"$root/etc/vmcust/vmcust.conf"
    local stage
    for stage in early late; do
        "$binary" run --stage "$stage" --root "$root" --guestinfo-dir "$host" --force \
            >>"$root/../vmcust.out" 2>&1 || echo "stage $stage exited $?" >>"$root/../vmcust.out"
    done
}

# snapshot ROOT DOC: what the comparison looks at, as sorted text lines.
snapshot() {
    local root=$1 doc=$2
    {
        sed 's/^/passwd: /' "$root/etc/passwd"
        sed 's/^/group: /' "$root/etc/group"
        # Shadow: the salt and hash of a generated password and the change date differ by
        # design; a hash given in the document must be kept as it is.
        awk -F: -v given="$({ grep -o '\$[0-9a-z]*\$[^ "'"'"']*' "$doc" || true; } | tr '\n' ' ')" '{
            h = $2; lock = ""
            if (substr(h, 1, 1) == "!") { lock = "!"; h = substr(h, 2) }
            if (h ~ /^\$/ && index(" " given " ", " " h " ") == 0) h = "<generated hash>"
            $3 = "<date>"
            print "shadow: " $1 ":" lock h ":" $3 ":" $4 ":" $5 ":" $6 ":" $7 ":" $8
        }' "$root/etc/shadow"
        sed 's/^/gshadow: /' "$root/etc/gshadow"
        local f
        for f in "$root"/etc/sudoers.d/*; do
            [ -f "$f" ] || continue
            { grep -v -e '^#' -e '^$' "$f" || true; } | sed "s|^|sudoers: |"
        done
        for f in "$root"/root/.ssh/authorized_keys "$root"/home/*/.ssh/authorized_keys; do
            [ -f "$f" ] || continue
            printf 'keys: %s %s\n' "${f#"$root"}" "$(stat -c '%a %u:%g' "$f")"
            sed "s|^|keys: ${f#"$root"}: |" "$f"
        done
        for f in "$root"/home/*; do
            [ -d "$f" ] && printf 'home: %s %s\n' "${f#"$root"}" "$(stat -c '%a %u:%g' "$f")"
        done
        # Files the document writes, and the marker files its commands make.
        local p
        for p in $({ grep -E '^\s*-?\s*path:' "$doc" || true; } | sed -E 's/.*path:\s*//; s/["'"'"']//g') \
            $(cd "$root" && ls -d parity-* root/parity-* tmp/parity-* 2>/dev/null | sed 's|^|/|'); do
            if [ -f "$root$p" ]; then
                printf 'file: %s %s %s\n' "$p" "$(stat -c '%a %u:%g' "$root$p")" "$(sha256sum <"$root$p" | cut -c1-16)"
            else
                printf 'file: %s absent\n' "$p"
            fi
        done
        [ -f "$root/etc/timezone" ] && printf 'timezone: %s\n' "$(cat "$root/etc/timezone")"
        [ -L "$root/etc/localtime" ] && printf 'localtime: %s\n' "$(readlink "$root/etc/localtime")"
        [ -f "$root/etc/hosts" ] && { grep -v -e '^#' -e '^$' "$root/etc/hosts" || true; } | sed 's/^/hosts: /'
        # ssh_pwauth: what sshd is told about passwords, wherever it is said.
        { grep -h -i '^\s*PasswordAuthentication' "$root"/etc/ssh/sshd_config "$root"/etc/ssh/sshd_config.d/* 2>/dev/null || true; } |
            sed 's/^\s*/sshd: /'
    } | sort
}

# corpus: the parity documents, and the cloud-config corpus's documents that are valid and
# touch only what a chroot can show (no packages, time service, disks, power, host name,
# certificates: those are checked by the VM scenarios and tests/cc_apply_run.rs).
corpus() {
    local f
    for f in "$repo"/tests/data/cloud-config-parity/*.yaml "$repo"/tests/data/cloud-config/*.yaml; do
        "$binary" schema "$f" >/dev/null 2>&1 || continue
        grep -qE '^(packages|package_update|package_upgrade|apt_update|apt_upgrade|package_reboot_if_required|ntp|power_state|growpart|resize_rootfs|ca_certs|ca-certs|hostname|fqdn|prefer_fqdn_over_hostname|manage_etc_hosts):' "$f" && continue
        echo "$f"
    done
}

main() {
    mkdir -p "$work"
    : >"$failures_file"
    local t docs doc name
    t=$(tarball)
    lower=$work/lower
    if [ ! -f "$lower/.from-$(basename "$t")" ]; then
        rm -rf "$lower"
        mkdir -p "$lower"
        tar -xf "$t" -C "$lower"
        touch "$lower/.from-$(basename "$t")"
    fi
    if [ $# -gt 0 ]; then docs=("$@"); else mapfile -t docs < <(corpus); fi
    local differences=$here/parity/differences.txt
    for doc in "${docs[@]}"; do
        name=$(basename "$doc" .yaml)
        heading "parity: $name"
        local a b
        a=$(overlay "$name-cloud-init")
        by_cloud_init "$a" "$doc"
        snapshot "$a" "$doc" >"$work/$name.cloud-init.txt"
        b=$(overlay "$name-vmcust")
        by_vmcust "$b" "$doc"
        snapshot "$b" "$doc" >"$work/$name.vmcust.txt"
        diff "$work/$name.cloud-init.txt" "$work/$name.vmcust.txt" | grep '^[<>]' >"$work/$name.diff" || true
        # Accepted differences: lines `NAME: < line` or `NAME: > line` (exact), each with
        # its reason in a comment above it.
        grep -E "^$name: " "$differences" 2>/dev/null | sed "s/^$name: //" | sort >"$work/$name.accepted" || true
        # `*: PATTERN` lines: an extended regular expression accepted for every document.
        local unexpected
        unexpected=$(sort "$work/$name.diff" | comm -23 - "$work/$name.accepted" |
            { grep -v -E -f <(sed -n 's/^\*: //p' "$differences") || true; })
        if [ -z "$unexpected" ]; then
            pass "$name: the same as cloud-init ($(wc -l <"$work/$name.accepted") documented difference(s))"
        else
            fail "$name: differs from cloud-init:"
            printf '%s\n' "$unexpected" | sed 's/^/         /' >&2
        fi
        local stale
        stale=$(sort "$work/$name.diff" | comm -13 - "$work/$name.accepted")
        [ -z "$stale" ] || fail "$name: documented differences that no longer happen: $stale"
        umount -l "$a" "$b"
    done
    if [ -s "$failures_file" ]; then
        heading "parity: $(wc -l <"$failures_file") failure(s)"
        exit 1
    fi
    heading "parity: every document gives what cloud-init gives"
}

main "$@"
