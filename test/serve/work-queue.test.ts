// profiler/serve/work-queue.ts: first come, first served, at most
// `concurrency` at once, work never started in the turn it was queued in,
// and work no longer wanted dropped unstarted.
import { describe, expect, it } from 'vitest';
import { DROPPED, WorkQueue } from '../../profiler/serve/work-queue.ts';

const turn = () => new Promise((r) => setImmediate(r));

describe('WorkQueue', () => {
  it('runs work in the order it came, one at a time, each in a turn of the event loop of its own', async () => {
    const q = new WorkQueue(1);
    const log: string[] = [];
    const runs = [1, 2, 3].map((n) =>
      q.run(
        () => (log.push(`run ${n}`), n),
        () => true,
      ),
    );
    log.push('queued');
    expect(await Promise.all(runs)).toEqual([1, 2, 3]);
    expect(log).toEqual(['queued', 'run 1', 'run 2', 'run 3']);
  });

  it('does not start work in the turn it was queued in (the end of its connection is read in the next)', async () => {
    const q = new WorkQueue(1);
    let started = false;
    const r = q.run(
      () => (started = true),
      () => true,
    );
    await turn();
    expect(started).toBe(false);
    await r;
    expect(started).toBe(true);
  });

  it('drops work whose client has gone by its turn, and counts it', async () => {
    const q = new WorkQueue(1);
    let gone = false;
    const ran: number[] = [];
    const a = q.run(
      () => ran.push(1),
      () => true,
    );
    const b = q.run(
      () => ran.push(2),
      () => !gone,
    );
    const c = q.run(
      () => ran.push(3),
      () => true,
    );
    gone = true;
    expect([await a, await b, await c]).toEqual([1, DROPPED, 2]);
    expect(ran).toEqual([1, 3]);
    expect(q.dropped).toBe(1);
  });

  it('keeps at most `concurrency` promises running, and the next one ready', async () => {
    const q = new WorkQueue(2);
    let running = 0;
    let most = 0;
    const work = async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
    };
    await Promise.all(Array.from({ length: 8 }, () => q.run(work, () => true)));
    expect(most).toBe(2);
    expect(q.waiting).toBe(0);
  });

  it('passes on what work throws or rejects with, and goes on', async () => {
    const q = new WorkQueue(1);
    await expect(
      q.run(
        () => {
          throw new Error('sync');
        },
        () => true,
      ),
    ).rejects.toThrow('sync');
    await expect(
      q.run(
        () => Promise.reject(new Error('async')),
        () => true,
      ),
    ).rejects.toThrow('async');
    expect(
      await q.run(
        () => 'next',
        () => true,
      ),
    ).toBe('next');
  });
});
