// Scopes (profiler/analysis/scope.ts) and start-up detection (startup.ts) on
// every committed recording, and the Python programs of test/gpu/scripts
// diagnosed in their steady state: the first finding names the cause each
// program was written with, not its start-up.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { iterationsOf } from '../../profiler/analysis/iterations.ts';
import { analyze, type Analysis } from '../../profiler/analysis/load.ts';
import { ScopeError } from '../../profiler/analysis/scope.ts';
import { type Scope } from '../../profiler/contract/scope.ts';
import { callFamily } from '../../profiler/analysis/call-families.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { openRecording } from '../../profiler/store/database.ts';

const fixtures = path.join(repoRoot, 'test/fixtures/recordings');
const all = fs
  .readdirSync(fixtures)
  .filter((f) => f.endsWith('.sqlite'))
  .sort();
const runner = all.filter((f) => /^(normalise|matmul|transpose)-/.test(f));

function analysed(file: string, scope?: Scope): Analysis {
  const db = openRecording(path.join(fixtures, file), { readonly: true });
  try {
    return analyze(db, { scope });
  } finally {
    db.close();
  }
}

function sql<T>(file: string, query: string, ...params: unknown[]): T {
  const db = openRecording(path.join(fixtures, file), { readonly: true });
  try {
    return db.prepare(query).get(...params) as T;
  } finally {
    db.close();
  }
}

const OPS = `(SELECT start_ns FROM kernels UNION ALL SELECT start_ns FROM memcpys UNION ALL SELECT start_ns FROM memsets)`;

describe('start-up and the steady state on every fixture', () => {
  for (const file of all) {
    it(file, () => {
      const steady = analysed(file);
      const s = steady.scope.startup;
      expect(steady.scope.kind).toBe('steady-state');
      if (!s) {
        expect(steady.trace.ops.length).toBe(analysed(file, { kind: 'whole' }).trace.ops.length);
        return;
      }
      // It ends with the call the rule names, a start-up call.
      expect(['context', 'module-load', 'function-lookup', 'other', 'sync', 'alloc', 'pinned-alloc', 'register']).toContain(callFamily(s.lastCall));
      expect(s.endNs).toBeGreaterThan(s.startNs);
      // What it was spent on adds up to its length.
      expect(s.spentOn.reduce((t, p) => t + p.ns, 0)).toBeCloseTo(s.endNs - s.startNs, -1);
      // The steady state holds exactly the operations that start after it (SQL on the file).
      const after = sql<{ n: number }>(file, `SELECT count(*) AS n FROM ${OPS} WHERE start_ns >= ?`, s.endNs).n;
      const before = sql<{ n: number }>(file, `SELECT count(*) AS n FROM ${OPS} WHERE start_ns < ?`, s.endNs).n;
      expect(steady.trace.ops.length).toBe(after);
      expect(s.ops).toBe(before);
    });
  }

  it('the bundled runner starts up before its first operation: its findings are those of the whole recording', () => {
    for (const file of runner) {
      const steady = analysed(file);
      const whole = analysed(file, { kind: 'whole' });
      expect(steady.scope.startup, file).not.toBeNull();
      expect(steady.scope.startup!.ops, file).toBe(0);
      const summary = (a: Analysis) => a.diagnosis.findings.map((f) => `${f.kind} ${f.costNs}`);
      expect(summary(steady), file).toEqual(summary(whole));
    }
  });
});

describe('the Python programs, in their steady state', () => {
  const cases: [file: string, kind: string, about: RegExp][] = [
    // cuda.pinned(...) inside the loop: registration synchronizes the device each chunk.
    ['numba_pinned_loop.sqlite', 'host-blocking-call', /cuMemHostRegister|cuMemHostUnregister/],
    // pageable batches copied "non_blocking" on a side stream.
    ['torch_prefetch.sqlite', 'pageable-async-copy', /pageable/],
    // the kernels launched outside `with stream:`, on CuPy's (legacy) default stream.
    ['cupy_streams_events.sqlite', 'legacy-default-stream', /legacy default stream/],
  ];
  for (const [file, kind, about] of cases) {
    it(`${file}: the first finding is the cause the program was written with (${kind}), start-up is summarised, not blamed`, () => {
      const steady = analysed(file);
      expect(steady.diagnosis.findings[0]!.kind).toBe(kind);
      expect(steady.diagnosis.findings[0]!.title).toMatch(about);
      const s = steady.scope.startup!;
      expect(s.lastCall).toMatch(/^(cuLibraryLoadData|cuModuleLoadData|cudaFuncGetAttributes)/);
      // The whole recording blames start-up for GPU idle time (module loading in a gap); the steady state never does.
      const blamesLoading = (a: Analysis) => a.diagnosis.findings.some((f) => f.kind === 'gpu-idle-gap' && /compiling\/loading kernels/.test(f.explanation));
      expect(blamesLoading(analysed(file, { kind: 'whole' }))).toBe(true);
      expect(blamesLoading(steady)).toBe(false);
    });
  }

  it('report: start-up is one line, the scope is named, no stream ids are listed', () => {
    for (const file of ['numba_pinned_loop.sqlite', 'torch_prefetch.sqlite', 'cupy_streams_events.sqlite']) {
      const text = execFileSync(process.execPath, [path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'report', path.join(fixtures, file)], {
        encoding: 'utf8',
      });
      const lines = text.split('\n');
      expect(
        lines.filter((l) => l.startsWith('start-up ')),
        file,
      ).toHaveLength(1);
      expect(
        lines.filter((l) => /start-up/.test(l) && !l.startsWith('start-up ') && !l.startsWith('scope ')),
        file,
      ).toEqual([]);
      expect(
        lines.find((l) => l.startsWith('scope ')),
        file,
      ).toMatch(/steady state, after .* of start-up/);
      expect(text, file).not.toMatch(/\b_Z[A-Z0-9]/);
      expect(text).toMatch(/Streams with GPU work \(\d+ more without any in this scope\)/);
    }
  });
});

