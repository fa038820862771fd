// The copy idioms of the frameworks, as the recording shows them: which
// copies are reads of values back to the host, and which synchronize call
// belongs to a copy. Several findings and fixes ask (blocking-copies.ts,
// host-blocking.ts, whatif.ts): one answer, computed once per recording.
//
// PyTorch's `.cuda()` / `.to()` without non_blocking, `.item()` and
// `.cpu()` call cudaMemcpyAsync and then cudaStreamSynchronize; CuPy's
// `get()` / `asnumpy` likewise. A copy to or from pageable memory already
// holds the host until it is staged or delivered, so the synchronize after
// it waits for nothing; a small copy to pinned memory (PyTorch 2.x reads
// `.item()` into a pinned buffer) returns at once, and the synchronize
// does the waiting.
import { familiesByNameId } from '../../cuda/call-families.ts';
import type { Host } from '../host.ts';
import { isPageableCopy, outerCalls } from './replay-host.ts';
import { OpCategory, OpKind, type Trace } from '../trace.ts';

/**
 * Copies back to host memory this small are reads of values (`loss.item()`,
 * `.cpu()` of a few numbers, `asnumpy` of a scalar): what they cost is the
 * wait for everything queued before them, not bandwidth.
 */
export const READBACK_MAX_BYTES = 64 * 1024;

const issuingOf = new WeakMap<Host, Uint8Array>();

/**
 * Per call: 1 for an outer call that issued GPU work, itself or through a
 * call nested in it (the launches a thread's calls are told apart by:
 * here, and removeBlockingCalls in whatif.ts). Once per recording.
 */
export function issuingCalls(host: Host): Uint8Array {
  let issuing = issuingOf.get(host);
  if (!issuing) {
    const outer = outerCalls(host);
    issuing = new Uint8Array(host.calls.length);
    for (let i = 0; i < host.opCall.length; i++) if (host.opCall[i]! >= 0) issuing[outer[host.opCall[i]!]!] = 1;
    issuingOf.set(host, issuing);
  }
  return issuing;
}

/**
 * The synchronize call that follows each of `copyCalls` on its thread with
 * no launch between (cheap calls such as cudaGetDevice may come between):
 * the second half of a copy idiom. Synchronize calls after the thread's
 * last launch are left out: the program reads its results after them
 * (removeBlockingCalls keeps those too).
 */
export function syncsRightAfter(host: Host, copyCalls: Uint8Array): number[] {
  const outer = outerCalls(host);
  const families = familiesByNameId(host.names);
  const issuing = issuingCalls(host);
  const found: number[] = [];
  for (const list of host.threads.values()) {
    let last = -1;
    for (let j = 0; j < list.length; j++) if (issuing[list[j]!]) last = j;
    let open = false; // a copy call of the set was the last outer call that issued work
    for (let j = 0; j < last; j++) {
      const k = list[j]!;
      if (outer[k] !== k) continue;
      if (copyCalls[k]) open = true;
      else if (issuing[k]) open = false;
      else if (open && families.family(host.calls.nameId[k]!) === 'sync') {
        found.push(k);
        open = false;
      }
    }
  }
  return found;
}

export interface Readbacks {
  /** The copies that read values back, in op order. */
  ops: number[];
  /** Per call: 1 for the synchronize right after a readback (its waiting half). */
  syncs: Uint8Array;
  /** The readbacks' synchronize calls, in no particular order. */
  syncList: number[];
}

const cache = new WeakMap<Host, Readbacks>();

/**
 * The reads of values back to the host: copies device to host of at most
 * READBACK_MAX_BYTES by an async copy call that held the host, because the
 * host memory is pageable or because a synchronize followed it with no
 * launch between (syncsRightAfter), and those synchronize calls.
 */
export function readbacks(trace: Trace, host: Host): Readbacks {
  let r = cache.get(host);
  if (r) return r;
  const { ops } = trace;
  const outer = outerCalls(host);
  const small: number[] = [];
  const calls = new Uint8Array(host.calls.length);
  for (let i = 0; i < ops.length; i++) {
    const k = host.opCall[i]!;
    if (k < 0 || ops.kind[i] !== OpKind.Memcpy || ops.category[i] !== OpCategory.DtoH || !ops.isAsync[i] || ops.bytes[i]! > READBACK_MAX_BYTES) continue;
    small.push(i);
    calls[outer[k]!] = 1;
  }
  // No small copy, no synchronize after one: the walk over every thread's
  // calls would find none (at 10 M launches and 1 MiB copies, ~0.1 s).
  const syncList = small.length > 0 ? syncsRightAfter(host, calls) : [];
  const syncs = new Uint8Array(host.calls.length);
  for (const k of syncList) syncs[k] = 1;
  // Which copy calls the synchronize calls followed: those copies are readbacks, as are pageable ones.
  const followed = new Uint8Array(host.calls.length);
  if (syncList.length) {
    for (const list of host.threads.values()) {
      let lastCopy = -1;
      for (let j = 0; j < list.length; j++) {
        const k = list[j]!;
        if (calls[k]) lastCopy = k;
        else if (syncs[k] && lastCopy >= 0) followed[lastCopy] = 1;
      }
    }
  }
  const found = small.filter((i) => isPageableCopy(trace, i) || followed[outer[host.opCall[i]!]!]);
  cache.set(host, (r = { ops: found, syncs, syncList }));
  return r;
}
