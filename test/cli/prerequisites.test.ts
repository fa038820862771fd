// scripts/prerequisites.sh, which `npm test`, `npm start`, `npm run lint`
// and `npm run bench` run first: on a machine without what they need it installs the Debian
// packages where it may (root or passwordless sudo), and otherwise says so in
// one line, naming them, instead of failing minutes later inside a build or a
// test. STREAMSCOPE_NO_APT=1 keeps it from installing: the message cases.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';

const script = path.join(repoRoot, 'scripts/prerequisites.sh');
const run = (what: string, env: Record<string, string>) =>
  spawnSync('/bin/bash', [script, what], { env: { PATH: process.env.PATH!, STREAMSCOPE_NO_APT: '1', ...env }, encoding: 'utf8' });
const root = process.getuid?.() === 0;

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

  it('npm run lint needs clang-format only', () => {
    // `npm test` alone (the README's test command on a bare machine) installs no clang-format: lint's own run does.
    // Any executable of that name stands for it here, as for GNU time below.
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'streamscope-prereq-'));
    fs.symlinkSync('/bin/true', path.join(bin, 'clang-format'));
    const withFormat = `${bin}:${process.env.PATH!}`;
    expect(run('lint', { PATH: withFormat, STREAMSCOPE_CHROMIUM: '/nonexistent/chromium', STREAMSCOPE_SIMDJSON_INCLUDE: '/nonexistent' }).status).toBe(0);
    fs.rmSync(bin, { recursive: true });
    const r = run('lint', { PATH: '/nonexistent' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/npm run lint needs clang-format; on Debian 12: sudo apt-get install clang-format/);
  });

  it("npm run bench needs GNU time (each measured command's peak memory) and Chromium besides the build", () => {
    // GNU time itself is only bench's (npm test's machine need not have it): any executable stands for it here.
    expect(run('bench', { STREAMSCOPE_GNU_TIME: process.execPath }).status).toBe(0);
    const r = run('bench', { STREAMSCOPE_GNU_TIME: '/nonexistent/time', STREAMSCOPE_CHROMIUM: '/nonexistent/chromium' });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /npm run bench needs Chromium at \/nonexistent\/chromium .*; GNU time at \/nonexistent\/time; on Debian 12: sudo apt-get install chromium time/,
    );
  });

  it('an unknown need is a usage error', () => {
    expect(run('build', {}).status).toBe(2);
  });

  // The real apt-get, as root: the packages are installed already, so the
  // install is a no-op, and what is still missing (a Chromium path that does
  // not exist) is named after it. Not as a user without sudo.
  it.runIf(root)(
    'as root, installs the missing packages itself, saying so in one line, then checks again',
    () => {
      const r = run('test', { STREAMSCOPE_NO_APT: '0', STREAMSCOPE_CHROMIUM: '/nonexistent/chromium' });
      const lines = r.stderr.trim().split('\n');
      expect(lines[0]).toMatch(
        /^streamscope: npm test needs Chromium at \/nonexistent\/chromium .*; installing chromium from Debian \(STREAMSCOPE_NO_APT=1 opts out\)$/,
      );
      expect(r.status).toBe(1);
      expect(lines.at(-1)).toMatch(/npm test needs Chromium at \/nonexistent\/chromium/);
    },
    300_000,
  );

  it('npm start does not need Chromium; a missing CUDA toolkit is named', () => {
    expect(run('start', { STREAMSCOPE_CHROMIUM: '/nonexistent/chromium' }).status).toBe(0);
    const r = run('start', { CUDA_HOME: '/nonexistent/cuda', PATH: '/usr/bin:/bin' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/npm start needs the CUDA 13 toolkit .* under \/nonexistent\/cuda/);
  });
});
