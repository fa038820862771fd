#!/usr/bin/env bash
# On the GPU machine, in the repository root: restores what pack.sh packed
# and puts Node 22 on PATH as /tmp/ssbin/node. Source it: `. scripts/device/unpack.sh`.
set -e
mkdir -p /tmp/ssbin
[ -x /tmp/ssbin/node ] || { xz -dc .carry/node.xz > /tmp/ssbin/node && chmod +x /tmp/ssbin/node; }
tar -xJf .carry/bundle.tar.xz
export PATH=/tmp/ssbin:$PATH
set +e
