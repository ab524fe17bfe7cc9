#!/usr/bin/env bash
# Fails when a binary needs a glibc newer than MAX (default 2.17): reads the versions of
# its dynamic symbols (objdump -T) and compares the highest GLIBC_x.y with MAX.
#   scripts/check-glibc.sh BINARY [MAX]
set -euo pipefail
bin=${1:?usage: check-glibc.sh BINARY [MAX]}
max=${2:-2.17}
[ -f "$bin" ] || { echo "check-glibc.sh: no binary at $bin; build it with scripts/build-portable.sh" >&2; exit 1; }
command -v objdump >/dev/null || { echo "check-glibc.sh: objdump missing; apt-get install binutils" >&2; exit 1; }
versions=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -u -V)
[ -n "$versions" ] || { echo "check-glibc.sh: $bin has no GLIBC symbol versions; is it a dynamic glibc binary?" >&2; exit 1; }
highest=$(echo "$versions" | tail -1)
if [ "$(printf '%s\n%s\n' "$highest" "$max" | sort -V | tail -1)" != "$max" ]; then
    echo "check-glibc.sh: $bin needs glibc $highest, above $max; these symbols are too new:" >&2
    for v in $versions; do
        if [ "$(printf '%s\n%s\n' "$v" "$max" | sort -V | tail -1)" != "$max" ]; then
            objdump -T "$bin" | grep -E "GLIBC_${v//./\\.}([) ]|$)" >&2 || true
        fi
    done
    exit 1
fi
echo "$bin: highest glibc symbol version $highest (<= $max)"
