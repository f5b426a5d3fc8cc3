#!/usr/bin/env bash
# Builds the C library with CMake (if needed), creates .venv/ at the repository root
# (--system-site-packages, so it sees the system's torch, e.g. Debian's python3-torch) and installs
# the aclnn_portable package into it. Afterwards:
#   .venv/bin/python -c "import aclnn_portable"
#   .venv/bin/python -m pytest python/tests
#
# Options / environment:
#   --install-deps   apt-get install the Debian packages it needs that are missing (root)
#   PYTHON           interpreter for the venv (default /usr/bin/python3)
#   VENV             venv folder (default <repo>/.venv)
#   BUILD_DIR        CMake build folder for the library (default <repo>/build-python)
#   JOBS             parallel compile jobs (default 2)
# No network is needed: pip runs with --no-index --no-build-isolation --no-deps.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-/usr/bin/python3}"
VENV="${VENV:-$ROOT/.venv}"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-python}"
PREFIX="$BUILD_DIR/prefix"
JOBS="${JOBS:-2}"

if [[ "${1:-}" == "--install-deps" ]]; then
  # Only what is missing, so a machine that has everything needs no network.
  needed=(cmake ninja-build g++ python3 python3-venv python3-pip python3-setuptools python3-wheel
          python3-pytest python3-torch libtorch-dev)
  missing=()
  for pkg in "${needed[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    echo "== apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

echo "== C library: $BUILD_DIR"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DACLNN_BUILD_TESTS=OFF -DACLNN_BUILD_EXAMPLES=OFF -DACLNN_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" --target aclnn_portable -j "$JOBS"
cmake --install "$BUILD_DIR" --prefix "$PREFIX" >/dev/null

echo "== venv: $VENV"
if [[ ! -x "$VENV/bin/python" ]]; then
  "$PYTHON" -m venv --system-site-packages "$VENV"
fi
if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  echo "error: $VENV/bin/python cannot import torch; install it for $PYTHON (Debian: apt-get" \
       "install python3-torch libtorch-dev, or run this script with --install-deps)" >&2
  exit 1
fi

echo "== package: torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)')"
ACLNN_PORTABLE_PREFIX="$PREFIX" MAX_JOBS="$JOBS" "$VENV/bin/python" -m pip install -q \
  --no-index --no-deps --no-build-isolation "$ROOT/python"

cd /  # prove the installed package imports from anywhere, without LD_LIBRARY_PATH
"$VENV/bin/python" -c "import aclnn_portable, torch; print('aclnn_portable', aclnn_portable.__version__, 'installed:', aclnn_portable.library_path())"
