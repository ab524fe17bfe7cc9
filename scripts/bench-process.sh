#!/usr/bin/env bash
# Whole-process cost of `vmcust plan` on the 2-NIC static example, against a trivial
# process (`true`) on the same machine, with hyperfine. Prints the difference, which is
# what the target (within 2 ms of a trivial process) is about.
#   VMCUST_BIN=target/pkg/vmcust scripts/bench-process.sh   (measure a given binary, such
#   as the portable one, without building)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${VMCUST_BIN:-}" ]; then
  bin=$VMCUST_BIN
else
  echo "== cargo build --release (minutes on a first build)" >&2
  cargo build -q --release
  bin="${CARGO_TARGET_DIR:-target}/release/vmcust"
fi
root=$(mktemp -d /tmp/vmcust-bench.XXXXXX)
cp -a examples/root/. "$root"
# /etc/shadow as on a real system (git keeps no modes but the executable bit).
chmod 0640 "$root/etc/shadow"
json=$(mktemp)
hyperfine -N --warmup 50 --runs 500 --export-json "$json" \
  "/bin/true" \
  "$bin plan --root $root --imc examples/specs/static-2nic-ipv6.cfg"
python3 - "$json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base, ours = r[0]["median"], r[1]["median"]
print(f"median: true {base*1e3:.3f} ms, vmcust plan {ours*1e3:.3f} ms, "
      f"difference {(ours-base)*1e3:.3f} ms, ratio {ours/base:.2f}x")
PY
rm -rf "$root" "$json"
