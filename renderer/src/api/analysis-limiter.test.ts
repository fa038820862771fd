// The page's limit on analyses on the wire (analysis-limiter.ts): never more
// than the limit at once in a lane, the rest in the order asked; a failed
// call frees its place.
import { describe, expect, it } from 'vitest';
import { LANE_LIMITS, laneOf, limiter } from './analysis-limiter.ts';

/** A call that runs until released, saying when it starts. */
function held(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { run: () => (started.push(name), done.then(() => name)), release };
}

const turn = () => new Promise((r) => setTimeout(r, 0));

describe('analysis limiter', () => {
  it('runs at most the limit at once, the others in the order asked', async () => {
    const limit = limiter(2);
    const started: string[] = [];
    const calls = ['a', 'b', 'c', 'd'].map((n) => held(started, n));
    const answers = calls.map((c) => limit(c.run));
    await turn();
    expect(started).toEqual(['a', 'b']);
    calls[1]!.release();
    await turn();
    expect(started).toEqual(['a', 'b', 'c']);
    for (const c of calls) c.release();
    expect(await Promise.all(answers)).toEqual(['a', 'b', 'c', 'd']);
  });

  it("a panel's lane is not held up by the other analyses, nor the Stats tab by the findings", async () => {
    expect([laneOf('findings'), laneOf('scopeInfo'), laneOf('stats'), laneOf('iterations'), laneOf('waitSpans')]).toEqual([
      'findings',
      'findings',
      'stats',
      'others',
      'others',
    ]);
    // Four on the wire at most: two of Chromium's six connections to a host stay for windows and polls.
    expect(Object.values(LANE_LIMITS).reduce((a, b) => a + b, 0)).toBe(4);
    const [findings, stats, others] = [limiter(LANE_LIMITS.findings), limiter(LANE_LIMITS.stats), limiter(LANE_LIMITS.others)];
    const started: string[] = [];
    const slow = ['iterations', 'waitSpans', 'ranges'].map((n) => held(started, n));
    for (const c of slow) void others(c.run);
    // The findings and their label on the wire, not answered yet (the diagnosis of a large recording).
    const panel = ['findings', 'scopeInfo'].map((n) => held(started, n));
    for (const c of panel) void findings(c.run);
    expect(await stats(() => Promise.resolve('stats'))).toBe('stats');
    expect(started).toEqual(['iterations', 'findings', 'scopeInfo']);
    for (const c of [...slow, ...panel]) c.release();
  });

  it('a call that fails frees its place', async () => {
    const limit = limiter(1);
    await expect(limit(() => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await limit(() => Promise.resolve(7))).toBe(7);
  });
});
