// app/ipc.ts: channel and argument checks before anything reaches a handler,
// and error mapping to ApiErrorShape.
import { describe, expect, it } from 'vitest';
import { apiMethods, type StreamScopeApi } from '../../profiler/contract/api.ts';
import { RecordingFileError } from '../../profiler/store/recording-error.ts';
import { ApiError, channelFor, checkArguments, dispatch, methodOf, toApiError } from '../../app/ipc.ts';

/** A handler that answers every method with its name and arguments (so a test sees what got through). */
function echoHandler(): { api: StreamScopeApi; calls: { method: string; args: unknown[] }[] } {
  const calls: { method: string; args: unknown[] }[] = [];
  const api = Object.fromEntries(
    apiMethods.map((m) => [
      m,
      async (...args: unknown[]) => {
        calls.push({ method: m, args });
        return { method: m, args };
      },
    ]),
  ) as unknown as StreamScopeApi;
  return { api, calls };
}

const goodWindow = { rows: ['stream:3', 'api:100:101', 'nvtx:100:101'], startNs: 0, endNs: 1_000_000, resolutionNs: 100 };

describe('channels', () => {
  it('one channel per API method, nothing else', () => {
    for (const m of apiMethods) expect(methodOf(channelFor(m))).toBe(m);
    for (const bad of ['streamscope:constructor', 'streamscope:__proto__', 'streamscope:', 'summary', 'other:summary', 'streamscope:toString', 42, null]) {
      expect(methodOf(bad)).toBeNull();
    }
  });

  it('an unknown channel is a bad request and reaches no handler', async () => {
    const { api, calls } = echoHandler();
    const r = await dispatch(api, 'streamscope:exec', ['rm -rf /']);
    expect(r).toEqual({ ok: false, error: { code: 'bad-request', message: expect.stringContaining("unknown channel 'streamscope:exec'") } });
    expect(calls).toHaveLength(0);
  });
});

