// Scopes (profiler/analysis/scope.ts) and start-up detection (startup.ts) on
// every committed recording, and the Python programs of test/gpu/scripts
// diagnosed in their steady state: the first finding names the cause each
// program was written with, not its start-up.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { iterationsOf } from '../../profiler/analysis/diagnosis/iterations.ts';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { ScopeError, selectScope } from '../../profiler/analysis/scope.ts';
import { type Scope } from '../../profiler/contract/scope.ts';
import { callFamily } from '../../profiler/cuda/call-families.ts';
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
const OPS_ENDS = `(SELECT end_ns FROM kernels UNION ALL SELECT end_ns FROM memcpys UNION ALL SELECT end_ns FROM memsets)`;

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

  it('a window scope holds the operations that run in it', () => {
    const whole = analysed('torch_prefetch.sqlite', { kind: 'whole' });
    const mid = (whole.trace.span.start + whole.trace.span.end) / 2;
    const w = analysed('torch_prefetch.sqlite', { kind: 'window', startNs: mid, endNs: whole.trace.span.end + 1 });
    const n = sql<{ n: number }>('torch_prefetch.sqlite', `SELECT count(*) AS n FROM ${OPS_ENDS} WHERE end_ns > ?`, mid).n;
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

  it('a recording being written: an instance closed since its columns were loaded is one more row, and its own scope', () => {
    // What the query side does while a recording grows (query/recording-query.ts): the columns kept a while,
    // the ranges read as they are now. Here the 13th step closes after the columns were loaded.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-iterations-growth-'));
    const file = path.join(dir, 'growing.sqlite');
    fs.copyFileSync(path.join(fixtures, 'torch_prefetch.sqlite'), file);
    const db = openRecording(file);
    try {
      const a = analyze(db);
      expect(iterationsOf(db, a.columns, 'step').rows).toHaveLength(12);
      db.exec(`INSERT INTO nvtx_ranges (start_ns, end_ns, pid, tid, name_id, domain_id, payload)
        SELECT end_ns + 1000, end_ns + 2000, pid, tid, name_id, domain_id, payload FROM nvtx_ranges
        WHERE name_id = (SELECT id FROM strings WHERE value = 'step') ORDER BY start_ns DESC LIMIT 1`);
      const grown = iterationsOf(db, a.columns, 'step');
      expect(grown.rows).toHaveLength(13);
      // Nothing ran in it yet; the others keep what they own and their findings.
      expect(grown.rows[12]).toMatchObject({ instance: 13, operations: 0, gpuStartNs: null, topFinding: null });
      expect(grown.rows[5]!.topFinding?.kind).toBe('pageable-async-copy');
      const last = analyze(db, { scope: { kind: 'range', name: 'step', instance: 13 }, columns: a.columns });
      expect(last.trace.ops.length).toBe(0);
      expect(last.diagnosis.findings).toEqual([]);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Which instance owns what (docs/ANALYSIS.md, "Scopes"): the API calls any
// thread of the instance's process started while it was open, and the GPU
// operations they launched; a thread's own open instance first, else the
// one opened last. Checked against SQL on real recordings: PyTorch runs the
// backward pass of each step on its autograd thread, not on the thread
// that pushed the step's range.
describe('range ownership: the work any thread of the process launches while an instance is open', () => {
  const corpus = path.join(repoRoot, 'test/fixtures/corpus');
  const loops = [
    path.join(fixtures, 'torch_train_loop.sqlite'),
    path.join(fixtures, 'torch_train_loop-fixed.sqlite'),
    path.join(corpus, 'torch-pageable-batches/bug.sqlite'),
    path.join(corpus, 'torch-pageable-batches/fix.sqlite'),
    path.join(corpus, 'torch-item-per-step/bug.sqlite'),
    path.join(corpus, 'torch-item-per-step/fix.sqlite'),
  ].filter((f) => fs.existsSync(f));
  const name = 'train_step';

  function rows<T>(file: string, query: string, ...params: unknown[]): T[] {
    const db = openRecording(file, { readonly: true });
    try {
      return db.prepare(query).all(...params) as T[];
    } finally {
      db.close();
    }
  }

  const OP_ROWS = `(SELECT 1 AS kind, id, context_id, correlation_id FROM kernels UNION ALL
    SELECT 2, id, context_id, correlation_id FROM memcpys UNION ALL SELECT 3, id, context_id, correlation_id FROM memsets)`;

  /**
   * By SQL: each operation launched by a call that started inside an instance
   * of `range` of the call's own process (instances in start order, from 0),
   * with whether the call's thread is the instance's. Exactly the rule where
   * no two instances of a process overlap, as in these single-loop programs.
   */
  function launchesInside(file: string, range: string): { k: number; op: string; own: number; tid: number }[] {
    return rows(
      file,
      `WITH inst AS (SELECT r.pid, r.tid, r.start_ns AS s, r.end_ns AS e, row_number() OVER (ORDER BY r.start_ns, r.id) - 1 AS k
        FROM nvtx_ranges r JOIN strings n ON n.id = r.name_id WHERE n.value = ? AND r.end_ns IS NOT NULL)
      SELECT DISTINCT i.k, o.kind || ':' || o.id AS op, a.tid = i.tid AS own, a.tid FROM ${OP_ROWS} o
        JOIN contexts c ON c.id = o.context_id JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = o.correlation_id
        JOIN inst i ON i.pid = a.pid AND a.start_ns >= i.s AND a.start_ns < i.e`,
      range,
    );
  }

  /** The operations a range scope selects, as "kind:rowId". */
  function selected(file: string, scope: Scope, columns: Analysis['columns']): string[] {
    const db = openRecording(file, { readonly: true });
    try {
      const { ops } = selectScope(db, file, scope, columns, null).columns;
      return Array.from({ length: ops.length }, (_, i) => `${ops.kind[i]}:${ops.rowId[i]}`).sort();
    } finally {
      db.close();
    }
  }

  function columnsOf(file: string): Analysis['columns'] {
    const db = openRecording(file, { readonly: true });
    try {
      return analyze(db, { scope: { kind: 'whole' } }).columns;
    } finally {
      db.close();
    }
  }

  it('the PyTorch loops: the range is pushed on one thread, another thread (autograd) launches the backward pass inside each instance', () => {
    expect(loops.length).toBeGreaterThanOrEqual(2);
    for (const file of loops) {
      const pushers = rows<{ tid: number }>(file, `SELECT DISTINCT r.tid FROM nvtx_ranges r JOIN strings n ON n.id = r.name_id WHERE n.value = ?`, name);
      expect(pushers, file).toHaveLength(1);
      const inside = launchesInside(file, name);
      const instances = rows<{ n: number }>(
        file,
        `SELECT count(*) AS n FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id WHERE s.value = ? AND r.end_ns IS NOT NULL`,
        name,
      )[0]!.n;
      // Every instance has launches of its own thread and of another one.
      for (let k = 0; k < instances; k++) {
        const mine = inside.filter((r) => r.k === k);
        expect(mine.filter((r) => r.own).length, `${file} #${k + 1}`).toBeGreaterThan(0);
        expect(mine.filter((r) => !r.own).length, `${file} #${k + 1}`).toBeGreaterThan(0);
      }
      expect(new Set(inside.filter((r) => !r.own).map((r) => r.tid)).size, file).toBe(1);
    }
  });

  it('every operation launched inside an instance by any thread of its process is in that instance, and nothing else is (SQL)', () => {
    for (const file of loops) {
      const columns = columnsOf(file);
      const inside = launchesInside(file, name);
      const n = Math.max(...inside.map((r) => r.k)) + 1;
      for (let k = 0; k < n; k++) {
        expect(selected(file, { kind: 'range', name, instance: k + 1 }, columns), `${file} #${k + 1}`).toEqual(
          inside
            .filter((r) => r.k === k)
            .map((r) => r.op)
            .sort(),
        );
      }
      expect(selected(file, { kind: 'range', name }, columns), file).toEqual(inside.map((r) => r.op).sort());
    }
  });

  it('torch_train_loop: each step holds the 30 operations it launched (12 on the main thread, 18 from autograd), not 12', () => {
    for (const file of ['torch_train_loop.sqlite', 'torch_train_loop-fixed.sqlite']) {
      const inside = launchesInside(path.join(fixtures, file), name);
      const db = openRecording(path.join(fixtures, file), { readonly: true });
      try {
        const a = analyze(db, { scope: { kind: 'range', name } });
        const it = iterationsOf(db, a.columns, name);
        expect(it.rows).toHaveLength(24);
        for (const row of it.rows) {
          expect(
            inside.filter((r) => r.k === row.instance - 1 && r.own),
            `${file} #${row.instance}`,
          ).toHaveLength(12);
          expect(
            inside.filter((r) => r.k === row.instance - 1 && !r.own),
            `${file} #${row.instance}`,
          ).toHaveLength(18);
          expect(row.operations, `${file} #${row.instance}`).toBe(30);
        }
        // The rows share out the range: 24 × 30.
        expect(a.trace.ops.length).toBe(720);
        expect(it.rows.reduce((t, r) => t + r.operations, 0)).toBe(a.trace.ops.length);
        expect(a.scope.label).toBe("NVTX range 'train_step' (24 instances)");
        // The steady state's work no instance owns (warm-up steps before, the check after) is said, not hidden.
        expect(a.scope.notes?.[0]).toMatch(/^71 operations of the steady state \(.* of GPU time\) belong to no instance/);
      } finally {
        db.close();
      }
    }
  });

  it("a program whose processes launch from one thread each: every range's selection is the launches on the range's own thread, as before", () => {
    const files = [
      ...all.map((f) => path.join(fixtures, f)),
      ...['torch-allocator-churn', 'torch-launch-bound-graphs', 'torch-side-stream-sync', 'torch-synchronize-in-loop', 'two-processes-one-gpu']
        .flatMap((p) => ['bug', 'fix'].map((s) => path.join(corpus, p, `${s}.sqlite`)))
        .filter((f) => fs.existsSync(f)),
    ];
    let checked = 0;
    for (const file of files) {
      const launchers = rows<{ pid: number; n: number }>(
        file,
        `SELECT c.pid, count(DISTINCT a.tid) AS n FROM ${OP_ROWS} o JOIN contexts c ON c.id = o.context_id
        JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = o.correlation_id GROUP BY c.pid`,
      );
      if (launchers.length === 0 || launchers.some((l) => l.n > 1)) continue;
      const names = rows<{ value: string }>(file, `SELECT DISTINCT s.value FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id WHERE r.end_ns IS NOT NULL`);
      if (names.length === 0) continue;
      const columns = columnsOf(file);
      for (const { value } of names) {
        const own = launchesInside(file, value)
          .filter((r) => r.own)
          .map((r) => r.op);
        expect(selected(file, { kind: 'range', name: value }, columns), `${file} '${value}'`).toEqual([...new Set(own)].sort());
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it("two processes each running their steps: an instance owns its own process's calls and work only", () => {
    const file = path.join(corpus, 'two-processes-one-gpu/bug.sqlite');
    if (!fs.existsSync(file)) return;
    const db = openRecording(file, { readonly: true });
    try {
      const a = analyze(db, { scope: { kind: 'range', name: 'step' } });
      const { calls } = a.host;
      // By SQL: calls that started inside an instance of their own process, and inside one of any process (the rule before).
      const inOwn = sql0(
        db,
        `SELECT count(*) FROM api_calls a WHERE EXISTS (SELECT 1 FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id
        WHERE s.value = 'step' AND r.end_ns IS NOT NULL AND r.pid = a.pid AND a.start_ns >= r.start_ns AND a.start_ns < r.end_ns)`,
      );
      const inAny = sql0(
        db,
        `SELECT count(*) FROM api_calls a WHERE EXISTS (SELECT 1 FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id
        WHERE s.value = 'step' AND r.end_ns IS NOT NULL AND a.start_ns >= r.start_ns AND a.start_ns < r.end_ns)`,
      );
      expect(calls.length).toBe(inOwn);
      expect(inAny).toBeGreaterThan(inOwn);
      expect(new Set(Array.from(a.trace.ops.pid)).size).toBe(2);
    } finally {
      db.close();
    }
  });

  it('instances of two threads open at once: a thread keeps its own instance, a thread with none serves the one opened last', () => {
    // torch_train_loop with instances inserted as a program with several
    // stepping threads would record them: the autograd thread's own, and one
    // of a third thread that opens inside a main-thread step.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-ownership-'));
    try {
      const file = path.join(dir, 'overlap.sqlite');
      fs.copyFileSync(path.join(fixtures, 'torch_train_loop.sqlite'), file);
      const inside = launchesInside(file, name);
      const w = new Database(file);
      const steps = w
        .prepare(
          `SELECT r.pid, r.tid, r.start_ns AS s, r.end_ns AS e, r.name_id FROM nvtx_ranges r JOIN strings n ON n.id = r.name_id WHERE n.value = ? ORDER BY r.start_ns`,
        )
        .all(name) as { pid: number; tid: number; s: number; e: number; name_id: number }[];
      const autograd = inside.find((r) => !r.own)!.tid;
      // The autograd thread's launches in step 5 (k 4) and step 6 (k 5): their calls' starts.
      const callStarts = (k: number) =>
        w
          .prepare(
            `SELECT a.start_ns FROM ${OP_ROWS} o JOIN contexts c ON c.id = o.context_id JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = o.correlation_id
            WHERE a.tid = ? AND a.start_ns >= ? AND a.start_ns < ? ORDER BY a.start_ns`,
          )
          .pluck()
          .all(autograd, steps[k]!.s, steps[k]!.e) as number[];
      const five = callStarts(4);
      const six = callStarts(5);
      const { pid, name_id } = steps[0]!;
      const insert = w.prepare('INSERT INTO nvtx_ranges (start_ns, end_ns, pid, tid, name_id) VALUES (?, ?, ?, ?, ?)');
      // Step 5: the autograd thread's own instance around its launches.
      insert.run(five[0]! - 1, five[five.length - 1]! + 1, pid, autograd, name_id);
      // Step 6: a third thread's instance, opened after the main thread's and before autograd launches, closed after them.
      insert.run(six[0]! - 1, steps[5]!.e + 1000, pid, 999_999, name_id);
      w.close();
      openRecording(file).close(); // zones for the inserted rows
      const columns = columnsOf(file);
      // In start order: main's steps 1-5, autograd's (in 5), main's 6, the third thread's (in 6), main's 7-24: 26 instances.
      const select = (instance: number) => selected(file, { kind: 'range', name, instance }, columns);
      const of = (k: number, own: boolean) =>
        inside
          .filter((r) => r.k === k && r.own === (own ? 1 : 0))
          .map((r) => r.op)
          .sort();
      expect(select(5)).toEqual(of(4, true)); // main's step 5: its own thread's launches
      expect(select(6)).toEqual(of(4, false)); // the autograd thread's instance: its own launches
      expect(select(7)).toEqual(of(5, true)); // main's step 6: its own thread's launches only…
      expect(select(8)).toEqual(of(5, false)); // …the autograd thread, with none of its own, serves the one opened last
      expect(select(9)).toEqual([...of(6, true), ...of(6, false)].sort()); // untouched steps keep both threads' work
      // Still a partition: every instance's work adds up to the range's.
      let sum = 0;
      for (let k = 1; k <= 26; k++) sum += select(k).length;
      expect(sum).toBe(selected(file, { kind: 'range', name }, columns).length);
      expect(sum).toBe(720);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

function sql0(db: ReturnType<typeof openRecording>, query: string): number {
  return db.prepare(query).pluck().get() as number;
}
