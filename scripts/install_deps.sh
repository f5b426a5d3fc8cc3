#!/usr/bin/env bash
# Installs the Debian packages the build, the tests, the Python package and the benchmarks need.
# Idempotent: packages already present are not touched; needs root (or sudo) only to install.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev pkg-config valgrind  # toolchain
  libgtest-dev libbenchmark-dev                                      # tests, benchmarks
  python3 python3-dev python3-venv python3-pip python3-pytest        # Python package
  python3-setuptools python3-wheel
  python3-torch libtorch-dev                                         # PyTorch 1.13 (CPU)
  libdnnl-dev python3-matplotlib                                     # benchmark peers, chart
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
