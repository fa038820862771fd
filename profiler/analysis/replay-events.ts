// The what-if replay's event queue (replay-scheduler.ts): what happens next,
// in time order. An event is a time and a code: the op it concerns, and
// what happens to it.

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
  /** Removes the minimum; read it from time[0]/code[0] first. */
  pop(): void {
    const T = this.time;
    const C = this.code;
    const n = --this.size;
    const t = T[n]!;
    const c = C[n]!;
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
