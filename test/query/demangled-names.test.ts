// The query API on PyTorch's recording (torch_streams.sqlite): search
// matches the demangled names people read as well as the stored mangled
// ones; windows name kernels by their demangled form; details, search
// names and stats carry both.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';

const file = path.resolve(import.meta.dirname, '../fixtures/recordings/torch_streams.sqlite');
const q = new RecordingQuery('torch', file);
const db = new Database(file, { readonly: true });
afterAll(() => {
  q.close();
  db.close();
});
const all = <T>(sql: string, ...a: unknown[]) => db.prepare(sql).all(...a) as T[];

describe('demangled kernel names through the query API', () => {
  it('search finds kernels by a substring only their demangled names hold', () => {
    const text = 'binary_internal::MulFunctor<float>';
    expect(all("SELECT 1 FROM strings WHERE instr(value, 'binary_internal::') > 0")).toEqual([]); // not in any stored name
    const want = all<{ id: number; value: string; demangled: string }>(
      `SELECT k.id, s.value, s.demangled FROM kernels k JOIN strings s ON s.id = k.name_id
        WHERE instr(s.demangled, ?) > 0 ORDER BY k.start_ns, k.id`,
      text,
    );
    expect(new Set(want.map((k) => k.value)).size).toBe(2); // AUnaryFunctor and BUnaryFunctor instances
    const r = q.search({ text: text.toUpperCase(), limit: 1000 });
    expect(r.total).toBe(want.length);
    expect(r.items.map((i) => i.ref)).toEqual(want.map((k) => ({ table: 'kernels', id: k.id })));
    for (const n of r.names) {
      expect(n.name).toMatch(/^_ZN2at6native29vectorized_elementwise_kernel/);
      expect(n.demangledName).toContain(text);
    }
    // The stored name still matches too.
    expect(q.search({ text: '_ZN2at6native29vectorized_elementwise_kernel', limit: 0 }).names).toHaveLength(3);
  });

  it('windows name kernels by their demangled form, other items as stored', () => {
    const stream = q.summary().streams.find((s) => s.counts.kernels > 0)!;
    const w = q.window({ rows: [stream.rowId], startNs: -1e12, endNs: 1e12, resolutionNs: 1 });
    const named = new Map(
      all<{ id: number; value: string; demangled: string | null }>('SELECT id, value, demangled FROM strings').map((s) => [s.id, s.demangled ?? s.value]),
    );
    const kernels = w.rows[0]!.items.filter((i) => i.ref.table === 'kernels');
    expect(kernels.length).toBeGreaterThan(0);
    for (const i of kernels) expect(w.strings[i.nameId]).toBe(named.get(i.nameId));
    expect(Object.values(w.strings).some((s) => s.startsWith('_Z'))).toBe(false);
  });

  it('details: the stored and the demangled name, on the kernel and on the call that launched it', () => {
    const [k] = all<{ id: number; value: string; demangled: string }>(`SELECT k.id, s.value, s.demangled FROM kernels k JOIN strings s ON s.id = k.name_id
        WHERE s.demangled IS NOT NULL ORDER BY k.start_ns LIMIT 1`);
    const d = q.details({ table: 'kernels', id: k!.id });
    expect(d).toMatchObject({ name: k!.value, demangledName: k!.demangled });
    expect(d.fields.name).toBe(k!.value);
    const launch = d.related.find((r) => r.ref.table === 'api_calls')!;
    expect(launch.demangledName).toBeNull();
    const back = q.details(launch.ref);
    expect(back.demangledName).toBeNull();
    expect(back.related.find((r) => r.ref.table === 'kernels' && r.ref.id === k!.id)).toMatchObject({ name: k!.value, demangledName: k!.demangled });
  });

  it("stats: each kernel with its demangled name (null for cuBLAS's C names)", () => {
    const stored = new Map(all<{ value: string; demangled: string | null }>('SELECT value, demangled FROM strings').map((s) => [s.value, s.demangled]));
    const kernels = q.stats({ kind: 'whole' }).kernels;
    expect(kernels).toHaveLength(6);
    for (const k of kernels) expect(k.demangledName, k.name).toBe(stored.get(k.name));
    expect(kernels.filter((k) => k.demangledName !== null)).toHaveLength(4);
  });
});
