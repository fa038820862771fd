#!/usr/bin/env bash
# The working tree that travels to the lent GPU machine (tracked files,
# untracked files git does not ignore, carried paths) has a size limit, and
# the fixture recordings alone are most of it. Before a device call,
# `slim.sh on` takes the big fixture folders out of the index and ignores
# them locally (.git/info/exclude), so that they stay here; `slim.sh off`
# puts them back, exactly as they were. Nothing on disk changes; run `off`
# before committing.
#   usage: bash scripts/device/slim.sh on|off
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dirs=(test/fixtures/corpus test/fixtures/recordings test/fixtures/ddp test/fixtures/kineto test/fixtures/nsys test/fixtures/import-golden test/fixtures/fuzz)
exclude=.git/info/exclude
mkdir -p .git/info
begin='# slim.sh begin (fixture recordings kept here during a device call)'
end='# slim.sh end'
case "${1:-}" in
  on)
    # Only the recordings and traces; the programs beside them travel.
    echo "$begin" >> "$exclude"
    for d in "${dirs[@]}"; do
      [ -d "$d" ] || continue
      git ls-files -z -- "$d" | grep -zE '\.(sqlite|json|ssr|bin)$' | xargs -0 -r git rm -q --cached --
      printf '/%s/**/*.sqlite\n/%s/**/*.json\n/%s/**/*.ssr\n/%s/**/*.bin\n' "$d" "$d" "$d" "$d" >> "$exclude"
    done
    echo "$end" >> "$exclude"
    echo "slim: fixture recordings out of the index and ignored here; \`bash scripts/device/slim.sh off\` restores them"
    ;;
  off)
    [ -f "$exclude" ] && awk -v b="$begin" -v e="$end" '$0 == b { skip = 1 } !skip { print } $0 == e { skip = 0 }' "$exclude" > "$exclude.tmp" && mv "$exclude.tmp" "$exclude"
    git reset -q -- "${dirs[@]}"
    git status --short -- "${dirs[@]}" | grep -v '^ M' | head -5 || true
    echo "slim: fixture recordings back in the index"
    ;;
  *)
    echo "usage: bash scripts/device/slim.sh on|off" >&2
    exit 2
    ;;
esac
