#!/usr/bin/env bash
# The hardening CI job (docs/RELIABILITY.md): every check exits non-zero on failure.
#   1. ASan + UBSan build (tests and examples) -> the whole ctest suite and every example
#   2. TSan build -> the concurrency stress test and the runtime tests
#   3. libFuzzer harness (clang, ASan + UBSan) -> FUZZ_SECONDS on a copy of fuzz/corpus
#   4. valgrind memcheck (plain build) -> every example and the runtime test binary
# Usage: scripts/ci_hardening.sh [asan|tsan|fuzz|valgrind ...]   (default: all four)
# Environment: HARDENING_BUILD_ROOT (default build-hardening), FUZZ_SECONDS (60),
#   ACLNN_STRESS_SECONDS (3), JOBS (2), HARDENING_ISAS (kernel tiers to build, default: those
#   this host can run, for asan without avx512 where avx512bf16 is built, and for tsan / fuzz
#   scalar and the best of them; e.g.
#   "scalar;avx2;avx512;avx512bf16" for all in every stage but valgrind).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_ROOT="${HARDENING_BUILD_ROOT:-$ROOT/build-hardening}"
FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
export ACLNN_STRESS_SECONDS="${ACLNN_STRESS_SECONDS:-3}"
JOBS="${JOBS:-2}"
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(asan tsan fuzz valgrind)

# Sanitizer reports are fatal; LeakSanitizer runs with ASan.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

# The kernel tiers these builds compile (CMake ACLNN_KERNEL_ISAS): the ones this host can run,
# since no test can execute the others, and sanitizing them was about half of the job's compile
# time (the Release build of scripts/test.sh still compiles every tier). valgrind emulates no
# AVX-512 (the library then runs AVX2), so its build stops at avx2.
CPU_FLAGS=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has() { for f in "$@"; do [[ "$CPU_FLAGS" == *" $f "* ]] || return 1; done; }
host_isas() {
  local isas="scalar"
  if has avx2 fma f16c; then
    isas+=";avx2"
    if has avx512f avx512bw avx512dq avx512vl; then
      isas+=";avx512"
      if has avx512_bf16; then isas+=";avx512bf16"; fi
    fi
  fi
  echo "$isas"
}
ISAS="${HARDENING_ISAS:-$(host_isas)}"
# The asan build leaves out avx512 where avx512bf16 is built: the two tiers are the same source
# and the same code but for the fp32 -> bf16 rounding (simd_avx512.h), and avx512 is about a
# quarter of the stage's compile on the Xeon guests (estimated from the per-tier objects, not
# measured there). scripts/test.sh's Release ctest still runs both.
ASAN_ISAS="$ISAS"
if [ -z "${HARDENING_ISAS:-}" ] && [[ ";$ISAS;" == *";avx512bf16;"* ]]; then
  ASAN_ISAS="$(echo "$ISAS" | tr ';' '\n' | grep -vx avx512 | paste -sd';')"
fi
VALGRIND_ISAS="$(echo "$ISAS" | tr ';' '\n' | grep -xE 'scalar|avx2' | paste -sd';')"
# tsan and fuzz run only through the dispatcher, which picks the host's best tier (no test there
# loops over tiers as ctest's kernel tests do), so they build scalar (always built) and that one.
TOP_ISA="$(echo "$ISAS" | tr ';' '\n' | tail -1)"
TOP_ISAS="${HARDENING_ISAS:-scalar$([ "$TOP_ISA" = scalar ] || echo ";$TOP_ISA")}"
echo "==== [hardening] kernel tiers: $ISAS (asan: $ASAN_ISAS; tsan, fuzz: $TOP_ISAS; valgrind: $VALGRIND_ISAS)"

# GCC's sanitizer builds at -O1 instead of RelWithDebInfo's -O2: the AVX2 sce_kernels.cc object
# under ASan + UBSan compiled in 651 s instead of 1141-1179 s on the Zen 3 guest. The sanitizers'
# documentation asks for -O1 or more; -O2 only removes more of the loads and stores they check.
SAN_FLAGS=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG")

START_ALL=$(date +%s)
stage_begin() { STAGE_NAME="$1"; STAGE_START=$(date +%s); echo "==== [hardening] $1"; }
stage_end() { echo "==== [hardening] $STAGE_NAME passed in $(( $(date +%s) - STAGE_START )) s"; }

configure() {  # configure <dir> <cmake args...>
  local dir="$1"; shift
  cmake -S "$ROOT" -B "$dir" -G Ninja "$@" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; return 1; }
}

