// `streamscope report FILE --from X --to Y` analyses what runs in the time
// range, clipped to it (analysis/scope.ts clipToWindow): run as a user runs
// it, on runner-pageable's bug, whose longest copy (~50 ms, device to
// pageable memory) a range of 30 ms inside it holds alone.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const file = path.join(repoRoot, 'test/fixtures/corpus/runner-pageable/bug.sqlite');
const run = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

const db = new Database(file, { readonly: true });
const copy = db.prepare('SELECT id, start_ns AS start, end_ns AS end, bytes FROM memcpys ORDER BY end_ns - start_ns DESC LIMIT 1').get() as {
  id: number;
  start: number;
  end: number;
  bytes: number;
};
db.close();
/** 5 ms after the copy starts to 35 ms after, in the flags' microseconds. */
const from = `${(copy.start + 5e6) / 1e3}us`;
const to = `${(copy.start + 35e6) / 1e3}us`;

describe('streamscope report --from --to inside a long copy', () => {
  it('text: the copy in the copies table with its 30 ms inside, its finding, and the note that it was cut', () => {
    const r = run(['report', file, '--from', from, '--to', to]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {10}1 operation ran across its edges \(49\.\d ms of GPU time, 30\.0 ms of it inside\): only the part inside is analysed$/m);
    expect(r.stdout).toMatch(/^ {2}ERROR +\S+ ms {2}1 async copies from\/to pageable memory \(38\.\d MiB, 30\.0 ms\) could not overlap$/m);
    expect(r.stdout).not.toContain('Findings: none');
    const copies = r.stdout.slice(r.stdout.indexOf('\nCopies and memsets'));
    expect(copies).toMatch(/^ {2}DtoH +device +pageable +1 +38\.\d MiB +30\.0 ms +1\.4$/m);
  });

  it('JSON: the same copy, clipped, and the finding naming its row', () => {
    const r = run(['report', file, '--from', from, '--to', to, '--json']);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      scope: { kind: string; windows: { startNs: number; endNs: number }[] };
      copies: { direction: string; dstKind: string; count: number; bytes: number; total: number }[];
      findings: { kind: string; evidence: { memcpys: number[] }; whatIf: { measuredNs: number } | null }[];
    };
    expect(report.scope.kind).toBe('window');
    expect(report.scope.windows).toEqual([{ startNs: copy.start + 5e6, endNs: copy.start + 35e6 }]);
    expect(report.copies).toEqual([
      expect.objectContaining({
        direction: 'DtoH',
        dstKind: 'pageable',
        count: 1,
        total: 30e6,
        bytes: Math.round((copy.bytes * 30e6) / (copy.end - copy.start)),
      }),
    ]);
    expect(report.findings[0]).toMatchObject({ kind: 'pageable-async-copy', evidence: { memcpys: [copy.id] }, whatIf: { measuredNs: 30e6 } });
  });
});
