#!/usr/bin/env bash
# Fails when a binary would not start on the oldest supported systems (glibc MAX, default
# 2.17: RHEL/CentOS 7, SLES 12, Ubuntu 18.04).
# - A static binary (no program interpreter, no NEEDED library; what build-portable.sh
#   makes) needs no glibc at all. It must not use the parts of glibc that load shared
#   libraries at run time (NSS modules: user, group and host lookups), and its ELF ABI tag
#   must accept RHEL 7's kernel (3.10).
# - A dynamic binary must need no GLIBC_x.y symbol version above MAX (objdump -T).
#   scripts/check-glibc.sh BINARY [MAX]
set -euo pipefail
bin=${1:?usage: check-glibc.sh BINARY [MAX]}
max=${2:-2.17}
oldest_kernel=3.10
[ -f "$bin" ] || { echo "check-glibc.sh: no binary at $bin; build it with scripts/build-portable.sh" >&2; exit 1; }
command -v objdump >/dev/null || { echo "check-glibc.sh: objdump missing; apt-get install binutils" >&2; exit 1; }

# version_le A B: A <= B in version order.
version_le() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" = "$2" ]; }

# Read whole before matching: `objdump | grep -q` under pipefail fails whenever grep
# stops reading first (objdump dies of SIGPIPE), which made a dynamic binary look static.
headers=$(objdump -p "$bin")
if ! grep -Eq '^ *(INTERP|NEEDED) ' <<<"$headers"; then
    if grep -aq 'libnss_' "$bin"; then
        echo "check-glibc.sh: $bin is static but uses glibc's NSS (it would load libnss_*.so of the running system's glibc); read /etc/passwd and friends directly instead" >&2
        exit 1
    fi
    abi=$(readelf -n "$bin" | sed -n 's/.*OS: Linux, ABI: \([0-9.]*\).*/\1/p')
    abi=${abi%%$'\n'*}
    [ -n "$abi" ] || { echo "check-glibc.sh: $bin has no ELF ABI tag" >&2; exit 1; }
    if ! version_le "$abi" "$oldest_kernel"; then
        echo "check-glibc.sh: $bin needs Linux $abi, above $oldest_kernel" >&2
        exit 1
    fi
    echo "$bin: static, needs no glibc; Linux $abi or later"
    exit 0
fi

versions=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -u -V)
[ -n "$versions" ] || { echo "check-glibc.sh: $bin has no GLIBC symbol versions; is it a dynamic glibc binary?" >&2; exit 1; }
highest=$(echo "$versions" | tail -1)
if ! version_le "$highest" "$max"; then
    echo "check-glibc.sh: $bin needs glibc $highest, above $max; these symbols are too new:" >&2
    for v in $versions; do
        if ! version_le "$v" "$max"; then
            objdump -T "$bin" | grep -E "GLIBC_${v//./\\.}([) ]|$)" >&2 || true
        fi
    done
    exit 1
fi
echo "$bin: highest glibc symbol version $highest (<= $max)"