run_examples() {  # run_examples <examples dir> [wrapper...]
  local dir="$1"; shift
  local found=0
  for exe in "$dir"/*; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    found=1
    echo "---- example $(basename "$exe")"
    "$@" "$exe" > "$exe.log" 2>&1 || { cat "$exe.log"; echo "example $(basename "$exe") failed"; return 1; }
  done
  [ $found -eq 1 ] || echo "(no example programs built)"
}

stage_asan() {
  stage_begin "ASan+UBSan: build, ctest, examples"
  local dir="$BUILD_ROOT/asan"
  mkdir -p "$BUILD_ROOT"
  configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${SAN_FLAGS[@]}" -DACLNN_SANITIZE=address,undefined \
    -DACLNN_KERNEL_ISAS="$ASAN_ISAS" -DACLNN_BUILD_TESTS=ON -DACLNN_BUILD_EXAMPLES=ON
  ninja -C "$dir" -j"$JOBS" > "$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; return 1; }
  (cd "$dir" && ctest -j"$JOBS" --output-on-failure --timeout 900)
  run_examples "$dir/examples"
  stage_end
}

stage_tsan() {
  stage_begin "TSan: stress, thread pool and runtime tests"
  local dir="$BUILD_ROOT/tsan"
  mkdir -p "$BUILD_ROOT"
  configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${SAN_FLAGS[@]}" -DACLNN_SANITIZE=thread \
    -DACLNN_KERNEL_ISAS="$TOP_ISAS" -DACLNN_BUILD_TESTS=ON -DACLNN_BUILD_EXAMPLES=OFF
  ninja -C "$dir" -j"$JOBS" stress_test thread_pool_test runtime_test > "$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; return 1; }
  "$dir/tests/stress_test"
  "$dir/tests/thread_pool_test" --gtest_brief=1
  "$dir/tests/runtime_test" --gtest_brief=1
  stage_end
}

stage_fuzz() {
  stage_begin "libFuzzer: ${FUZZ_SECONDS} s on the seed corpus"
  local dir="$BUILD_ROOT/fuzz"
  local cc="${FUZZ_CC:-$(command -v clang-14 || command -v clang)}"
  local cxx="${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}"
  mkdir -p "$BUILD_ROOT"
  configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DACLNN_SANITIZE=address,undefined -DACLNN_KERNEL_ISAS="$TOP_ISAS" -DACLNN_BUILD_FUZZ=ON -DACLNN_BUILD_TESTS=OFF \
    -DACLNN_BUILD_EXAMPLES=OFF
  ninja -C "$dir" -j"$JOBS" aclnn_api_fuzz > "$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; return 1; }
  # New inputs go to a scratch corpus; the committed seeds are read only.
  local work="$dir/corpus-work"
  rm -rf "$work" && mkdir -p "$work" "$dir/artifacts"
  local rc=0
  ACLNN_PORTABLE_NUM_THREADS=2 "$dir/fuzz/aclnn_api_fuzz" -max_total_time="$FUZZ_SECONDS" \
    -rss_limit_mb=3072 -malloc_limit_mb=512 -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "$work" "$ROOT/fuzz/corpus" > "$dir/fuzz.log" 2>&1 || rc=$?
  grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::" "$dir/fuzz.log" || true
  [ "$rc" -eq 0 ] || { tail -80 "$dir/fuzz.log"; echo "fuzzer failed (rc $rc); reproducer in $dir/artifacts/"; return 1; }
  stage_end
}

stage_valgrind() {
  stage_begin "valgrind memcheck: examples and runtime_test"
  local dir="$BUILD_ROOT/valgrind"
  mkdir -p "$BUILD_ROOT"
  configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACLNN_KERNEL_ISAS="$VALGRIND_ISAS" \
    -DACLNN_BUILD_TESTS=ON -DACLNN_BUILD_EXAMPLES=ON
  ninja -C "$dir" -j"$JOBS" runtime_test $(cd "$ROOT/examples" && ls *.cpp 2>/dev/null | sed 's/\.cpp$//') \
    > "$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; return 1; }
  local vg=(valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible
            --show-leak-kinds=definite,indirect,possible --track-origins=yes --quiet)
  # valgrind runs one thread at a time; 2 workers keep the pool's hand-off paths exercised.
  ACLNN_PORTABLE_NUM_THREADS=2 run_examples "$dir/examples" "${vg[@]}"
  ACLNN_PORTABLE_NUM_THREADS=2 "${vg[@]}" "$dir/tests/runtime_test" --gtest_brief=1
  stage_end
}

for s in "${STAGES[@]}"; do
  case "$s" in
    asan) stage_asan ;;
    tsan) stage_tsan ;;
    fuzz) stage_fuzz ;;
    valgrind) stage_valgrind ;;
    *) echo "unknown stage $s (asan|tsan|fuzz|valgrind)"; exit 2 ;;
  esac
done
echo "==== [hardening] all stages passed in $(( $(date +%s) - START_ALL )) s"
