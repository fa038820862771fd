// Where every input's rows land in the merged recording, decided before a
// row is copied: each input's ids (a run after the previous inputs'), its
// pids, its strings and devices in the merged tables, its source id. Pure
// arithmetic over what inspecting the inputs read (their small tables and
// each table's id range), in input order, as copying them one after the
// other would find it — so that the big tables of every input can be
// written at once, as pages on all cores (merge.ts), with the ids they
// will have.
import { THREAD_LANE_FACTOR } from '../store/zone-tables.ts';
import { MERGE_TABLES } from './tables.ts';

/** Linux pids and tids stay below 2^22; a thread lane is pid * 2^22 + tid, so renumbered pids must too. */
const MAX_PID = THREAD_LANE_FACTOR - 1;

/** What the plan needs of one input, read when it is inspected. */
export interface InputFacts {
  /** strings (id, value), by id. */
  strings: [number, string][];
  /** devices (id, uuid), by id. */
  devices: [number, string | null][];
  /** Its processes' pids. */
  pids: number[];
  /** Each table with ids of its own (rowid, context, stream) that the input has: its smallest and largest id (null: no rows). */
  ids: Record<string, { min: number | null; max: number | null }>;
  /** Largest sources.id (a merged input's own sources), 0 when none. */
  maxSourceId: number;
}

export interface IdRun {
  /** Added to the input's ids: min..max land at min + off..max + off, right after the rows already there. */
  off: number;
  min: number;
  max: number;
}

export interface InputPlan {
  /** Its sources row. */
  sourceId: number;
  /** Its pid → the merged recording's; renumbered: those that another input had first. */
  pids: Map<number, number>;
  renumbered: { originalPid: number; pid: number }[];
  /** Its device ids → the merged ones (one per GPU uuid); new: those it adds (the others' missing facts are filled from it). */
  devices: Map<number, number>;
  newDevices: Set<number>;
  /** Its string ids → the merged ones (by value); first: the merged table was empty, its strings are copied as they are. */
  strings: Map<number, number>;
  stringsFirst: boolean;
  /** Per table with ids of its own. */
  ids: Map<string, IdRun>;
}

/** Tables whose ids are their own (copied as a run after the previous inputs'): rowid tables, contexts, streams. */
export const ID_TABLES = Object.entries(MERGE_TABLES)
  .filter(([, spec]) => spec.how === 'rows' && ['rowid', 'context', 'stream'].includes(spec.columns.id ?? ''))
  .map(([table]) => table);

/** Every input's plan, in input order. A NoFreePidError names the input whose processes found no pid. */
export function planMerge(inputs: readonly InputFacts[]): InputPlan[] {
  const strings = new Map<string, number>();
  let maxString = 0;
  const devices = new Map<string, number>();
  let maxDevice = 0;
  const usedPids = new Set<number>();
  // A renumbered process takes no pid of any input.
  const reserved = new Set(inputs.flatMap((i) => i.pids));
  let nextPid = MAX_PID;
  const maxIds = new Map<string, number>();
  let maxSource = 0;

  return inputs.map((input, index) => {
    // Strings by value: into an empty table as they are; else each new value after the largest id, in id order.
    const stringsFirst = maxString === 0;
    const stringMap = new Map<number, number>();
    for (const [id, value] of input.strings) {
      let to = stringsFirst ? id : strings.get(value);
      if (to === undefined) to = ++maxString;
      if (!strings.has(value)) strings.set(value, to);
      stringMap.set(id, to);
    }
    if (stringsFirst) maxString = input.strings.reduce((m, [id]) => Math.max(m, id), 0);

    // Devices by uuid; one without a uuid (imported traces) stays its input's.
    const deviceMap = new Map<number, number>();
    const newDevices = new Set<number>();
    for (const [id, uuid] of input.devices) {
      const existing = uuid !== null ? devices.get(uuid) : undefined;
      if (existing !== undefined) deviceMap.set(id, existing);
      else {
        deviceMap.set(id, ++maxDevice);
        newDevices.add(id);
        if (uuid !== null) devices.set(uuid, maxDevice);
      }
    }

    // pids: kept unless taken; then the largest free one below 2^22.
    const pids = new Map<number, number>();
    const renumbered: { originalPid: number; pid: number }[] = [];
    for (const pid of input.pids) {
      let to = pid;
      if (usedPids.has(pid)) {
        while (nextPid > 0 && (usedPids.has(nextPid) || reserved.has(nextPid))) nextPid--;
        if (nextPid <= 0) throw new NoFreePidError(index);
        to = nextPid--;
        renumbered.push({ originalPid: pid, pid: to });
      }
      pids.set(pid, to);
      usedPids.add(to);
    }

    const ids = new Map<string, IdRun>();
    for (const table of ID_TABLES) {
      const facts = input.ids[table];
      if (!facts) continue;
      const min = facts.min ?? 1;
      const max = facts.max ?? 0;
      const off = (maxIds.get(table) ?? 0) + 1 - min;
      ids.set(table, { off, min, max });
      if (facts.max !== null) maxIds.set(table, max + off);
    }

    // Its source, then a merged input's own sources after it (their ids + its id).
    const sourceId = maxSource + 1;
    maxSource = sourceId + input.maxSourceId;

    return { sourceId, pids, renumbered, devices: deviceMap, newDevices, strings: stringMap, stringsFirst, ids };
  });
}

/** More processes to renumber than free pids below 2^22 (merge.ts names the input). */
export class NoFreePidError extends Error {
  /** The input's position. */
  readonly input: number;
  constructor(input: number) {
    super('no free pid left to give its processes');
    this.input = input;
  }
}
