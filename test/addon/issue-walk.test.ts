// The host model's walk in issue order (native/addon/src/issue_walk.cc) on
// inputs small enough to check by hand: a launch and a synchronous copy on
// one stream. Every real recording among the fixtures goes through it in
// the replay tests (test/analysis/replay-identity.test.ts pins their
// results); here, what each output means, and an input built wrong refused
// by name instead of read past its end.
import { describe, expect, it } from 'vitest';
import { issueWalkNatively, type IssueWalkInputs } from '../../profiler/native/addon.ts';
import { NameClass, WaitKind } from '../../profiler/analysis/replay/replay-host.ts';
import { OpCategory, OpKind } from '../../profiler/analysis/trace.ts';

/** A kernel launched by call 0 ([0, 10] ns), then a synchronous copy of call 1 ([20, 200] ns) after it, both on stream 0. */
function walkInputs() {
  const out = {
    order: new Int32Array(2),
    callPos: new Int32Array(2),
    waitKind: new Uint8Array(2),
    waitArg: new Int32Array(2),
    waitCtx: new Int32Array(2),
    cost: new Float64Array(2),
    waitsOwn: new Uint8Array(2),
    depEnd: new Float64Array(2),
    lastOfStream: new Int32Array(1),
    eventPos: new Int32Array(0),
    eventSeq: new Int32Array(0),
  };
  const inputs: IssueWalkInputs = {
    ops: 2,
    calls: 2,
    streams: 1,
    contexts: 1,
    threads: 1,
    allOpsHaveCalls: 1,
    legacyFlag: 1,
    notBlockingFlags: 3,
    minCallCostNs: 1_000,
    clockSlackNs: 5_000,
    opStart: Float64Array.of(15, 60),
    opEnd: Float64Array.of(50, 190),
    isAsync: Uint8Array.of(1, 0),
    kind: Uint8Array.of(OpKind.Kernel, OpKind.Memcpy),
    category: Uint8Array.of(OpCategory.Compute, OpCategory.HtoD),
    detail: Int32Array.of(7, 2 * 16 + 2),
    opCall: Int32Array.of(0, 1),
    streamOfOp: Int32Array.of(0, 0),
    ctxOfOp: Int32Array.of(0, 0),
    streamFlags: Int32Array.of(0),
    streamPid: Int32Array.of(100),
    ctxPid: Int32Array.of(100),
    callStart: Float64Array.of(0, 20),
    callEnd: Float64Array.of(10, 200),
    callPid: Int32Array.of(100, 100),
    callName: Int32Array.of(1, 2),
    nameIds: Int32Array.of(1, 2),
    nameClasses: Uint8Array.of(NameClass.Other, NameClass.Other),
    callOrder: null,
    firstOp: null,
    callOps: null,
    threadOf: null,
    outer: Int32Array.of(0, 1),
    recordCall: new Int32Array(0),
    recordPid: new Int32Array(0),
    recordStream: new Int32Array(0),
    recordEvent: new Float64Array(0),
    waitCall: new Int32Array(0),
    waitPid: new Int32Array(0),
    waitStream: new Int32Array(0),
    waitEvent: new Float64Array(0),
    ...out,
  };
  return { inputs, out };
}

describe('issueWalk: the host model walk, native', () => {
  it("issues the ops in their calls' order; the copy waits for itself, its CPU time what it took after the copy ended", () => {
    const { inputs, out } = walkInputs();
    issueWalkNatively(inputs);
    expect([...out.order]).toEqual([0, 1]);
    expect([...out.callPos]).toEqual([0, 1]);
    // The kernel depended on nothing; the copy on the kernel before it on its stream.
    expect([...out.depEnd]).toEqual([-Infinity, 50]);
    expect([...out.lastOfStream]).toEqual([1]);
    // The launch waited for nothing: its CPU time is its length. The copy (synchronous) waited for its own op, which ended
    // at 190: 10 ns after, floored at the 1 µs a blocked call's tail is given.
    expect([...out.waitKind]).toEqual([WaitKind.None, WaitKind.Op]);
    expect(out.waitArg[1]).toBe(1);
    expect([...out.waitsOwn]).toEqual([0, 1]);
    expect([...out.cost]).toEqual([10, 1_000]);
  });

  it("a copy that ends after its call returned (past the clocks' slack) did not hold the call: no wait, its whole length", () => {
    const { inputs, out } = walkInputs();
    (inputs.opEnd as Float64Array)[1] = 200 + 5_001;
    issueWalkNatively(inputs);
    expect(out.waitKind[1]).toBe(WaitKind.None);
    expect(out.waitsOwn[1]).toBe(1);
    expect(out.cost[1]).toBe(180);
  });

  it('an index out of range is refused by name before the walk begins', () => {
    const { inputs, out } = walkInputs();
    inputs.streamOfOp = Int32Array.of(0, 3);
    expect(() => issueWalkNatively(inputs)).toThrow('issueWalk: streamOfOp[1] = 3 is outside 0..0');
    expect([...out.order]).toEqual([0, 0]);
    inputs.streamOfOp = Int32Array.of(0, 0);
    inputs.opCall = Int32Array.of(0, 2);
    expect(() => issueWalkNatively(inputs)).toThrow('issueWalk: opCall[1] = 2 is outside -1..1');
    // Below the range too (the check's one pass compares unsigned differences: -2 wraps past the range's length).
    inputs.opCall = Int32Array.of(0, -2);
    expect(() => issueWalkNatively(inputs)).toThrow('issueWalk: opCall[1] = -2 is outside -1..1');
    inputs.opCall = Int32Array.of(0, -2147483648);
    expect(() => issueWalkNatively(inputs)).toThrow('issueWalk: opCall[1] = -2147483648 is outside -1..1');
  });

  it("places each call's event records, then its stream waits, in the list's order, whether the calls are walked in index order or by a call order", () => {
    // Records listed out of their calls' order (call 1's, call 0's, call 1's) and a wait of call 1: each call's in the
    // list's order, records before waits (a wait as records + its index).
    const walk = (callOrder: Int32Array | null) => {
      const { inputs } = walkInputs();
      Object.assign(inputs, {
        callOrder,
        recordCall: Int32Array.of(1, 0, 1),
        recordPid: Int32Array.of(100, 100, 100),
        recordStream: Int32Array.of(0, 0, 0),
        recordEvent: Float64Array.of(7, 8, 9),
        waitCall: Int32Array.of(1),
        waitPid: Int32Array.of(100),
        waitStream: Int32Array.of(0),
        waitEvent: Float64Array.of(8),
        eventPos: new Int32Array(4),
        eventSeq: new Int32Array(4),
      });
      issueWalkNatively(inputs);
      return { seq: [...(inputs.eventSeq as Int32Array)], pos: [...(inputs.eventPos as Int32Array)] };
    };
    const inIndexOrder = walk(null);
    expect(inIndexOrder).toEqual({ seq: [1, 0, 2, 3], pos: [0, 1, 1, 1] });
    expect(walk(Int32Array.of(0, 1))).toEqual(inIndexOrder);
  });

  it('a call order that walks a call twice is refused where it would write past the order', () => {
    const { inputs } = walkInputs();
    // Call 0 holds both ops, and the order names it twice: its ops would be issued four times into an order of two.
    inputs.callOrder = Int32Array.of(0, 0);
    inputs.firstOp = Int32Array.of(0, 2, 2);
    expect(() => issueWalkNatively(inputs)).toThrow(/issueWalk: an op issued twice/);
  });
});
