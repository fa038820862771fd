#!/usr/bin/env bash
# clang-format over StreamScope's own C++ and CUDA sources in native/
# (style: native/.clang-format).
#   scripts/format-native.sh           rewrites them in place
#   scripts/format-native.sh --check   changes nothing; fails (exit 1) naming
#                                      what is not formatted
# The files are the ones git knows in native/ (tracked, or new and not
# ignored), so build trees (native/build, native/addon/build) are never
# touched; nothing vendored lives in native/ (the SQLite amalgamation is
# compiled from node_modules). `npm run lint` runs the check, `npm run
# format` the rewrite.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: scripts/format-native.sh [--check]" >&2; exit 2 ;;
esac

if ! command -v clang-format >/dev/null; then
  echo "format-native: clang-format not found (Debian: sudo apt-get install clang-format)" >&2
  exit 2
fi
version=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$version" != 14 ]; then
  echo "format-native: note: native/ was formatted with clang-format 14, this is $version; its output may differ" >&2
fi

files=()
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  while IFS= read -r f; do
    [ -f "$f" ] && files+=("$f")
  done < <(git ls-files --cached --others --exclude-standard -- 'native/*.cc' 'native/*.h' 'native/*.cu' 'native/*.cuh')
else
  # A copy without git (a packed source tree): everything but the build trees.
  while IFS= read -r f; do files+=("$f"); done < <(find native \( -path native/build -o -path native/addon/build \) -prune -o \
    -type f \( -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print | sort)
fi

if [ "$check" = 1 ]; then
  if ! clang-format --dry-run --Werror "${files[@]}"; then
    echo "format-native: the files above are not formatted: run scripts/format-native.sh" >&2
    exit 1
  fi
  echo "format-native: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
