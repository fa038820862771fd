// profiler/serve/work-queue.ts: first come, first served within a client,
// turns round the clients, at most `concurrency` at once, work never
// started in the turn it was queued in, work no longer wanted dropped
// unstarted, and a full queue refusing at once (issue 27: one client's flood
// delayed every other's request behind all of it, without bound).
import { describe, expect, it } from 'vitest';
import { DROPPED, QueueFull, WorkQueue } from '../../profiler/serve/work-queue.ts';

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

  it("takes turns round the clients: one client's thousand requests delay another's by one of them", async () => {
    const q = new WorkQueue(1, { perClient: 1000 });
    const order: string[] = [];
    const flood = Array.from({ length: 1000 }, (_, i) =>
      q.run(
        () => order.push(`a${i}`),
        () => true,
        'A',
      ),
    );
    await turn();
    const b = q.run(
      () => order.push('b'),
      () => true,
      'B',
    );
    const c = q.run(
      () => order.push('c'),
      () => true,
      'C',
    );
    await Promise.all([...flood, b, c]);
    // Before: first come, first served, b and c after all thousand.
    expect(order.indexOf('b')).toBeLessThanOrEqual(3);
    expect(order.indexOf('c')).toBeLessThanOrEqual(4);
    expect(order.filter((x) => x.startsWith('a'))).toEqual(Array.from({ length: 1000 }, (_, i) => `a${i}`));
  });

  it("refuses at once past a client's share (QueueFull 'client'), then past the whole queue's (QueueFull 'all'), and goes on", async () => {
    const q = new WorkQueue(1, { perClient: 3, all: 5 });
    const ran: string[] = [];
    const run = (client: string, name: string) =>
      q.run(
        () => ran.push(name),
        () => true,
        client,
      );
    const a = [run('A', 'a1'), run('A', 'a2'), run('A', 'a3')];
    await expect(run('A', 'a4')).rejects.toEqual(expect.objectContaining({ name: 'QueueFull', scope: 'client' }));
    const b = [run('B', 'b1'), run('B', 'b2')];
    const refused = run('C', 'c1');
    await expect(refused).rejects.toBeInstanceOf(QueueFull);
    await expect(refused).rejects.toEqual(expect.objectContaining({ scope: 'all' }));
    expect(q.refused).toBe(2);
    await Promise.all([...a, ...b]);
    expect(ran.sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);
    expect(await run('A', 'again')).toBe(6);
  });

  it("drops work whose client has gone without using up that client's turn", async () => {
    const q = new WorkQueue(1);
    const order: string[] = [];
    let gone = false;
    const a = [1, 2, 3].map((n) =>
      q.run(
        () => order.push(`a${n}`),
        () => n === 3 || !gone,
        'A',
      ),
    );
    const b = q.run(
      () => order.push('b'),
      () => true,
      'B',
    );
    gone = true;
    expect(await Promise.all([...a, b])).toEqual([DROPPED, DROPPED, 1, 2]);
    expect(order).toEqual(['a3', 'b']);
    expect(q.dropped).toBe(2);
  });
});
