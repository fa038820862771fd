#!/bin/sh
# The `streamscope` command (package.json "bin", `npm run streamscope`): Node
# on launch.cjs beside this file (the bundled CLI, or the sources), and for
# the commands that take the one-shot heap policy (streamscope.ts oneShot; a
# test holds the two lists equal) glibc's malloc held to one arena for all
# their threads, the user's own tunables after it. Why, and why it cannot be
# set from inside Node: launch.cjs, "One heap". launch.cjs puts the user's
# GLIBC_TUNABLES back before anything runs.
case "$1" in
  report | check | diff | summarize | export)
    export STREAMSCOPE_USER_TUNABLES="${GLIBC_TUNABLES-}"
    export GLIBC_TUNABLES="glibc.malloc.arena_max=1${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}"
    ;;
esac
exec node "$(dirname "$(readlink -f "$0")")/launch.cjs" "$@"
