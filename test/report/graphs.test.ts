// `streamscope report` on CUDA graph launches, through the CLI as a user
// runs it, on a real recording: PyTorch 2.11 on an H200, a small network
// captured once with torch.cuda.graph and replayed 300 times
// (test/fixtures/corpus/torch-launch-bound-graphs/fix.sqlite). The Kernels
// section says how its kernels came — one line with the launches, the
// kernels and each graph's nodes, against SQL on the file — and --json holds
// the same as `graphs`. The same program launching its kernels one by one
// (bug.sqlite) gets no such line. The text sentences themselves
// (contract/graphs.ts) on counts the recording does not hold.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { graphLaunchesText, graphLaunchText, graphOpsText } from '../../profiler/contract/graphs.ts';

const cli = path.resolve(import.meta.dirname, '../../profiler/cli/streamscope.ts');
const dir = path.resolve(import.meta.dirname, '../fixtures/corpus/torch-launch-bound-graphs');
const fix = path.join(dir, 'fix.sqlite');
const bug = path.join(dir, 'bug.sqlite');

function report(file: string, ...args: string[]): string {
  const r = spawnSync(process.execPath, [cli, 'report', file, ...args], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe('report: CUDA graph launches', () => {
  it("the Kernels section says how many kernels came from how many graph launches, and each graph's nodes, as SQL counts them", () => {
    const db = new Database(fix, { readonly: true });
    const sql = db
      .prepare(
        `SELECT count(*) AS kernels, count(DISTINCT a.id) AS launches, count(DISTINCT k.graph_node_id) AS nodes, min(k.graph_id) AS graph
         FROM kernels k JOIN contexts c ON c.id = k.context_id
         JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = k.correlation_id JOIN strings s ON s.id = a.name_id
         WHERE s.value = 'cudaGraphLaunch'`,
      )
      .get() as { kernels: number; launches: number; nodes: number; graph: number };
    db.close();
    expect(sql).toEqual({ kernels: 12_000, launches: 300, nodes: 40, graph: 2 });
    const text = report(fix);
    const lines = text.split('\n');
    const at = lines.indexOf('Kernels');
    expect(at).toBeGreaterThan(0);
    // Right under the heading, before the table that counts the same kernels name by name.
    expect(lines[at + 1]).toBe('  12,000 kernels from 300 CUDA graph launches (graph 2: 40 nodes)');
    expect(lines[at + 2]).toMatch(/^\s+count\s+total/);
    // The table's counts add up to at least the graph's kernels (the few launched one by one besides).
    const counts = lines
      .slice(at + 4)
      .filter((l) => /^\s+\d+\s/.test(l))
      .map((l) => Number(l.trim().split(/\s+/)[0]));
    expect(counts.reduce((s, n) => s + n, 0)).toBeGreaterThanOrEqual(12_000);
    // The whole recording: the same launches (start-up, with the capture, runs none).
    expect(report(fix, '--whole')).toContain('\n  12,000 kernels from 300 CUDA graph launches (graph 2: 40 nodes)\n');
  });

  it('--json: graphs, with reportVersion 9', () => {
    const j = JSON.parse(report(fix, '--json')) as { reportVersion: number; graphs: unknown };
    expect(j.reportVersion).toBe(9);
    expect(j.graphs).toEqual({
      launches: 300,
      kernels: 12_000,
      memcpys: 0,
      memsets: 0,
      graphs: [{ graphId: 2, launches: 300, kernels: 12_000, memcpys: 0, memsets: 0, nodes: 40 }],
    });
  });

  it('the bug twin launches its kernels one by one: no graph line, graphs empty', () => {
    expect(report(bug)).not.toContain('CUDA graph launch');
    expect((JSON.parse(report(bug, '--json')) as { graphs: unknown }).graphs).toEqual({ launches: 0, kernels: 0, memcpys: 0, memsets: 0, graphs: [] });
  });

  it('the sentences for other counts: copies and memsets, several graphs, one launch, ids not recorded', () => {
    expect(graphOpsText({ kernels: 3, memcpys: 1, memsets: 1 })).toBe('3 kernels, 1 copy and 1 memset');
    expect(graphOpsText({ kernels: 0, memcpys: 2, memsets: 0 })).toBe('2 copies');
    expect(graphOpsText({ kernels: 1, memcpys: 0, memsets: 0 })).toBe('1 kernel');
    expect(
      graphLaunchesText({
        launches: 1_001,
        kernels: 2_000,
        memcpys: 1,
        memsets: 0,
        graphs: [
          { graphId: 3, launches: 1_000, kernels: 1_999, memcpys: 1, memsets: 0, nodes: 2 },
          { graphId: null, launches: 1, kernels: 1, memcpys: 0, memsets: 0, nodes: 0 },
        ],
      }),
    ).toBe('2,000 kernels and 1 copy from 1,001 CUDA graph launches (graph 3: 2 nodes; 1 operation of no recorded graph)');
    const op = { graphId: 7, nodeId: 42, call: null, kernels: 2, memcpys: 0, memsets: 1, nodes: 2, position: 3 };
    expect(graphLaunchText(op)).toBe('graph 7, node 42, launched by a call the recording does not hold with 2 kernels and 1 memset');
    expect(graphLaunchText({ ...op, nodeId: null, call: { ref: { table: 'api_calls', id: 9 }, name: 'cuGraphLaunch' } })).toBe(
      'graph 7, launched by cuGraphLaunch (call id 9) with 2 kernels and 1 memset',
    );
  });
});
