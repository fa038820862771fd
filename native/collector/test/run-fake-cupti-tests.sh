#!/usr/bin/env bash
# Runs the injection library against a fake CUPTI and a fake driver
# (fake_cupti.cc, fake_cuda.cc) in scenarios that need no GPU: normal exit,
# cuProfilerStop, SIGTERM/SIGINT with each previous disposition, fork,
# SIGKILL, the buffer cap, discard mode, another CUPTI client, an old CUPTI,
# a client of the target's own refused (the preloaded cupti_watch.cc),
# and the launcher variables it records (ProcessEnv, in the exit scenario).
# What it cannot show — what the real CUPTI delivers — is checked on a GPU.
#
#   native/collector/test/run-fake-cupti-tests.sh [BUILD_DIR]   (default native/build)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../../build}
collector=$(cd "$build/collector" && pwd)/libstreamscope_collector.so
[ -f "$collector" ] || { echo "missing $collector: build native/ first" >&2; exit 2; }
cuda_include=${CUDA_HOME:-/usr/local/cuda}/include
work=$(mktemp -d "${TMPDIR:-/tmp}/streamscope-fake-cupti.XXXXXX")
trap 'rm -rf "$work"' EXIT

cxx=${CXX:-c++}
flags=(-std=c++17 -O1 -Wall -Wextra -fPIC -I"$cuda_include")
"$cxx" "${flags[@]}" -shared -Wl,-soname,libcupti.so.13 -o "$work/libcupti.so.13" "$here/fake_cupti.cc" -lpthread
"$cxx" "${flags[@]}" -shared -Wl,-soname,libcuda.so.1 -o "$work/libcuda.so.1" "$here/fake_cuda.cc"
"$cxx" "${flags[@]}" -o "$work/fake_target" "$here/fake_target.cc" -ldl -lpthread
"$cxx" "${flags[@]}" -shared -o "$work/libfake_client.so" "$here/fake_client.cc" -L"$work" -l:libcupti.so.13
watch=$(cd "$build/collector" && pwd)/libstreamscope_cupti_watch.so

failed=0
run() {  # scenario, expected status (exit code, or "signal N"), extra env...
  local scenario=$1 expected=$2
  shift 2
  local out="$work/out-$scenario"
  mkdir -p "$out"
  local status=0
  # The fake produces records far faster than a GPU: room for all of them
  # (STREAMSCOPE_MAX_BUFFERS), unless the scenario says otherwise. The outer
  # 2>/dev/null silences the shell's own "Killed"/"Terminated" notices.
  { env LD_LIBRARY_PATH="$work" STREAMSCOPE_OUTPUT_DIR="$out" STREAMSCOPE_BUFFER_BYTES=65536 STREAMSCOPE_FLUSH_MS=100 \
      STREAMSCOPE_MAX_BUFFERS=1000 "$@" "$work/fake_target" "$collector" "$work/libcuda.so.1" "$scenario" ${TARGET_ARG:-} \
      >"$work/$scenario.log" 2>&1; } 2>/dev/null || status=$?
  local got=$status
  [ "$status" -gt 128 ] && got="signal $((status - 128))"
  if [ "$got" != "$expected" ]; then
    echo "  FAIL $scenario: ended with '$got', expected '$expected'"; sed 's/^/       /' "$work/$scenario.log"; failed=1; return
  fi
  local files=("$out"/*.ssr)
  if [ "${#files[@]}" -ne 1 ] || [ ! -f "${files[0]}" ]; then
    echo "  FAIL $scenario: expected one stream file, found: ${files[*]}"; failed=1; return
  fi
  python3 "$here/check_stream.py" "${files[0]}" "$scenario" || { sed 's/^/       /' "$work/$scenario.log"; failed=1; }
}

echo "collector against fake CUPTI:"
run exit 0 RANK=3 LOCAL_RANK=1 WORLD_SIZE=8 CUDA_VISIBLE_DEVICES= STREAMSCOPE_TEST_NOT_READ=1
run discard 0 STREAMSCOPE_DISCARD=1
run sigterm-default "signal 15"
run sigint-handler 0
run sigint-ignored 0
run fork 0
run sigkill "signal 9"
run segv "signal 11" STREAMSCOPE_FLUSH_MS=0
run abort "signal 6" STREAMSCOPE_FLUSH_MS=0
run cap 0 STREAMSCOPE_MAX_BUFFERS=1
run other 0 FAKE_CUPTI_OTHER="CUPTI for Nsight Systems"
run old-cupti 0 FAKE_CUPTI_VERSION=120000
# A client of the target's own refused the subscription: the preloaded
# watch library (cupti_watch.cc) says so in a file beside the stream.
TARGET_ARG="$work/libfake_client.so" run inner-client 0 LD_PRELOAD="$watch"
refused=("$work"/out-inner-client/cupti-refused-*.txt)
if [ ! -f "${refused[0]}" ] || ! grep -q $'libfake_client.so\tfake Kineto$' "${refused[0]}"; then
  echo "  FAIL inner-client: no refusal noted (${refused[*]}): $(cat "${refused[@]}" 2>/dev/null)"; failed=1
elif [ "$(wc -l < "${refused[0]}")" != 1 ]; then
  echo "  FAIL inner-client: the collector's own subscription was noted too: $(cat "${refused[0]}")"; failed=1
else
  echo "  ok   inner-client: refusal noted ($(cut -f3 "${refused[0]}"))"
fi
[ "$failed" = 0 ] && echo "all fake-CUPTI scenarios passed"
exit "$failed"
