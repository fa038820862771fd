// What survives a reload lives in the URL hash (the search part keeps the
// access token of browser mode untouched): the recording, the visible range,
// the selected item, hidden rows, folded groups, the analysis scope and the
// open tab; in the compare view, the recordings compared, their alignment
// and offsets, whether zoom and pan are linked, and the scope both sides
// are analysed on.
import type { ItemRef } from '../../../profiler/contract/api.ts';
import { parseRef, refKey } from '../base/item-ref.ts';

export interface UrlState {
  rec?: string;
  start?: number;
  end?: number;
  sel?: ItemRef;
  hide: string[];
  /** Folded groups; null (no `fold` in the URL): as the recording opens, rows.ts defaultFolded (a job of many ranks: its ranks). */
  fold: string[] | null;
  tab: 'timeline' | 'stats' | 'compare' | 'query';
  /** The findings' and stats' scope (scope/scope.ts scopeKey); absent: the steady state. */
  scope?: string;
  /** Compare view: recording ids, the base first. */
  cmp: string[];
  /** Compare view: alignment (compare/align.ts formatAlignment). */
  align?: string;
  /** Compare view: extra offset (ns) per compared recording, in `cmp` order. */
  offs: number[];
  /** Compare view: zoom and pan linked (the default) or independent. */
  linked: boolean;
  /** Compare view: the scope of both sides' analyses (scopeKey); absent: the steady state. */
  cscope?: string;
}

export function readUrl(): UrlState {
  const p = new URLSearchParams(location.hash.slice(1));
  const num = (k: string) => {
    const v = Number(p.get(k));
    return p.has(k) && Number.isFinite(v) ? v : undefined;
  };
  const list = (k: string) => (p.get(k) ?? '').split(',').filter(Boolean);
  return {
    rec: p.get('rec') ?? undefined,
    start: num('start'),
    end: num('end'),
    sel: parseRef(p.get('sel')),
    hide: list('hide'),
    fold: p.has('fold') ? list('fold') : null,
    tab: (['stats', 'compare', 'query'] as const).find((t) => t === p.get('tab')) ?? 'timeline',
    cmp: list('cmp'),
    align: p.get('align') ?? undefined,
    offs: list('offs')
      .map(Number)
      .map((v) => (Number.isFinite(v) ? v : 0)),
    linked: p.get('linked') !== '0',
    scope: p.get('scope') ?? undefined,
    cscope: p.get('cscope') ?? undefined,
  };
}

export function writeUrl(s: UrlState): void {
  const p = new URLSearchParams();
  if (s.rec) p.set('rec', s.rec);
  if (s.start !== undefined && s.end !== undefined) {
    p.set('start', String(Math.round(s.start)));
    p.set('end', String(Math.round(s.end)));
  }
  if (s.sel) p.set('sel', refKey(s.sel));
  if (s.hide.length) p.set('hide', s.hide.join(','));
  // An empty list is written too (`fold=`): nothing folded where the recording would open folded.
  if (s.fold) p.set('fold', s.fold.join(','));
  if (s.tab !== 'timeline') p.set('tab', s.tab);
  if (s.scope && s.scope !== 'steady') p.set('scope', s.scope);
  if (s.tab === 'compare') {
    if (s.cmp.length) p.set('cmp', s.cmp.join(','));
    if (s.align && s.align !== 'first-gpu') p.set('align', s.align);
    if (s.offs.some((o) => o !== 0)) p.set('offs', s.offs.map((o) => Math.round(o)).join(','));
    if (!s.linked) p.set('linked', '0');
    if (s.cscope && s.cscope !== 'steady') p.set('cscope', s.cscope);
  }
  const next = `${location.pathname}${location.search}#${p}`;
  if (next !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', next);
}
