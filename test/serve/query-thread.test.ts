// Browser mode reads recordings on the query thread, never on the server's
// own (issue 27): the server's thread only accepts connections, reads
// requests and writes answers the query thread serialized. With windows
// computed on the server's thread, a flood of window requests left a page's
// new connection in the kernel's listen queue (libuv accepts one a turn of
// the event loop): no answer in 10 s (`npm run bench -- --only
// serve-flood` measures it). Here, functionally: RecordingQuery's methods
// in this thread (where startServer runs) are never called, and the
// answers, binary and JSON, are those RecordingQuery gives.
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RecordingSummary, WindowRequest, WindowResponse } from '../../profiler/contract/api.ts';
import { decodeWindow, WINDOW_MEDIA_TYPE } from '../../profiler/contract/window-codec.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { SessionRegistry } from '../../profiler/query/session.ts';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { callApi } from '../helpers/api-call.ts';

const file = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');

let server: RunningServer;
let direct: SessionRegistry;
let directId: string;
const spies: ReturnType<typeof vi.spyOn>[] = [];

beforeAll(async () => {
  server = await startServer({ files: [file], port: 0, staticDir: import.meta.dirname });
  direct = new SessionRegistry();
  directId = direct.open(file).recordingId;
});
afterAll(async () => {
  await server.close();
  direct.closeAll();
});
afterEach(() => {
  for (const s of spies.splice(0)) s.mockRestore();
});

/** Spies on every RecordingQuery method of this thread's module: calls made here, not on the query thread. */
function spyOnThisThread() {
  for (const name of ['window', 'search', 'summary', 'details', 'overview'] as const) spies.push(vi.spyOn(RecordingQuery.prototype, name));
  return () => spies.reduce((n, s) => n + s.mock.calls.length, 0);
}

describe('the query thread', () => {
  it("answers windows in binary and JSON, summaries and searches, as RecordingQuery does, none computed on the server's thread", async () => {
    const [handle] = await callApi<{ recordingId: string }[]>(server, 'listRecordings');
    const id = handle!.recordingId;
    const callsHere = spyOnThisThread();
    const summary = await callApi<RecordingSummary & { openErrors: unknown[] }>(server, 'summary', id);
    expect(summary.openErrors).toEqual([]);
    const req: WindowRequest = { rows: summary.streams.map((s) => s.rowId), startNs: summary.startNs, endNs: summary.endNs, resolutionNs: 1 };

    const binary = await fetch(`http://127.0.0.1:${server.port}/api/window`, {
      method: 'POST',
      headers: { 'x-streamscope-token': server.token, accept: WINDOW_MEDIA_TYPE },
      body: JSON.stringify({ args: [id, req] }),
    });
    expect(binary.status).toBe(200);
    expect(binary.headers.get('content-type')).toBe(WINDOW_MEDIA_TYPE);
    const fromBytes = decodeWindow(new Uint8Array(await binary.arrayBuffer()));
    const json = await callApi<WindowResponse>(server, 'window', id, req);
    const search = await callApi<unknown>(server, 'search', id, { text: 'normalise', limit: 20 });
    // Before: each of these called RecordingQuery on this thread.
    expect(callsHere()).toBe(0);

    const expected = direct.get(directId).window(req);
    expect(expected.rows.flatMap((r) => r.items).length).toBeGreaterThan(10);
    expect(json).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(fromBytes.rows.map((r) => r.items.length)).toEqual(expected.rows.map((r) => r.items.length));
    expect(fromBytes.strings).toEqual(JSON.parse(JSON.stringify(expected.strings)));
    expect(search).toEqual(JSON.parse(JSON.stringify(direct.get(directId).search({ text: 'normalise', limit: 20 }))));
    const { openErrors: _, ...summaryItself } = summary;
    // The same recording, opened twice: its id is the session's.
    expect(summaryItself).toEqual({ ...JSON.parse(JSON.stringify(direct.get(directId).summary())), recordingId: id });
  });

  it('errors of the query thread keep their API code and status', async () => {
    await expect(callApi(server, 'summary', 'abc123')).rejects.toThrow(/^summary: HTTP 404 \{"code":"not-found"/);
    await expect(callApi(server, 'closeRecording', 'abc123')).rejects.toThrow(/HTTP 404 \{"code":"not-found"/);
  });
});
