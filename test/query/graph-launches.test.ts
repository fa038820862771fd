// The details of CUDA graph launches (ItemDetails.graph, query/item-details.ts)
// on a real recording: PyTorch 2.11 on an H200, a small network captured
// once with torch.cuda.graph and replayed 300 times (one cudaGraphLaunch a
// step, 40 kernels each; test/fixtures/corpus/torch-launch-bound-graphs).
// A kernel is told its graph, node, launching call and place in the launch,
// the call its 40 kernels; checked against SQL on the file. The same
// program launching its kernels one by one (bug.sqlite) has none of it.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';

const dir = path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs');
const file = path.join(dir, 'fix.sqlite');
const q = new RecordingQuery('graphs', file);
const db = new Database(file, { readonly: true });
afterAll(() => {
  q.close();
  db.close();
});

interface Launch {
  call: number;
  correlation: number;
  kernels: { id: number; node: number; start: number }[];
}

/** The cudaGraphLaunch calls, each with its kernels in start order, from SQL. */
const launches: Launch[] = (
  db
    .prepare(
      `SELECT a.id AS call, a.correlation_id AS correlation FROM api_calls a JOIN strings s ON s.id = a.name_id
       WHERE s.value = 'cudaGraphLaunch' ORDER BY a.start_ns`,
    )
    .all() as { call: number; correlation: number }[]
).map((l) => ({
  ...l,
  kernels: db
    .prepare(
      `SELECT k.id, k.graph_node_id AS node, k.start_ns AS start FROM kernels k JOIN contexts c ON c.id = k.context_id
       JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = k.correlation_id WHERE a.id = ? ORDER BY k.start_ns, k.id`,
    )
    .all(l.call) as Launch['kernels'],
}));

describe('CUDA graph launches in item details', () => {
  it('the recording: 300 cudaGraphLaunch calls, 40 kernels of graph 2 each', () => {
    expect(launches).toHaveLength(300);
    for (const l of launches) expect(l.kernels).toHaveLength(40);
    expect(db.prepare('SELECT count(*) FROM kernels WHERE graph_id = 2').pluck().get()).toBe(12_000);
  });

  it("a graph kernel: its graph, node, launching call, the launch's kernels and its place among them", () => {
    // Every kernel of the first launch, the tenth, and the last.
    for (const l of [launches[0]!, launches[9]!, launches.at(-1)!]) {
      l.kernels.forEach((k, j) => {
        const d = q.details({ table: 'kernels', id: k.id });
        expect(d.fields.graph_id).toBe(2);
        expect(d.fields.graph_node_id).toBe(k.node);
        expect(d.graph).toEqual({
          graphId: 2,
          nodeId: k.node,
          call: { ref: { table: 'api_calls', id: l.call }, name: 'cudaGraphLaunch' },
          kernels: 40,
          memcpys: 0,
          memsets: 0,
          nodes: 40,
          position: j + 1,
        });
        expect(d.fields.graph_launch).toBe(`graph 2, node ${k.node}, launched by cudaGraphLaunch (call id ${l.call}) with 40 kernels`);
        // Launched by the one call, as any kernel is.
        expect(d.related.map((r) => [r.ref, r.name])).toEqual([[{ table: 'api_calls', id: l.call }, 'cudaGraphLaunch']]);
      });
    }
  });

  it('the cudaGraphLaunch call: the number of kernels it launched, all of them related, in start order', () => {
    for (const l of [launches[0]!, launches[150]!]) {
      const d = q.details({ table: 'api_calls', id: l.call });
      expect(d.name).toBe('cudaGraphLaunch');
      expect(d.graph).toEqual({ graphId: 2, nodeId: null, call: null, kernels: 40, memcpys: 0, memsets: 0, nodes: 40, position: null });
      expect(d.fields.graph_launch).toBe('graph 2: 40 kernels (40 nodes)');
      expect(d.related.map((r) => r.ref)).toEqual(l.kernels.map((k) => ({ table: 'kernels', id: k.id })));
      expect(new Set(d.related.map((r) => r.kind))).toEqual(new Set(['kernel']));
    }
  });

  it("work launched one by one has no graph: the recording's other kernels and calls, and every kernel of the bug twin", () => {
    const plain = db
      .prepare(
        `SELECT k.id AS kernel, a.id AS call FROM kernels k JOIN contexts c ON c.id = k.context_id
         JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = k.correlation_id WHERE k.graph_id IS NULL LIMIT 5`,
      )
      .all() as { kernel: number; call: number }[];
    expect(plain).toHaveLength(5);
    for (const p of plain) {
      const k = q.details({ table: 'kernels', id: p.kernel });
      expect(k.graph).toBeNull();
      expect(k.fields).not.toHaveProperty('graph_launch');
      expect(q.details({ table: 'api_calls', id: p.call }).graph).toBeNull();
    }
    // A copy on the graph's stream, between two launches, is no graph's either.
    const copy = db.prepare('SELECT id FROM memcpys WHERE graph_id IS NULL LIMIT 1').pluck().get() as number;
    expect(q.details({ table: 'memcpys', id: copy }).graph).toBeNull();

    const bug = new RecordingQuery('bug', path.join(dir, 'bug.sqlite'));
    try {
      const bugDb = new Database(path.join(dir, 'bug.sqlite'), { readonly: true });
      const ids = bugDb.prepare('SELECT id FROM kernels ORDER BY start_ns LIMIT 40 OFFSET 4000').pluck().all() as number[];
      expect(bugDb.prepare('SELECT count(*) FROM kernels WHERE graph_id IS NOT NULL').pluck().get()).toBe(0);
      bugDb.close();
      for (const id of ids) expect(bug.details({ table: 'kernels', id }).graph).toBeNull();
    } finally {
      bug.close();
    }
  });
});
