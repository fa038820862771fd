// The API as the page calls it (client.ts PageApi): every time in an
// argument must be a BrandedNs, made with toNs; a plain number is refused by
// the type checker (the @ts-expect-error lines fail `tsc -p
// renderer/tsconfig.json` once a number passes), and toNs costs nothing.
import { describe, expect, it } from 'vitest';
import { toNs } from '../../../profiler/contract/time.ts';
import type { PageApi } from './client.ts';

describe('the API as the page calls it', () => {
  const calls: unknown[][] = [];
  const api = new Proxy(
    {},
    {
      get:
        (_, method) =>
        (...args: unknown[]) => {
          calls.push([method, ...args]);
          return Promise.resolve(null);
        },
    },
  ) as PageApi;

  it('takes the times of its arguments as BrandedNs only', () => {
    const request = { rows: ['stream:1'], startNs: toNs(0), endNs: toNs(1_000), resolutionNs: toNs(4) };
    void api.window('ab', request);
    // @ts-expect-error a plain number is not a time the API takes
    void api.window('ab', { ...request, startNs: 0 });
    // @ts-expect-error nor a resolution
    void api.waitSpans('ab', { ...request, resolutionNs: 4 });
    void api.findings('ab', { kind: 'window', startNs: toNs(0), endNs: toNs(10) });
    // @ts-expect-error nor a scope's window
    void api.stats('ab', { kind: 'window', startNs: 0, endNs: 10 });
    // @ts-expect-error nor a search cursor
    void api.search('ab', { text: 'k', after: { startNs: 5, table: 'kernels', id: 1 } });
    void api.overview('ab', 100, { startNs: toNs(0), endNs: toNs(10) }, null);
    // Arguments without times are as the contract says.
    void api.details('ab', { table: 'kernels', id: 3 });
    expect(calls.map((c) => c[0])).toEqual(['window', 'window', 'waitSpans', 'findings', 'stats', 'search', 'overview', 'details']);
  });

  it('brands without changing the number', () => {
    expect(toNs(1_234.5)).toBe(1_234.5);
    expect(toNs(-3)).toBe(-3);
  });
});
