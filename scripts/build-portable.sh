#!/usr/bin/env bash
# Builds the portable vmcust binary: x86_64, glibc >= 2.17 (RHEL/CentOS 7, SLES 12,
# Ubuntu 18.04 and everything newer), stripped, with cargo-zigbuild and zig from PyPI
# (pip package `ziglang`), which links against glibc 2.17's symbol versions. Then checks
# the result with scripts/check-glibc.sh.
#   scripts/build-portable.sh            -> target/pkg/vmcust
# Installs cargo-zigbuild and ziglang with pip when missing. docs/packaging.md.
set -euo pipefail
cd "$(dirname "$0")/.."

glibc=2.17
triple=x86_64-unknown-linux-gnu
target_dir=${CARGO_TARGET_DIR:-target}

step() { echo "== $*" >&2; }

if ! command -v cargo-zigbuild >/dev/null 2>&1 || ! python3 -m ziglang version >/dev/null 2>&1; then
    step "installing cargo-zigbuild and ziglang (pip)"
    python3 -m pip install --quiet cargo-zigbuild ziglang
fi

step "building vmcust for $triple with glibc $glibc symbols (release: LTO, one codegen unit; several minutes on 2 cores)"
start=$(date +%s)
cargo zigbuild --release --locked --target "$triple.$glibc" --bin vmcust
step "built in $(($(date +%s) - start)) s"

mkdir -p target/pkg
install -m 0755 "$target_dir/$triple/release/vmcust" target/pkg/vmcust
scripts/check-glibc.sh target/pkg/vmcust "$glibc"
size=$(stat -c %s target/pkg/vmcust)
step "target/pkg/vmcust: $((size / 1024)) KiB"
if [ "$size" -gt $((5 * 1024 * 1024)) ]; then
    echo "build-portable.sh: target/pkg/vmcust is $size bytes, over the 5 MiB budget; check [profile.release] in Cargo.toml" >&2
    exit 1
fi
