#!/usr/bin/env bash
# The main job: builds the library, runs the sample program of each operator (they print their
# results and check them against a plain loop), then a short performance summary against
# PyTorch, oneDNN and the memcpy roofline (bench/compare --quick).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DACLNN_BUILD_EXAMPLES=ON -DACLNN_BUILD_BENCH=ON
cmake --build build -j "$(nproc)"

for sample in build/examples/*_sample; do
  echo "== $(basename "$sample") =="
  "$sample"
done

echo "== performance summary (bench/compare --quick) =="
bench/compare --quick
