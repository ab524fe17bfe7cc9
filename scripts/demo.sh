#!/usr/bin/env bash
# Runs vmcust's main job on a bundled example: a vSphere customization spec applied to a
# scratch copy of a small template root. No VMware needed.
#   scripts/demo.sh [SPEC]     (default: examples/specs/static-2nic-ipv6.cfg)
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-examples/specs/static-2nic-ipv6.cfg}
scratch=$(mktemp -d /tmp/vmcust-demo.XXXXXX)
cp -a examples/root/. "$scratch"
# /etc/shadow as on a real system (git keeps no modes but the executable bit).
chmod 0640 "$scratch/etc/shadow"
vmcust="${CARGO_TARGET_DIR:-target}/release/vmcust"
# Progress on stderr: a first release build takes several minutes (LTO, one codegen
# unit); cargo prints each crate as it goes, and nothing once the binary is up to date.
echo "== building vmcust (cargo build --release; minutes the first time, seconds after)" >&2
start=$(date +%s)
cargo build --release --bin vmcust 2>&1 | grep -E '^ *(Compiling|Finished|error|warning)' >&2 || true
[ -x "$vmcust" ] || { echo "demo.sh: the build failed; run cargo build --release to see why" >&2; exit 1; }
echo "== built in $(($(date +%s) - start)) s" >&2
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
