#!/usr/bin/env bash
# cloud-config parity: each document of the corpus (tests/data/cloud-config-parity/*.yaml,
# the corpus documents that `vmcust schema` accepts and that run in a chroot, and cloud-init's
# own examples that tests/vm/parity/upstream.txt marks `shown`) applied twice to the same
# Debian 12 image, once by Debian's own cloud-init 22.4 (`cloud-init modules`, every module
# a boot runs that a chroot can show, in cloud-init's order, in one process) and once by
# vmcust (`vmcust run --stage early`, then `late`, as a boot runs them); the users, groups,
# shadow fields (salt and date aside), sudoers rules, authorized_keys, written files
# (content, mode, owner), command effects and every other file either changed in the image
# are compared. Each document's accepted differences are listed, with their reason, in
# tests/vm/parity/differences.txt (and explained in docs/differences-from-cloud-init.md);
# any other difference fails.
#
# usage: tests/vm/cloud-config-parity.sh [DOC...]
# Environment: VMCUST_VM_CACHE (the image tarball), VMCUST_VM_WORK, VMCUST_VM_BINARY,
# VMCUST_VM_APT_SOURCES, as tests/vm/run.sh. Needs root (overlay mounts, chroot, and
# unshare: cloud-init's hostname and mount commands stay in their own namespaces).
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

# ca-certificates, locales, chrony and rsyslog: what ca_certs, locale, ntp and rsyslog act
# on, installed so that neither side reaches for the network to install them.
packages="systemd-sysv,udev,dbus,kmod,iproute2,procps,tzdata,e2fsprogs,less,passwd,sudo,openssh-server,cloud-init,ca-certificates,locales,chrony,rsyslog"

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

# The modules a cloud-init 22.4 boot runs whose effects a chroot shows (Debian's cloud.cfg
# lists, in their order). Left out: resolv_conf, yum_add_repo and zypper_add_repo (cloud-init
# and vmcust both run them only on the distributions they are for, not on Debian), and what acts on devices, the network, power or the console
# (seed_random, growpart, resizefs, disk_setup, grub_dpkg, snap, ssh_import_id, the package
# and configuration-management modules, disable_ec2_metadata, phone_home, keys_to_console,
# power_state_change...) and keyboard (22.4 sets it with localectl, which needs a running
# systemd-localed). scripts_user is run by the harness below.
cloud_init_modules="bootcmd write_files mounts set_hostname update_hostname update_etc_hosts ca_certs rsyslog users_groups ssh"
cloud_config_modules="locale set_passwords apt_pipelining apt_configure ntp timezone runcmd"
cloud_final_modules="write_files_deferred"

# The host name both sides are given by the instance metadata.
parity_host=parity-host

# by_cloud_init ROOT DOC: every module in one `cloud-init modules` process (its module
# list set to the one above: the same code path as a boot's config stage, with each
# module's own frequency on a fresh instance, and a few seconds instead of one Python
# start per module), in its own UTS and mount namespaces so that its `hostname` and
# `mount -a` change nothing of the build host.
by_cloud_init() {
    local root=$1 doc=$2 m
    {
        echo 'datasource_list: [ None ]'
        echo "datasource: {None: {metadata: {local-hostname: $parity_host, instance-id: iid-datasource-none}}}"
        echo 'resize_rootfs: false'
        echo 'growpart: {mode: "off"}'
        echo 'cloud_init_modules: []'
        echo 'cloud_final_modules: []'
        echo 'cloud_config_modules:'
        for m in $cloud_init_modules $cloud_config_modules $cloud_final_modules; do echo " - $m"; done
    } >"$root/etc/cloud/cloud.cfg.d/99-parity.cfg"
    cp "$doc" "$root/tmp/parity.yaml"
    for m in proc dev sys; do
        mount --bind "/$m" "$root/$m"
        mounted+=("$root/$m")
    done
    unshare --uts --mount --propagation private sh -c \
        'hostname "$1" && exec chroot "$2" cloud-init --file /tmp/parity.yaml modules --mode config' \
        sh "$parity_host" "$root" >>"$root/../cloud-init.out" 2>&1 ||
        echo "cloud-init modules exited $?" >>"$root/../cloud-init.out"
    # scripts_user: the harness does what it does (run-parts of the instance's scripts, in
    # order), as cloud-init's final stage would after the modules above.
    local s
    for s in "$root"/var/lib/cloud/instances/*/scripts/*; do
        [ -x "$s" ] || continue
        unshare --uts --mount --propagation private sh -c 'hostname "$1" && exec chroot "$2" "$3"' \
            sh "$parity_host" "$root" "${s#"$root"}" >>"$root/../cloud-init.out" 2>&1 ||
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
    printf 'instance-id: iid-datasource-none\nlocal-hostname: %s\n' "$parity_host" >"$host/guestinfo.metadata"
    # The image has cloud-init (for the other side): vmcust must apply it itself.
    mkdir -p "$root/etc/vmcust"
    printf '[user-data]\nhandler = native\n' >"$root/etc/vmcust/vmcust.conf"
    local stage
    for stage in early late; do
        unshare --uts --mount --propagation private sh -c 'hostname "$1" && shift && exec "$@"' \
            sh "$parity_host" "$binary" run --stage "$stage" --root "$root" --guestinfo-dir "$host" --force \
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
        changed "$root"
    } | sort
}

# What `changed` leaves out: each side's own records and logs, the files the lines above
# compare field by field, and the backups and locks of the shadow tools.
changed_noise='^(var/lib/cloud|var/log|run|var/cache|var/lib/vmcust|etc/vmcust|var/lib/systemd|var/lib/dpkg|var/lib/ucf|tmp/parity\.yaml|etc/cloud/cloud\.cfg\.d/99-parity\.cfg|etc/(passwd|group|shadow|gshadow|subuid|subgid)-|etc/(passwd|group|shadow|gshadow)$|etc/\.pwd\.lock|etc/sudoers\.d/|root/\.ssh/authorized_keys$|home/[^/]+/\.ssh/authorized_keys$|.*/__pycache__/)'

