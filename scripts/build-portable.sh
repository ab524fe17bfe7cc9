#!/usr/bin/env bash
# Builds the portable vmcust binary: x86_64, statically linked against this machine's
# glibc (a static-pie: no dynamic loader, no libc.so at run time), so it starts on every
# x86_64 Linux with kernel 3.2 or later whatever its C library (RHEL/CentOS 7, SLES 12,
# Ubuntu 18.04 and everything newer), and starts faster than a dynamic binary (no symbol
# lookups or relocations by ld.so; docs/benchmarks.md). Stripped, fat LTO. Then checks
# the result with scripts/check-glibc.sh.
#   scripts/build-portable.sh            -> target/pkg/vmcust
# docs/packaging.md.
set -euo pipefail
cd "$(dirname "$0")/.."

triple=x86_64-unknown-linux-gnu
target_dir=${CARGO_TARGET_DIR:-target}

step() { echo "== $*" >&2; }

step "building a static vmcust for $triple (release: LTO, one codegen unit; a few minutes on 2 cores)"
start=$(date +%s)
# An explicit --target keeps the flags off build scripts and proc-macros, which cannot be
# static. The relative relocations the static-pie applies to itself at start are packed
# (DT_RELR, binutils 2.38+, applied by glibc 2.36's start-up code inside the binary, so
# no target system needs anything): 10,000 entries of 24 bytes become 3 KiB, 23 fewer
# page faults a start (docs/benchmarks.md).
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static -C link-arg=-Wl,-z,pack-relative-relocs" \
    cargo build --release --locked --target "$triple" --bin vmcust
step "built in $(($(date +%s) - start)) s"

mkdir -p target/pkg
install -m 0755 "$target_dir/$triple/release/vmcust" target/pkg/vmcust
scripts/check-glibc.sh target/pkg/vmcust
# What the flags above promise: a static-pie, so the kernel places it at a random address
# (ASLR for a root process fed by the host and the guest's users), with its start-up
# relocations packed (docs/benchmarks.md).
if ! readelf -h target/pkg/vmcust | grep -Eq 'Type: +DYN'; then
    echo "build-portable.sh: target/pkg/vmcust is not position-independent (static-pie); check RUSTFLAGS" >&2
    exit 1
fi
if ! readelf -d target/pkg/vmcust | grep -q '(RELR)'; then
    echo "build-portable.sh: target/pkg/vmcust has unpacked relocations; the linker needs -z pack-relative-relocs (binutils 2.38 or later)" >&2
    exit 1
fi
size=$(stat -c %s target/pkg/vmcust)
step "target/pkg/vmcust: $((size / 1024)) KiB"
if [ "$size" -gt $((8 * 1024 * 1024)) ]; then
    echo "build-portable.sh: target/pkg/vmcust is $size bytes, over the 8 MiB budget; check [profile.release] in Cargo.toml" >&2
    exit 1
fi
