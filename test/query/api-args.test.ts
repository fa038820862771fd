// The API's argument checks (profiler/query/api-args.ts) run the schemas of
// profiler/contract/api-schema.ts, the one definition of each argument (the
// argument types are derived from them, and tsc fails where a method's
// schema and its StreamScopeApi signature disagree). Here: one schema per
// method, and messages that name the method, the argument and what is
// wrong. The cases per method and per mistake are test/app/ipc.test.ts and
// test/serve/server.test.ts (the same checks behind IPC and HTTP).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiMethods } from '../../profiler/contract/api.ts';
import { API_ARGUMENTS, normalizeAbsolutePath } from '../../profiler/contract/api-schema.ts';
import { ApiError } from '../../profiler/query/api-error.ts';
import { checkArguments } from '../../profiler/query/api-args.ts';

const messageOf = (method: (typeof apiMethods)[number], args: unknown): string => {
  try {
    checkArguments(method, args);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('bad-request');
    return (err as Error).message;
  }
  throw new Error(`${method} ${JSON.stringify(args)} was accepted`);
};

describe('argument checks', () => {
  it('every API method has its argument list, and only those', () => {
    expect(Object.keys(API_ARGUMENTS).sort()).toEqual([...apiMethods].sort());
  });

  it('a message names the method, the argument (with its path inside it) and what is wrong', () => {
    const window = { rows: ['stream:1'], startNs: 0, endNs: 10, resolutionNs: 1 };
    expect(messageOf('window', ['a1', { ...window, startNs: '0' }])).toBe('window: request.startNs must be a finite number (ns)');
    expect(messageOf('window', ['a1', { ...window, concurrency: [{ deviceId: 0, rows: ['stream:1'], buckets: 1, extra: 1 }] }])).toBe(
      "window: request.concurrency[0] has an unknown field 'extra'",
    );
    expect(messageOf('search', ['a1', { text: '', kinds: ['kernel', 'bogus'] }])).toBe("search: request.kinds: unknown kind 'bogus'");
    expect(messageOf('compare', ['a1', 'b2', { kind: 'window', startNs: 5, endNs: 5 }])).toBe('compare: scope.endNs must be after scope.startNs');
    expect(messageOf('compare', ['a1', 'B2', { kind: 'whole' }])).toMatch(/^compare: otherId 'B2' is not a recording id/);
    expect(messageOf('record', [{ command: ['', 'x'] }])).toBe('record: request.command[0] must name a program');
    expect(messageOf('overview', ['a1'])).toBe('overview takes 4 argument(s), got 1');
    expect(messageOf('overview', ['a1', 100, { startNs: 5, endNs: 5 }, null])).toBe('overview: range.endNs must be after startNs');
  });

  it('what passes comes out as the handler gets it: known fields only, paths normalised', () => {
    expect(checkArguments('stats', ['a1', { kind: 'range', name: 'step' }])).toEqual(['a1', { kind: 'range', name: 'step' }]);
    expect(checkArguments('openRecording', ['/data/./x/../run.sqlite'])).toEqual(['/data/run.sqlite']);
  });

  it('recording paths are normalised as Node normalises an absolute POSIX path', () => {
    for (const p of [
      '/',
      '//',
      '/a',
      '/a/',
      '/a//b',
      '/a/./b',
      '/a/b/..',
      '/a/b/../',
      '/..',
      '/../a',
      '/a/../../b/',
      '/a/.',
      '/a/./',
      '/a/b/c/../../d',
      '/.hidden/..x/x..',
    ]) {
      expect(normalizeAbsolutePath(p), p).toBe(path.posix.normalize(p));
    }
  });
});
