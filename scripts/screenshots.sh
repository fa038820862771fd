#!/usr/bin/env bash
# The README's screenshots (docs/*.png), made again from the committed
# fixtures in Debian's Chromium against the real server, so that they show
# what a user gets today: run after a change the pictures show.
#   bash scripts/screenshots.sh [NAME...]   (default: all; NAME as below, e.g. first-view-runner)
# Each shot is test/e2e/screenshot.ts (or live-screenshot.ts) with the
# options written next to its name here; the README says what each shows.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

rec=test/fixtures/recordings
corpus=test/fixtures/corpus
shot() { node test/e2e/screenshot.ts "$@" >/dev/null; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A shots=(
  # The first view, as each recording opens: the runner's H100 sample, a PyTorch program, a two-rank DDP job.
  [first-view-runner]="shot $rec/normalise-concurrent.sqlite docs/first-view-runner.png --size 1600x640"
  [first-view-torch]="shot $corpus/torch-pageable-batches/bug.sqlite docs/first-view-torch.png --size 1600x640"
  [first-view-ddp-job]="job_shot"
  # The two runner scenarios the README compares, as they open.
  [timeline-normalise-concurrent]="shot $rec/normalise-concurrent.sqlite docs/timeline-normalise-concurrent.png"
  [timeline-normalise-default-stream]="shot $rec/normalise-default-stream.sqlite docs/timeline-normalise-default-stream.png"
  [timeline-numba-user-streams]="shot $rec/numba_user_streams.sqlite docs/timeline-numba-user-streams.png"
  # A selected kernel of the events scenario: its waits, wait times and critical chain.
  [dependencies]="shot $rec/normalise-events.sqlite docs/dependencies.png --select kernels:5"
  [compare-default-stream-vs-concurrent]="shot $rec/normalise-default-stream.sqlite docs/compare-default-stream-vs-concurrent.png --compare $rec/normalise-concurrent.sqlite --size 1600x760"
  # The Query tab with its first example query run.
  [query-tab]="shot $rec/torch_streams.sqlite docs/query-tab.png --query example:1 --size 1600x640"
  # The findings of one iteration of a PyTorch loop, picked in the scope menu.
  [scope-menu]="shot $corpus/torch-item-per-step/bug.sqlite docs/scope-menu.png --scope range:train_step#3 --size 1600x640"
  [live]="node test/e2e/live-screenshot.ts docs/live.png"
)

# A job's per-rank recordings, merged as `streamscope open` serves them.
job_shot() {
  node profiler/cli/streamscope.ts merge test/fixtures/ddp/ddp-rank0.sqlite test/fixtures/ddp/ddp-rank1.sqlite -o "$tmp/ddp-job.sqlite" >/dev/null
  shot "$tmp/ddp-job.sqlite" docs/first-view-ddp-job.png --size 1600x760
}

names=("$@")
[ ${#names[@]} -eq 0 ] && names=("${!shots[@]}")
for name in "${names[@]}"; do
  [ -n "${shots[$name]:-}" ] || { echo "screenshots: no shot named $name (known: ${!shots[*]})" >&2; exit 2; }
  echo "docs/$name.png"
  eval "${shots[$name]}"
done
