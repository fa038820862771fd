#!/usr/bin/env bash
# What `npm start`, `npm test`, `npm run lint`, `npm run fuzz` and `npm run bench` need
# from the machine besides npm packages, checked before minutes of building.
#
# Where Debian packages bring what is missing and this user may install them
# (root, or passwordless `sudo -n`), they are installed here, saying so in
# one line — as `playwright install --with-deps` does — so that the README's
# two commands are the whole set-up on a fresh machine. Otherwise (or with
# STREAMSCOPE_NO_APT=1) one line names what is missing and the command that
# installs it, and the script exits 1. What no package brings (the CUDA
# toolkit) is only named.
#   usage: bash scripts/prerequisites.sh start|test|lint|fuzz|bench
set -u
need=${1:-test}
case "$need" in start | test | lint | fuzz | bench) ;; *) echo "usage: scripts/prerequisites.sh start|test|lint|fuzz|bench" >&2; exit 2 ;; esac

have() { command -v "$1" >/dev/null 2>&1; }
# How the user asked for it: npm start, npm test, npm run lint, npm run fuzz, npm run bench.
asked="npm $need"
case "$need" in lint | fuzz | bench) asked="npm run $need" ;; esac

# Fills `missing` (what, as a person reads it) and `packages` (the Debian
# packages that bring it). Run again after an install, to check it worked.
check() {
  missing=()
  packages=()
  if [ "$need" = start ] || [ "$need" = test ] || [ "$need" = bench ]; then
    for tool in cmake make g++ python3; do
      have "$tool" || { missing+=("$tool"); packages+=("$tool"); }
    done
    local cuda=${CUDA_HOME:-/usr/local/cuda}
    [ -x "$cuda/bin/nvcc" ] || have nvcc || missing+=("the CUDA 13 toolkit (nvcc and CUPTI) under $cuda or CUDA_HOME")
    # The addon's Kineto importer parses JSON with simdjson (native/addon/src/trace_import.cc): header and library.
    # No well-kept npm package carries simdjson's source (the `simdjson` package holds 0.9.1 of 2021 and compiles
    # itself with node-gyp on install), so Debian's package it is.
    local simdjson=${STREAMSCOPE_SIMDJSON_INCLUDE:-/usr/include}
    if [ ! -f "$simdjson/simdjson.h" ] || ! ls /usr/lib/*/libsimdjson.so >/dev/null 2>&1; then
      missing+=("simdjson (header and library)"); packages+=(libsimdjson-dev)
    fi
  fi
  if [ "$need" = test ] || [ "$need" = bench ]; then
    # The renderer's end-to-end tests and the page's benchmarks drive Debian's Chromium (never a downloaded one).
    local chromium=${STREAMSCOPE_CHROMIUM:-/usr/bin/chromium}
    [ -x "$chromium" ] || { missing+=("Chromium at $chromium (or STREAMSCOPE_CHROMIUM)"); packages+=(chromium); }
  fi
  if [ "$need" = bench ]; then
    # The benchmarks run each measured command under GNU time for its peak resident memory (bench/job-summaries.ts, hta.ts, the import).
    local gnu_time=${STREAMSCOPE_GNU_TIME:-/usr/bin/time}
    [ -x "$gnu_time" ] || { missing+=("GNU time at $gnu_time"); packages+=(time); }
  fi
  if [ "$need" = test ]; then
    # `streamscope sql` is checked against the rows the sqlite3 shell gives (test/cli/sql.test.ts).
    [ -x /usr/bin/sqlite3 ] || { missing+=("the sqlite3 shell"); packages+=(sqlite3); }
  fi
  if [ "$need" = test ] || [ "$need" = fuzz ]; then
    # The fuzz targets' regression inputs replay under libFuzzer with ASan and UBSan (native/fuzz): clang and its runtime.
    if ! have clang++; then
      missing+=("clang"); packages+=(clang libclang-rt-14-dev)
    elif [ ! -f "$(clang++ --print-file-name=libclang_rt.fuzzer-x86_64.a)" ]; then
      missing+=("clang's libFuzzer and sanitizer runtime"); packages+=(libclang-rt-14-dev)
    fi
  fi
  if [ "$need" = lint ]; then
    # native/ is formatted by clang-format 14 (Debian 12's; scripts/format-native.sh).
    have clang-format || { missing+=("clang-format"); packages+=(clang-format); }
  fi
}

joined() {
  local out="" m
  for m in "$@"; do out+="${out:+; }$m"; done
  printf '%s' "$out"
}

check
[ ${#missing[@]} -eq 0 ] && exit 0

# Who may install: root, or a user with passwordless sudo.
sudo=""
may_install=0
if [ "${STREAMSCOPE_NO_APT:-0}" != 1 ] && [ ${#packages[@]} -gt 0 ] && have apt-get; then
  if [ "$(id -u)" -eq 0 ]; then
    may_install=1
  elif have sudo && sudo -n true 2>/dev/null; then
    may_install=1; sudo="sudo -n"
  fi
fi

if [ $may_install -eq 1 ]; then
  echo "streamscope: $asked needs $(joined "${missing[@]}"); installing ${packages[*]} from Debian (STREAMSCOPE_NO_APT=1 opts out)" >&2
  log=$(mktemp)
  # A fresh machine may have no package lists yet, so they are read first.
  if ! { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}"; } >"$log" 2>&1; then
    tail -n 5 "$log" >&2
    echo "streamscope: installing ${packages[*]} failed (above); install them yourself: sudo apt-get install ${packages[*]}" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
  check
  [ ${#missing[@]} -eq 0 ] && exit 0
fi

hint=""
[ ${#packages[@]} -gt 0 ] && hint="; on Debian 12: sudo apt-get install ${packages[*]}"
echo "streamscope: $asked needs $(joined "${missing[@]}")$hint" >&2
exit 1
