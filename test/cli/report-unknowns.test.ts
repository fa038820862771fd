// What `streamscope report` says where a recording does not know: run as a
// user runs it on a real PyTorch profiler trace (Kineto JSON, H100), which
// records no device attributes and no stream creation. Concurrent kernels
// are "unknown" there, not "no"; each stream's kind is the one the
// timeline labels its row with (one function: profiler/contract/streams.ts),
// on the import and on a recording of the collector's.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordingSummary } from '../../profiler/contract/api.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { buildGroups } from '../../renderer/src/timeline/rows.ts';
import { tempDir } from '../helpers/native.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const run = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
// A PyTorch program recorded by the collector (H100): its streams were seen created.
const recorded = path.join(repoRoot, 'test/fixtures/recordings/torch_prefetch.sqlite');

let dir: string;
let imported: string;
beforeAll(() => {
  dir = tempDir('report-unknowns');
  imported = path.join(dir, 'torch-streams.sqlite');
  const r = run(['import', path.join(repoRoot, 'test/fixtures/kineto/torch_streams_h100.json'), '-o', imported]);
  expect(r.status, r.stderr).toBe(0);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function summaryOf(file: string): RecordingSummary {
  const q = new RecordingQuery('r1', file);
  try {
    return q.summary();
  } finally {
    q.close();
  }
}

/** The rows of a text table under its title: header cells → values, one object per row. */
function table(text: string, title: RegExp): Record<string, string>[] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => title.test(l));
  const [header, rule, ...rest] = lines.slice(at + 1);
  // Columns by the rule's dashes: names and values may hold single spaces.
  const spans = [...rule!.matchAll(/-+/g)].map((m) => [m.index!, m.index! + m[0].length] as const);
  const cells = (line: string) => spans.map(([a, b], i) => line.slice(a, i === spans.length - 1 ? undefined : b).trim());
  const names = cells(header!);
  const end = rest.findIndex((l) => l.trim() === '');
  return (end < 0 ? rest : rest.slice(0, end)).map((l) => Object.fromEntries(cells(l).map((v, i) => [names[i]!, v])));
}

describe('streamscope report where the recording does not know', () => {
  it('an imported trace: concurrent kernels unknown, each stream of unknown kind (never seen created)', () => {
    const r = run(['report', imported]);
    expect(r.status, r.stderr).toBe(0);
    const devices = table(r.stdout, /^Devices$/);
    expect(devices).toHaveLength(1);
    expect(devices[0]).toMatchObject({ name: 'NVIDIA H100 80GB HBM3', 'concurrent kernels': 'unknown' });
    const streams = table(r.stdout, /^Streams/);
    expect(streams.map((s) => s.stream)).toEqual(['7', '13', '17', '21', '25']);
    for (const s of streams) expect(s.kind, `stream ${s.stream}`).toBe('unknown');
  });

  it("a recording of the collector says yes, and its streams' kinds: PyTorch's own streams are non-blocking", () => {
    const r = run(['report', recorded, '--whole']);
    expect(table(r.stdout, /^Devices$/)[0]!['concurrent kernels']).toBe('yes');
    const kinds = new Set(table(r.stdout, /^Streams/).map((s) => s.kind));
    expect([...kinds].sort()).toEqual(['legacy-default', 'non-blocking']);
  });

  it.each([
    ['imported', () => imported],
    ['recorded', () => recorded],
  ])('%s: the report, its JSON and the timeline row of each stream name the same kind', (_, file) => {
    const json = JSON.parse(run(['report', file(), '--json', '--whole']).stdout) as { streams: { streamId: number; kind: string; flags: string[] }[] };
    const text = table(run(['report', file(), '--whole']).stdout, /^Streams/);
    const summary = summaryOf(file());
    const rows = buildGroups(summary).flatMap((g) => g.rows);
    // The timeline's streams (those with work): each in the report, under the same kind.
    expect(summary.streams.length).toBeGreaterThan(0);
    for (const st of summary.streams) {
      const reported = json.streams.find((s) => s.streamId === st.id);
      expect(reported?.kind, `stream ${st.id}`).toBe(st.kind);
      const row = rows.find((x) => x.id === st.rowId)!;
      expect(row.detail.split(' · ')[0], `stream ${st.id}`).toBe(st.kind);
      expect(text.find((t) => t.stream === String(st.cuptiStreamId) && t.pid === String(st.pid))?.kind, `stream ${st.id}`).toBe(st.kind);
    }
  });
});
