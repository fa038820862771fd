// scripts/prerequisites.sh, which `npm test` and `npm start` run first: on a
// machine without what they need it says so in one line, naming the Debian
// packages, instead of failing minutes later inside a build or a test.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';

const script = path.join(repoRoot, 'scripts/prerequisites.sh');
const run = (what: string, env: Record<string, string>) => spawnSync('bash', [script, what], { env: { PATH: process.env.PATH!, ...env }, encoding: 'utf8' });

describe('prerequisites of npm test and npm start', () => {
  it('passes here, where everything is installed', () => {
    expect(run('test', {}).status).toBe(0);
  });

  it('names a missing Chromium and the package that brings it, in one line', () => {
    const r = run('test', { STREAMSCOPE_CHROMIUM: '/nonexistent/chromium' });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/npm test needs Chromium at \/nonexistent\/chromium .*sudo apt-get install chromium/);
  });

  it('names a missing simdjson (the addon builds against it) and its package, for both commands', () => {
    for (const what of ['test', 'start']) {
      const r = run(what, { STREAMSCOPE_SIMDJSON_INCLUDE: '/nonexistent' });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`npm ${what} needs simdjson \\(header and library\\).*sudo apt-get install .*libsimdjson-dev`));
    }
  });

  it('npm start does not need Chromium; a missing CUDA toolkit is named', () => {
    expect(run('start', { STREAMSCOPE_CHROMIUM: '/nonexistent/chromium' }).status).toBe(0);
    const r = run('start', { CUDA_HOME: '/nonexistent/cuda', PATH: '/usr/bin:/bin' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/npm start needs the CUDA 13 toolkit .* under \/nonexistent\/cuda/);
  });
});
