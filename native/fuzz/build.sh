#!/usr/bin/env bash
# Builds the libFuzzer targets (README.md) into native/fuzz/build/ with
# Debian's clang (-fsanitize=fuzzer,address,undefined), incrementally, and
# writes the empty recording the ingest target copies for each input
# (recording-template.sqlite: createRecording, every migration). Needs
# clang and its runtime libraries: on Debian 12, `apt-get install clang
# libclang-rt-14-dev`. `npm test` runs it (the regression corpus is part of
# the tests), `npm run fuzz` too.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$here/build"
jobs=$(nproc 2>/dev/null || echo 2)

cc=${STREAMSCOPE_FUZZ_CC:-clang}
cxx=${STREAMSCOPE_FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null; then
  echo "native/fuzz: $cxx not found (Debian 12: sudo apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
fi
if ! cmake --build "$build" -j"$jobs" >"$build/build.log" 2>&1; then
  cat "$build/build.log" >&2
  if grep -q 'libclang_rt\.\(fuzzer\|asan\)' "$build/build.log"; then
    echo "native/fuzz: clang's sanitizer runtime is missing (Debian 12: sudo apt-get install libclang-rt-14-dev)" >&2
  fi
  exit 1
fi

# The schema is the TypeScript store's (profiler/store/migrations): made by
# the same code that makes every recording, so the ingest target always
# writes into the tables the recorder would give it. Rewritten each build
# (a fraction of a second): a new migration needs nothing else.
template="$build/recording-template.sqlite"
(cd "$root" && "$root/node_modules/.bin/node" --input-type=module -e "
  import { createRecording } from './profiler/store/database.ts';
  const db = createRecording(process.argv[1], { overwrite: true });
  db.pragma('page_size = 4096');
  db.exec('VACUUM');
  db.close();
" "$template.new")
mv "$template.new" "$template"
echo "fuzz targets built: $build (record-decoding, ingest, record-round-trip)"
