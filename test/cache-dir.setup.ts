// Vitest's global set-up: what the tests' analyses cache (merged jobs,
// column cache entries: profiler/base/cache-dir.ts) goes to a directory of
// this run's own, removed when the run ends, never the user's ~/.cache (the
// test processes are started after this and inherit it). A test that looks
// at the cache names its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'streamscope-test-cache-'));
  process.env.STREAMSCOPE_CACHE_DIR = dir;
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
