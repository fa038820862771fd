// An item's text form, `table:id` (kernels:12): the `sel` of the URL
// (app/url-state.ts), React keys of the details panel's links, the search's
// evidence sets. Pure.
import { ITEM_TABLES, type ItemRef, type ItemTable } from '../../../profiler/contract/api.ts';

export const refKey = (r: ItemRef): string => `${r.table}:${r.id}`;

/** refKey's inverse; undefined for anything that is not one. */
export function parseRef(s: string | null | undefined): ItemRef | undefined {
  const m = /^([a-z_]+):(\d+)$/.exec(s ?? '');
  return m && (ITEM_TABLES as readonly string[]).includes(m[1]!) ? { table: m[1] as ItemTable, id: Number(m[2]) } : undefined;
}
