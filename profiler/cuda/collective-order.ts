// Which collective instance an NCCL kernel is on its rank: the one matching
// rule that clock alignment (merge/align.ts, through merge/collectives.ts)
// and the straggler analysis (stragglers.ts) share.
//
// NCCL requires every rank of a communicator to issue its collectives in
// the same order, and it runs a communicator's kernels on one stream of each
// rank. So on each rank (a process on a GPU) the instance is named by
//
//   (s, collective, n): the n-th kernel of that collective on the rank's
//   s-th stream that runs collectives, streams numbered by their first
//   collective (all from 0)
//
// and the same name on two ranks is the same instance. That holds exactly
// for a job with one communicator (data parallel). With several (tensor
// and data parallel groups, pipeline stages) the streams are numbered alike
// on every rank only if the communicators are first used in the same
// order, and ranks of different groups get the same names for collectives
// that do not synchronise them: the readers check what they can (merge:
// the residual; stragglers: the ends of an instance's kernels, which
// coincide on every rank of a real instance) and say what did not fit.
import { COLLECTIVES, type Collective } from '../contract/communication.ts';

/** A collective's number in the names (its index in COLLECTIVES). */
export const COLLECTIVE_CODE = new Map<Collective, number>(COLLECTIVES.map((c, k) => [c, k]));

/**
 * Names each rank's collective kernels as the rule above says. Feed every
 * collective kernel of a rank in start order (kernels of different ranks
 * may interleave); `next` returns n and leaves s in `stream`. Nothing is
 * allocated per kernel.
 */
export class CollectiveNumbering {
  /** s of the kernel last numbered. */
  stream = 0;
  /** Per stream id: its s, and how many kernels of each collective it ran so far. */
  private readonly streams = new Map<number, { s: number; counts: Int32Array }>();
  /** Per rank: how many of its streams ran collectives so far. */
  private readonly streamsOfRank = new Map<number, number>();

  /** `rank`: any number that tells ranks apart; `stream`: the recording's streams.id; `collective`: COLLECTIVE_CODE. */
  next(rank: number, stream: number, collective: number): number {
    let st = this.streams.get(stream);
    if (!st) {
      const s = this.streamsOfRank.get(rank) ?? 0;
      this.streamsOfRank.set(rank, s + 1);
      this.streams.set(stream, (st = { s, counts: new Int32Array(COLLECTIVES.length) }));
    }
    this.stream = st.s;
    return st.counts[collective]!++;
  }
}
