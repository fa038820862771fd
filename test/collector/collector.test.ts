// The collector's own checks that need no GPU, run under the repo's one
// test runner: the C++ self-test (translator + writer on hand-built CUDA 13
// records, a full disk) and the injection library against a fake CUPTI and
// driver (exit, signals, fork, SIGKILL, buffer cap, another CUPTI client,
// an old CUPTI). What a real CUPTI delivers is checked by `npm run test:gpu`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import { requireFile } from '../helpers/native.ts';

describe('collector without a GPU', () => {
  it('passes its self-test', () => {
    const r = spawnSync(requireFile(path.join(repoRoot, 'native/build/collector/streamscope-collector-selftest')), { encoding: 'utf8' });
    expect(r.stderr + r.stdout).toContain('all checks passed');
    expect(r.status).toBe(0);
  });

  it('behaves against a fake CUPTI in every exit and signal scenario', () => {
    const r = spawnSync('bash', [path.join(repoRoot, 'native/collector/test/run-fake-cupti-tests.sh')], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toContain('all fake-CUPTI scenarios passed');
    expect(r.status).toBe(0);
  });
});