# changed ROOT: every other file the side made, changed or removed in the image (the
# overlay's upper directory): path, mode, owner and a hash of the content; the host keys
# ssh generates by name only (their content is random on both sides), /etc/hosts too (its
# entries are compared above; cloud-init's comment in it carries the time).
changed() {
    local upper=$1/../upper p
    (cd "$upper" && find . -mindepth 1 \( -type f -o -type l -o -type c \) -printf '%P\n') |
        { grep -v -E "$changed_noise" || true; } | while IFS= read -r p; do
            # A file copied up and put back as it was (a rolled-back change) is no change.
            if [ -f "$upper/$p" ] && [ ! -L "$upper/$p" ] && [ -f "$lower/$p" ] && [ ! -L "$lower/$p" ] &&
                [ "$(stat -c '%a %u:%g' "$upper/$p")" = "$(stat -c '%a %u:%g' "$lower/$p")" ] &&
                cmp -s "$upper/$p" "$lower/$p"; then
                continue
            fi
            if [ -L "$upper/$p" ]; then
                printf 'changed: /%s -> %s\n' "$p" "$(readlink "$upper/$p")"
            elif [ -c "$upper/$p" ]; then
                printf 'changed: /%s removed\n' "$p"
            elif [[ $p == etc/ssh/ssh_host_* || $p == etc/hosts ]]; then
                printf 'changed: /%s %s\n' "$p" "$(stat -c '%a %u:%g' "$upper/$p")"
            else
                printf 'changed: /%s %s %s\n' "$p" "$(stat -c '%a %u:%g' "$upper/$p")" "$(sha256sum <"$upper/$p" | cut -c1-16)"
            fi
        done
}

# upstream: cloud-init's own examples that tests/vm/parity/upstream.txt marks shown; the
# list must name every vendored example.
upstream() {
    local data=$repo/tests/data/cloud-init-upstream list=$here/parity/upstream.txt missing
    missing=$(comm -23 <(cd "$data" && find examples module-docs -type f \( -name 'example*.yaml' -o -name 'cloud-config*.txt' \) | sort) \
        <(grep -v -e '^#' -e '^$' "$list" | awk '{print $1}' | sort))
    [ -z "$missing" ] || die "tests/vm/parity/upstream.txt does not say whether these are shown: $missing"
    awk '!/^#/ && $2 == "shown" {print $1}' "$list" | sed "s|^|$data/|"
}

# doc_name DOC: the name results and accepted differences go by.
doc_name() {
    case $1 in
    */cloud-init-upstream/*)
        local rel=${1#*/cloud-init-upstream/}
        rel=${rel#module-docs/}
        rel=${rel%.yaml}
        rel=${rel%.txt}
        echo "upstream-${rel//\//-}"
        ;;
    *) basename "$1" .yaml ;;
    esac
}

# corpus: the parity documents, and the cloud-config corpus's documents that are valid and
# touch only what a chroot can show (no packages, time service, disks, swap files, power,
# host name, certificates: those are checked by the VM scenarios and tests/cc_apply_run.rs;
# a swap file would be made and swapon tried on the build host).
corpus() {
    local f
    for f in "$repo"/tests/data/cloud-config-parity/*.yaml "$repo"/tests/data/cloud-config/*.yaml; do
        "$binary" schema "$f" >/dev/null 2>&1 || continue
        grep -qE '^(packages|package_update|package_upgrade|apt_update|apt_upgrade|package_reboot_if_required|ntp|power_state|growpart|resize_rootfs|swap|ca_certs|ca-certs|hostname|fqdn|prefer_fqdn_over_hostname|manage_etc_hosts):' "$f" && continue
        echo "$f"
    done
    upstream
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
    if [ $# -gt 0 ]; then docs=("$@"); else
        upstream >/dev/null
        mapfile -t docs < <(corpus)
    fi
    local differences=$here/parity/differences.txt
    for doc in "${docs[@]}"; do
        name=$(doc_name "$doc")
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
        heading "parity: $(wc -l <"$failures_file") failure(s) in ${#docs[@]} documents (${SECONDS} s)"
        exit 1
    fi
    heading "parity: all ${#docs[@]} documents give what cloud-init gives (${SECONDS} s)"
}

main "$@"
