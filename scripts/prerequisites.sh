#!/usr/bin/env bash
# What `npm test` (and `npm start`) need from the machine besides npm
# packages, checked before minutes of building: one line naming what is
# missing and the Debian packages that bring it, exit 1.
#   usage: bash scripts/prerequisites.sh test|start
set -u
need=${1:-test}
missing=()
packages=()
have() { command -v "$1" >/dev/null 2>&1; }
for tool in cmake make g++ python3; do
  have "$tool" || { missing+=("$tool"); packages+=("$tool"); }
done
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -x "$cuda/bin/nvcc" ] || have nvcc || missing+=("the CUDA 13 toolkit (nvcc and CUPTI) under $cuda or CUDA_HOME")
# The addon's Kineto importer parses JSON with simdjson (native/addon/src/trace_import.cc): header and library.
simdjson=${STREAMSCOPE_SIMDJSON_INCLUDE:-/usr/include}
if [ ! -f "$simdjson/simdjson.h" ] || ! ls /usr/lib/*/libsimdjson.so >/dev/null 2>&1; then
  missing+=("simdjson (header and library)"); packages+=(libsimdjson-dev)
fi
if [ "$need" = test ]; then
  # The renderer's end-to-end tests drive Debian's Chromium (never a downloaded one).
  chromium=${STREAMSCOPE_CHROMIUM:-/usr/bin/chromium}
  [ -x "$chromium" ] || { missing+=("Chromium at $chromium (or STREAMSCOPE_CHROMIUM)"); packages+=(chromium); }
  # The fuzz targets' regression inputs replay under libFuzzer with ASan and UBSan (native/fuzz): clang and its runtime.
  if ! have clang++; then
    missing+=("clang"); packages+=(clang libclang-rt-14-dev)
  elif [ ! -f "$(clang++ --print-file-name=libclang_rt.fuzzer-x86_64.a)" ]; then
    missing+=("clang's libFuzzer and sanitizer runtime"); packages+=(libclang-rt-14-dev)
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  hint=""
  [ ${#packages[@]} -gt 0 ] && hint="; on Debian 12: sudo apt-get install ${packages[*]}"
  list=""
  for m in "${missing[@]}"; do list+="${list:+; }$m"; done
  echo "streamscope: npm $need needs $list$hint" >&2
  exit 1
fi
