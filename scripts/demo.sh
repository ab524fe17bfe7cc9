#!/usr/bin/env bash
# Runs vmcust's main job on a bundled example: a vSphere customization spec applied to a
# scratch copy of a small template root. No VMware needed, and no Rust toolchain when a
# vmcust binary is at hand.
#   scripts/demo.sh [SPEC]     (default: examples/specs/static-2nic-ipv6.cfg)
# The binary: $VMCUST if set, else `vmcust` on PATH (an installed package), else one built
# here with cargo (target/release/vmcust).
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-examples/specs/static-2nic-ipv6.cfg}
if [ -n "${VMCUST:-}" ]; then
    vmcust=$VMCUST
    [ -x "$vmcust" ] || { echo "demo.sh: VMCUST=$vmcust is not an executable file" >&2; exit 1; }
    echo "== using $vmcust (\$VMCUST)" >&2
elif vmcust=$(command -v vmcust); then
    echo "== using $vmcust (on PATH; set VMCUST=FILE for another binary)" >&2
elif command -v cargo >/dev/null; then
    vmcust="${CARGO_TARGET_DIR:-target}/release/vmcust"
    # Progress on stderr: a first release build takes several minutes (LTO, one codegen
    # unit); cargo prints each crate as it goes, and nothing once the binary is up to date.
    echo "== building vmcust (cargo build --release; minutes the first time, seconds after)" >&2
    start=$(date +%s)
    cargo build --release --bin vmcust 2>&1 | grep -E '^ *(Compiling|Finished|error|warning)' >&2 || true
    [ -x "$vmcust" ] || { echo "demo.sh: the build failed; run cargo build --release to see why" >&2; exit 1; }
    echo "== built in $(($(date +%s) - start)) s" >&2
else
    echo "demo.sh: no vmcust binary: install the package (vmcust on PATH), set VMCUST=FILE to a" >&2
    echo "built one (target/release/vmcust, target/pkg/vmcust), or install Rust to build it here" >&2
    exit 1
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/vmcust-demo.XXXXXX")
cp -a examples/root/. "$scratch"
# /etc/shadow as on a real system (git keeps no modes but the executable bit).
chmod 0640 "$scratch/etc/shadow"
echo "== plan: $spec onto $scratch"
"$vmcust" plan --root "$scratch" --imc "$spec"
echo
echo "== apply"
"$vmcust" apply --root "$scratch" --imc "$spec"
echo
echo "== apply again (nothing left to do)"
"$vmcust" apply --root "$scratch" --imc "$spec"
echo
echo "the customized root is in $scratch"
