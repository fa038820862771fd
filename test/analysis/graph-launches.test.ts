// CUDA graph launches in the analysis, on a real recording: PyTorch 2.11 on
// an H200, a small network captured once with torch.cuda.graph and replayed
// 300 times with g.replay() (test/fixtures/corpus/torch-launch-bound-graphs,
// fix.sqlite: one cudaGraphLaunch a step, CUPTI's 12,000 kernels of graph
// 2 with 40 node ids, each with its launch's correlation id). What the
// collector recorded is in the kernels' columns; every graph kernel's call
// (host.opCall) is its cudaGraphLaunch, 40 kernels to a call, in the
// graph's node order; the dependency view gives each its launch and, after
// the first, the kernel of the node before; graphs.ts counts the launches.
// bug.sqlite, the same kernels launched one by one, has no graph launch.
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dependenciesOf, dependenciesOfOp } from '../../profiler/analysis/replay/dependencies.ts';
import { callName } from '../../profiler/analysis/host.ts';
import { analyze, type Analysis } from '../../profiler/analysis/diagnosis/analyze.ts';
import { OpKind } from '../../profiler/analysis/trace.ts';
import { openRecording, type Db } from '../../profiler/store/database.ts';

const dir = path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs');
const open: Db[] = [];
afterAll(() => open.forEach((db) => db.close()));

function load(name: string, scope: 'whole' | 'steady-state' = 'whole'): { db: Db; a: Analysis } {
  const db = openRecording(path.join(dir, name), { readonly: true });
  open.push(db);
  return { db, a: analyze(db, scope === 'whole' ? { scope: { kind: 'whole' } } : {}) };
}

describe('CUDA graph launches (torch.cuda.graph replayed 300 times)', () => {
  const { db, a } = load('fix.sqlite');
  const { ops } = a.trace;
  const { host } = a;
  /** Each kernel's graph columns as stored, by kernels.id. */
  const stored = new Map(
    (db.prepare('SELECT id, graph_id AS graph, graph_node_id AS node FROM kernels').all() as { id: number; graph: number | null; node: number | null }[]).map(
      (r) => [r.id, r],
    ),
  );
  const graphOps = [...ops.kind.keys()].filter((i) => ops.kind[i] === OpKind.Kernel && stored.get(ops.rowId[i]!)!.graph !== null);
  /** The graph kernels by their call, each list in the analysis's op order (start order). */
  const byCall = new Map<number, number[]>();
  for (const i of graphOps) {
    const k = host.opCall[i]!;
    if (!byCall.has(k)) byCall.set(k, []);
    byCall.get(k)!.push(i);
  }
  const node = (i: number) => stored.get(ops.rowId[i]!)!.node!;

  it("the collector's graph ids arrived in the kernels table: 12,000 kernels of graph 2, 40 nodes, each with a cudaGraphLaunch's correlation id", () => {
    const sql = db
      .prepare(
        `SELECT count(*) AS kernels, count(DISTINCT k.graph_node_id) AS nodes, count(DISTINCT k.correlation_id) AS launches,
           sum(s.value = 'cudaGraphLaunch') AS byGraphLaunch
         FROM kernels k JOIN contexts c ON c.id = k.context_id
         JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = k.correlation_id AND a.domain = 1 JOIN strings s ON s.id = a.name_id
         WHERE k.graph_id = 2`,
      )
      .get();
    expect(sql).toEqual({ kernels: 12_000, nodes: 40, launches: 300, byGraphLaunch: 12_000 });
    // Graph 2 is the only graph; the kernels launched one by one (warm-up, the reference) have neither id.
    expect(db.prepare('SELECT count(*) FROM kernels WHERE graph_id IS NULL AND graph_node_id IS NOT NULL').pluck().get()).toBe(0);
    expect(db.prepare('SELECT DISTINCT graph_id FROM kernels WHERE graph_id IS NOT NULL').pluck().all()).toEqual([2]);
    expect(graphOps).toHaveLength(12_000);
  });

  it('every graph kernel belongs to its cudaGraphLaunch call: 300 calls, 40 kernels each', () => {
    for (const i of graphOps) {
      const k = host.opCall[i]!;
      expect(k).toBeGreaterThanOrEqual(0);
      expect(callName(host, k)).toBe('cudaGraphLaunch');
      expect(host.calls.correlation[k]).toBe(ops.correlation[i]);
      expect(host.calls.pid[k]).toBe(ops.pid[i]);
    }
    expect(byCall.size).toBe(300);
    for (const list of byCall.values()) expect(list).toHaveLength(40);
    // The call lookup by correlation id agrees: one call for the 40.
    for (const [k, list] of byCall) for (const i of list) expect(host.callOf(ops.pid[i]!, ops.correlation[i]!)).toBe(k);
  });

  it("each launch's kernels come in the graph's node order, the same 40 nodes every launch", () => {
    const first = byCall.values().next().value!.map(node);
    expect(new Set(first).size).toBe(40);
    expect([...first].sort((x, y) => x - y)).toEqual(first);
    for (const list of byCall.values()) {
      expect(list.map(node)).toEqual(first);
      // In start order too, each ending before the next starts: one stream, one node after the other.
      for (let j = 1; j < list.length; j++) expect(ops.start[list[j]!]!).toBeGreaterThanOrEqual(ops.end[list[j - 1]!]!);
    }
  });

  it("the dependency view: each kernel's launch is its cudaGraphLaunch, and after the first it follows the kernel of the node before", () => {
    const d = dependenciesOf(a.trace, host);
    for (const [k, list] of byCall) {
      list.forEach((i, j) => {
        const steps = dependenciesOfOp(d, i);
        const launch = steps.filter((s) => s.kind === 'launch');
        expect(launch).toHaveLength(1);
        expect(launch[0]!.from).toBe(k);
        // Issued when the call returned, or at its own start where the GPU began before that.
        expect(launch[0]!.atNs).toBe(Math.min(host.calls.end[k]!, ops.start[i]!));
        const stream = steps.find((s) => s.kind === 'stream');
        if (j > 0) {
          expect(stream?.from).toBe(list[j - 1]);
          expect(d.prev[i]).toBe(list[j - 1]);
        } else {
          // The first node follows the step's copy into the graph's input (static_x.copy_), not the previous launch's last node.
          expect(ops.kind[d.prev[i]!]).toBe(OpKind.Memcpy);
        }
      });
    }
  });

  it('graphs.ts: 300 launches, 12,000 kernels of graph 2 with 40 nodes, in the whole recording and in its steady state', () => {
    const want = {
      launches: 300,
      kernels: 12_000,
      memcpys: 0,
      memsets: 0,
      graphs: [{ graphId: 2, launches: 300, kernels: 12_000, memcpys: 0, memsets: 0, nodes: 40 }],
    };
    expect(a.graphs).toEqual(want);
    // Start-up (loading, warm-up, capture) ends before the first replay.
    expect(load('fix.sqlite', 'steady-state').a.graphs).toEqual(want);
  });

  it('the bug twin launches the same kernels one by one: no graph launch, no graph ids', () => {
    const bug = load('bug.sqlite');
    expect(bug.a.graphs).toEqual({ launches: 0, kernels: 0, memcpys: 0, memsets: 0, graphs: [] });
    expect(bug.db.prepare('SELECT count(*) FROM kernels WHERE graph_id IS NOT NULL OR graph_node_id IS NOT NULL').pluck().get()).toBe(0);
  });
});
