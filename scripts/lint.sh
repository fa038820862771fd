#!/usr/bin/env bash
# `npm run lint`: every static check, each run even when an earlier one
# fails, so one run lists everything to fix. CI runs it beside `npm test`.
#   types      tsc on both configs (Node side, renderer)
#   lint       ESLint: typescript-eslint, React's rules of hooks (eslint.config.js)
#   format     Prettier for TypeScript, JSON, CSS, HTML, YAML (.prettierrc.json)
#   native     clang-format for native/ (native/.clang-format)
#   imports    the folders' import rules (scripts/check-imports.ts)
# `npm run format` rewrites what the two formatters would change.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

failed=()
step() {
  local name=$1; shift
  echo "── $name: $*"
  if ! "$@"; then failed+=("$name"); fi
}
step types tsc -p tsconfig.json
step types tsc -p renderer/tsconfig.json
step lint eslint --max-warnings 0 .
step format prettier --check --log-level warn .
step native bash scripts/format-native.sh --check
step imports node scripts/check-imports.ts

if [ ${#failed[@]} -gt 0 ]; then
  echo "lint: failed: ${failed[*]}" >&2
  exit 1
fi
echo "lint: all checks passed"
