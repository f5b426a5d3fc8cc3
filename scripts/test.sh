#!/usr/bin/env bash
# Builds everything and runs every test: the C++ suites (ctest), a consumer of the installed
# library (CMake package, pkg-config, plain -I/-L), and the Python package's pytest suite.
# Usage: scripts/test.sh            (from any directory; a fresh clone is enough)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="$(nproc)"

bash scripts/install_deps.sh

echo "== build (Release) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DACLNN_BUILD_TESTS=ON -DACLNN_BUILD_EXAMPLES=ON
cmake --build build -j "$jobs"

echo "== C++ tests =="
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== install and consume =="
prefix="$root/build/install-test/prefix"
rm -rf "$root/build/install-test"
cmake --install build --prefix "$prefix" > /dev/null
cmake -S tests/install_consumer -B build/install-test/cmake -G Ninja -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build build/install-test/cmake > /dev/null
LD_LIBRARY_PATH="$prefix/lib" build/install-test/cmake/consumer_cmake
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" cc -std=c99 -Wall -Werror tests/install_consumer/consumer.c \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs aclnn_portable) -lm \
  -o build/install-test/consumer_pkgconfig
LD_LIBRARY_PATH="$prefix/lib" build/install-test/consumer_pkgconfig
cc -std=c99 -Wall -Werror tests/install_consumer/consumer.c -I "$prefix/include" -L "$prefix/lib" \
  -laclnn_portable -lm -o build/install-test/consumer_plain
LD_LIBRARY_PATH="$prefix/lib" build/install-test/consumer_plain

echo "== Python package =="
BUILD_DIR="$root/build" bash scripts/build_python.sh
.venv/bin/python -m pytest -q python/tests
