#!/usr/bin/env bash
# Runs vmcust's main job on a bundled example: a vSphere customization spec applied to a
# scratch copy of a small template root. No VMware needed.
#   scripts/demo.sh [SPEC]     (default: examples/specs/static-2nic-ipv6.cfg)
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-examples/specs/static-2nic-ipv6.cfg}
scratch=$(mktemp -d /tmp/vmcust-demo.XXXXXX)
cp -a examples/root/. "$scratch"
cargo build -q --release
vmcust="${CARGO_TARGET_DIR:-target}/release/vmcust"
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
