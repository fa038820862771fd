// Test helpers around the native build products. Tests that need them fail
// with a clear message when the native build is missing: `npm test` builds
// it first (pretest), so a missing product is a real failure, not a skip.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { syntheticStreamToolPath } from '../../profiler/native/paths.ts';

export function requireFile(file: string): string {
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run \`npm run build:native\``);
  return file;
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `ss-${prefix}-`));
}

/** Writes a synthetic record stream with the C++ encoder; returns its path (and the expectation JSON path). */
export function syntheticStream(dir: string, name: string, args: string[] = []): { stream: string; expect: string } {
  const stream = path.join(dir, `${name}.ssr`);
  const expect = path.join(dir, `${name}.json`);
  const withExpect = !args.includes('--bench-launches');
  execFileSync(requireFile(syntheticStreamToolPath()), ['--out', stream, ...(withExpect ? ['--expect', expect] : []), ...args]);
  return { stream, expect };
}