describe('range scopes', () => {
  // The launches inside each 'step' instance on its own thread, joined to their GPU work in SQL.
  const inRange = (table: string, name: string, instance?: number) => {
    const inst =
      instance === undefined
        ? ''
        : `AND r.id = (SELECT r2.id FROM nvtx_ranges r2 JOIN strings s2 ON s2.id = r2.name_id
        WHERE s2.value = '${name}' AND r2.end_ns IS NOT NULL ORDER BY r2.start_ns, r2.id LIMIT 1 OFFSET ${instance - 1})`;
    return sql<{ n: number }>(
      'torch_prefetch.sqlite',
      `SELECT count(*) AS n FROM ${table} o JOIN contexts c ON c.id = o.context_id
      WHERE EXISTS (SELECT 1 FROM api_calls a JOIN nvtx_ranges r ON r.pid = a.pid AND r.tid = a.tid AND a.start_ns >= r.start_ns AND a.start_ns < r.end_ns
        JOIN strings s ON s.id = r.name_id
        WHERE s.value = ? AND r.end_ns IS NOT NULL ${inst} AND a.pid = c.pid AND a.correlation_id = o.correlation_id)`,
      name,
    ).n;
  };

  it("--range step counts exactly the kernels and copies launched inside 'step' (checked against SQL)", () => {
    const a = analysed('torch_prefetch.sqlite', { kind: 'range', name: 'step' });
    const count = (kind: number) => a.trace.ops.kind.filter((k) => k === kind).length;
    expect(a.scope.range).toEqual({ name: 'step', instances: 12 });
    expect(count(1)).toBe(inRange('kernels', 'step'));
    expect(count(2)).toBe(inRange('memcpys', 'step'));
    expect(count(1)).toBeGreaterThan(0);
    const third = analysed('torch_prefetch.sqlite', { kind: 'range', name: 'step', instance: 3 });
    expect(third.trace.ops.kind.filter((k) => k === 1).length).toBe(inRange('kernels', 'step', 3));
    expect(third.scope.label).toBe("NVTX range 'step' #3 of 12");
  });

  it('a range that is not there, or an instance past the last, is an error naming the file and what exists', () => {
    expect(() => analysed('torch_prefetch.sqlite', { kind: 'range', name: 'nope' })).toThrow(ScopeError);
    expect(() => analysed('torch_prefetch.sqlite', { kind: 'range', name: 'nope' })).toThrow(
      /torch_prefetch\.sqlite: no NVTX range named 'nope'; its ranges: .*'step'/,
    );
    expect(() => analysed('torch_prefetch.sqlite', { kind: 'range', name: 'step', instance: 13 })).toThrow(/has 12 instances; #13 does not exist/);
  });

  it('a window scope holds the operations that start in it', () => {
    const whole = analysed('torch_prefetch.sqlite', { kind: 'whole' });
    const mid = (whole.trace.span.start + whole.trace.span.end) / 2;
    const w = analysed('torch_prefetch.sqlite', { kind: 'window', startNs: mid, endNs: whole.trace.span.end + 1 });
    const n = sql<{ n: number }>('torch_prefetch.sqlite', `SELECT count(*) AS n FROM ${OPS} WHERE start_ns >= ?`, mid).n;
    expect(w.trace.ops.length).toBe(n);
    expect(() => analysed('torch_prefetch.sqlite', { kind: 'window', startNs: 10, endNs: 10 })).toThrow(/is empty/);
  });
});

describe('iterations', () => {
  it('torch_prefetch: 12 steps, the first is warm-up (cuBLAS loads inside it), the rest are alike', () => {
    const db = openRecording(path.join(fixtures, 'torch_prefetch.sqlite'), { readonly: true });
    try {
      const a = analyze(db);
      const it = iterationsOf(db, a.columns, 'step');
      expect(it.rows).toHaveLength(12);
      expect(it.rows.map((r) => r.warmUp)).toEqual([true, ...Array(11).fill(false)]);
      expect(it.rows.filter((r) => r.outlier)).toEqual([]);
      // Each row is what the range scope of that instance says.
      const third = analyze(db, { scope: { kind: 'range', name: 'step', instance: 3 }, columns: a.columns });
      expect(it.rows[2]!.operations).toBe(third.trace.ops.length);
      expect(it.rows[2]!.topFinding?.kind).toBe(third.diagnosis.findings[0]?.kind);
      expect(it.rows[5]!.topFinding?.kind).toBe('pageable-async-copy');
    } finally {
      db.close();
    }
  });
});