describe('argument checks', () => {
  const cases: [string, unknown[], RegExp][] = [
    ['summary', [], /takes 1 argument/],
    ['summary', ['a', 'b'], /takes 1 argument/],
    ['summary', [42], /recordingId must be a string/],
    ['summary', [''], /recordingId must not be empty/],
    ['summary', ['x'.repeat(1000)], /too long/],
    ['openRecording', ['relative/file.sqlite'], /path must be absolute/],
    ['openRecording', ['/tmp/a\0b'], /NUL/],
    ['openRecording', [{ path: '/tmp/x' }], /path must be a string/],
    ['window', ['a1', { ...goodWindow, rows: ['stream:1; DROP TABLE kernels'] }], /not a row id/],
    ['window', ['a1', { ...goodWindow, startNs: 10, endNs: 5 }], /endNs must not be before startNs/],
    ['window', ['a1', { ...goodWindow, resolutionNs: 0 }], /resolutionNs must be positive/],
    ['window', ['a1', { ...goodWindow, startNs: Number.NaN }], /startNs must be a finite number/],
    ['window', ['a1', { ...goodWindow, startNs: 2 ** 60 }], /out of range/],
    ['window', ['a1', { ...goodWindow, extra: 1 }], /unknown field 'extra'/],
    ['window', ['a1', { rows: [], startNs: 0, endNs: 1 }], /resolutionNs is missing/],
    ['window', ['a1', []], /must be an object/],
    ['window', ['a1', { ...goodWindow, concurrency: {} }], /concurrency must be a list/],
    ['window', ['a1', { ...goodWindow, concurrency: [{ deviceId: 0, rows: ['stream:1'], buckets: 0 }] }], /concurrency\[0\]\.buckets must be in/],
    ['window', ['a1', { ...goodWindow, concurrency: [{ deviceId: 0, rows: ['nvtx:x'], buckets: 10 }] }], /concurrency\[0\]\.rows: 'nvtx:x' is not a row id/],
    ['concurrency', ['a1', { deviceId: 0, startNs: 0, endNs: 10, buckets: 0 }], /buckets must be in/],
    ['concurrency', ['a1', { deviceId: 1.5, startNs: 0, endNs: 10, buckets: 10 }], /deviceId must be an integer/],
    ['details', ['a1', { table: 'sqlite_schema', id: 1 }], /ref.table must be one of/],
    ['details', ['a1', { table: 'kernels', id: -1 }], /ref.id must be in/],
    ['details', ['a1', { table: 'kernels', id: '1' }], /ref.id must be an integer/],
    ['search', ['a1', { text: 'k', kinds: ['bogus'] }], /unknown kind 'bogus'/],
    ['search', ['a1', { text: 'k', limit: 0 }], /limit must be in/],
    ['search', ['a1', { text: 'k', after: { startNs: 1, table: 'strings', id: 1 } }], /after.table must be one of/],
    ['search', ['a1', { text: 'k', after: { startNs: 1, table: 'kernels' } }], /after.id is missing/],
    ['record', [{}], /exactly one of workload or command/],
    ['record', [{ workload: { name: 'normalise', scenario: 'concurrent' }, command: ['ls'] }], /exactly one/],
    ['record', [{ workload: { name: 'bitcoin', scenario: 'concurrent' } }], /unknown workload 'bitcoin'/],
    ['record', [{ workload: { name: 'normalise', scenario: 'nope' } }], /unknown scenario/],
    ['record', [{ workload: { name: 'normalise', scenario: 'serial', args: ['--output', '/etc/passwd'] } }], /unknown option '--output'/],
    ['record', [{ workload: { name: 'normalise', scenario: 'serial', args: ['--size', '1; rm -rf ~'] } }], /bad value for --size/],
    ['record', [{ command: [] }], /at least 1/],
    ['record', [{ command: ['', 'x'] }], /must name a program/],
    ['record', [{ command: ['python3'], captureRange: 'foo' }], /request.captureRange: --capture-range 'foo': expected nvtx:NAME/],
    ['record', [{ command: ['python3'], captureRange: 'nvtx:' }], /request.captureRange: .*name after 'nvtx:'/],
    ['record', [{ command: ['python3'], captureRange: 7 }], /captureRange must be a string/],
    ['recordStatus', [7], /jobId must be a string/],
    ['capabilities', [1], /takes 0 argument/],
  ];
  it.each(cases)('%s %j → bad-request (%s)', async (method, args, message) => {
    const { api, calls } = echoHandler();
    const r = await dispatch(api, channelFor(method as (typeof apiMethods)[number]), args);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('bad-request');
      expect(r.error.message).toMatch(message);
    }
    expect(calls).toHaveLength(0);
  });

  it('arguments that are not a list are refused', () => {
    expect(() => checkArguments('summary', 'a1')).toThrow(/arguments must be a list/);
  });

  it('good arguments reach the handler, checked and normalised', async () => {
    const { api, calls } = echoHandler();
    const good: [string, unknown[]][] = [
      ['capabilities', []],
      ['openRecording', ['/data/../data/run.sqlite']],
      ['window', ['a1', goodWindow]],
      ['concurrency', ['a1', { deviceId: 0, startNs: 0, endNs: 10, buckets: 100 }]],
      ['details', ['a1', { table: 'api_calls', id: 12 }]],
      ['search', ['a1', { text: '', kinds: ['kernel', 'memcpy-h2d'], limit: 50 }]],
      ['record', [{ workload: { name: 'matmul', scenario: 'events', args: ['--size', '1024', '--variant', 'tiled'] } }]],
      ['record', [{ command: ['python3', 'train.py', '--epochs', '1'] }]],
      ['record', [{ command: ['python3', 'train.py'], captureRange: 'nvtx:step' }]],
      ['recordStatus', ['rec-1']],
    ];
    for (const [method, args] of good) {
      const r = await dispatch(api, channelFor(method as (typeof apiMethods)[number]), args);
      expect(r, method).toMatchObject({ ok: true });
    }
    expect(calls.map((c) => c.method)).toEqual(good.map(([m]) => m));
    expect(calls[1]!.args).toEqual(['/data/run.sqlite']);
  });
});

describe('errors', () => {
  it('keep an API code and file; RecordingFileError is classified; the rest is internal', () => {
    expect(toApiError(new ApiError('no-gpu', 'no GPU'))).toEqual({ code: 'no-gpu', message: 'no GPU' });
    expect(toApiError({ code: 'locked', message: 'busy', file: '/a' })).toEqual({ code: 'locked', message: 'busy', file: '/a' });
    const f = (problem: string) => toApiError(new RecordingFileError('/r.sqlite', problem));
    expect(f('no such file')).toEqual({ code: 'not-found', message: '/r.sqlite: no such file', file: '/r.sqlite' });
    expect(f('recorded by a newer StreamScope (schema version 9; ...)').code).toBe('newer-schema');
    expect(f('database is locked by another process').code).toBe('locked');
    expect(f('database is corrupt or truncated: x').code).toBe('corrupt');
    expect(f('a SQLite database, but not a StreamScope recording (no StreamScope meta table)').code).toBe('not-a-recording');
    expect(f('not a SQLite database (not a StreamScope recording)').code).toBe('not-a-recording');
    expect(toApiError(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }))).toEqual({ code: 'internal', message: 'ENOENT' });
    expect(toApiError('boom')).toEqual({ code: 'internal', message: 'boom' });
  });

  it('a handler that throws comes back as an error envelope, never a rejection', async () => {
    const { api } = echoHandler();
    api.summary = async () => {
      throw new RecordingFileError('/x.sqlite', 'no such file');
    };
    await expect(dispatch(api, 'streamscope:summary', ['a1'])).resolves.toEqual({
      ok: false,
      error: { code: 'not-found', message: '/x.sqlite: no such file', file: '/x.sqlite' },
    });
  });
});
