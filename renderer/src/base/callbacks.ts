// What the shell (app/) hands the views to call back, typed once here so that
// a view needs nothing of the shell: report a failure (a banner:
// app/use-banners.ts), show an item (select it, unfold and unhide its row,
// scroll to it, zoom to it: app/use-recording-ui.ts useGoTo).
import type { ItemRef } from '../../../profiler/contract/api.ts';

/** Reports a failure: an API rejection (its code gives the title) or a plain `{code, message, file}`. */
export type Report = (err: unknown, fallbackFile?: string) => void;

/** Shows an item on the timeline: its row (when known) and its times (ns since the recording origin). */
export type GoTo = (ref: ItemRef, rowId: string | undefined, startNs: number, endNs: number) => void;
