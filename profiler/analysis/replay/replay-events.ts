// The what-if replay's event queues (replay-scheduler.ts): what happens
// next, in time order. An event is a time and a code: the op it concerns,
// and what happens to it. The scheduler keeps a heap and runs (FIFOs of
// events that come in order) and takes the smallest (time, code) of their
// fronts: the order one heap would give.

/**
 * Event codes: the op index, plus BEGIN when it starts on a resource it
 * already holds (a queued copy after the engine's handoff gap, or a
 * stream's next copy the engine goes on with), READY when it may request
 * its resource; neither: it completes. At equal times completions (the
 * smaller codes) come first, so a freed engine or SMs are seen by the ops
 * that become ready then.
 */
export const BEGIN = 1 << 29;
export const READY = 2 << 29;
export const OP_MASK = BEGIN - 1;

/**
 * Growable 4-ary min-heap of (time, code) in typed arrays: half the depth
 * of a binary heap, which the profile showed as the event loop's main
 * cost. Ties by code (completions before readiness, then by op), so the
 * replay is deterministic.
 */
export class EventHeap {
  time: Float64Array;
  code: Int32Array;
  size = 0;
  constructor(capacity = 1024) {
    this.time = new Float64Array(capacity);
    this.code = new Int32Array(capacity);
  }
  push(t: number, c: number): void {
    if (this.size === this.time.length) {
      const time = new Float64Array(this.size * 2);
      time.set(this.time);
      this.time = time;
      const code = new Int32Array(this.size * 2);
      code.set(this.code);
      this.code = code;
    }
    const T = this.time;
    const C = this.code;
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 2;
      const tp = T[p]!;
      if (tp < t || (tp === t && C[p]! <= c)) break;
      T[i] = tp;
      C[i] = C[p]!;
      i = p;
    }
    T[i] = t;
    C[i] = c;
  }
  /** The top's time was raised in place (time[0]): moves it down to where it now belongs. */
  siftTop(): void {
    this.sink(this.time[0]!, this.code[0]!, this.size);
  }
  /** Removes the minimum; read it from time[0]/code[0] first. */
  pop(): void {
    const n = --this.size;
    this.sink(this.time[n]!, this.code[n]!, n);
  }
  /** Places (t, c) at the top of the first n entries and moves it down to where it belongs. */
  private sink(t: number, c: number, n: number): void {
    const T = this.time;
    const C = this.code;
    let i = 0;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= n) break;
      // The smallest of up to four children.
      let m = first;
      let tm = T[first]!;
      const last = first + 4 < n ? first + 4 : n;
      for (let j = first + 1; j < last; j++) {
        const tj = T[j]!;
        if (tj < tm || (tj === tm && C[j]! < C[m]!)) {
          m = j;
          tm = tj;
        }
      }
      if (t < tm || (t === tm && c <= C[m]!)) break;
      T[i] = tm;
      C[i] = C[m]!;
      i = m;
    }
    T[i] = t;
    C[i] = c;
  }
}

/**
 * A run of events queued in (time, code) order: a FIFO. A host thread
 * issues its ops with readiness times that mostly grow (its calls' starts
 * plus a launch lag), so most READY events can be appended here and taken
 * from the front, not sifted through the heap. An event that would come
 * before the last one queued is refused: the caller queues it on the heap.
 * The scheduler takes the smaller (time, code) of the two fronts, so the
 * events come out in the order a single heap gives.
 */
export class EventRun {
  time = new Float64Array(1024);
  code = new Int32Array(1024);
  /** The events are time/code[head .. tail). */
  head = 0;
  tail = 0;
  /** Whether it holds an event and that comes before (t, c), or `any` (nothing to compare with). */
  leads(t: number, c: number, any: boolean): boolean {
    const h = this.head;
    if (h === this.tail) return false;
    const rt = this.time[h]!;
    return any || rt < t || (rt === t && this.code[h]! < c);
  }
  /** Queues (t, c) if it comes no earlier than the last one queued: true; else false. */
  append(t: number, c: number): boolean {
    let n = this.tail;
    if (n > this.head) {
      const last = this.time[n - 1]!;
      if (t < last || (t === last && c < this.code[n - 1]!)) return false;
    } else this.head = n = 0;
    if (n === this.time.length) {
      // Full: slide the events to the front, or double the room where
      // more than half of it is in use.
      const live = n - this.head;
      if (live * 2 > n) {
        const time = new Float64Array(n * 2);
        time.set(this.time.subarray(this.head, n));
        this.time = time;
        const code = new Int32Array(n * 2);
        code.set(this.code.subarray(this.head, n));
        this.code = code;
      } else {
        this.time.copyWithin(0, this.head, n);
        this.code.copyWithin(0, this.head, n);
      }
      this.head = 0;
      n = live;
    }
    this.time[n] = t;
    this.code[n] = c;
    this.tail = n + 1;
    return true;
  }
}
