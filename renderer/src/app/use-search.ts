// Search and the timeline's highlight. The text (and the kind filter) asks
// search() once typing rests; its names and kinds are highlighted, and
// Enter / Shift+Enter step through the matches, a page of SEARCH_LIMIT at a
// time (search-pages.ts decides where a step goes; this hook fetches). An
// Enter pressed before the answer to what is typed now has come (typing
// rests for TYPING_REST_MS first) is kept, and taken when it comes: the first
// Enter goes to the first match however fast it follows the typing, never
// to a match of the text typed before (it used to do nothing). A
// finding's evidence is the other highlight: showing it clears the search,
// typing clears it. Another recording shown starts with neither.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Finding, ItemKind, RecordingSummary, SearchCursor, SearchResponse } from '../../../profiler/contract/api.ts';
import { toNs, type NsFields } from '../../../profiler/contract/time.ts';
import { getApi } from '../api/client.ts';
import { KIND_FILTERS } from '../base/colors.ts';
import type { SearchHighlight } from '../timeline/draw.ts';
import { matchNumber, planStep, type SearchPosition } from './search-pages.ts';
import type { GoTo, Report } from '../base/callbacks.ts';

export const SEARCH_LIMIT = 10_000;
const TYPING_REST_MS = 180;

/** A page of matches, which of them is current (-1: none yet), and the `after` that fetched each page seen. */
interface Found {
  /** The search it answers (queryKey). */
  query: string;
  res: SearchResponse;
  index: number;
  page: number;
  /** Each page's `after`, as sent. */
  cursors: (Cursor | undefined)[];
}

export interface Search {
  text: string;
  /** The text typed: a new search, and the evidence highlight goes. */
  type: (text: string) => void;
  kind: string;
  setKind: (kind: string) => void;
  /** Esc: no text, all kinds. */
  clear: () => void;
  /** The page of matches shown, if a search is on. */
  res: SearchResponse | null;
  /** "12 / 3,456 matches", "no match", or '' with no search. */
  matchText: string;
  step: (dir: 1 | -1) => void;
  highlight: SearchHighlight | null;
  /** Whether a finding's evidence is highlighted. */
  showingEvidence: boolean;
  /** Highlights a finding's evidence instead of the search. */
  showEvidence: (f: Finding) => void;
  clearEvidence: () => void;
}

/** Where stepping through the matches stands (search-pages.ts). */
/** A page's `after` as the page sends it: its time a BrandedNs. */
type Cursor = NsFields<SearchCursor>;

const positionOf = (f: Found): SearchPosition<Cursor> => ({
  page: f.page,
  cursors: f.cursors,
  pageSize: SEARCH_LIMIT,
  length: f.res.items.length,
  index: f.index,
  total: f.res.total,
});

function matchText(f: Found | null): string {
  if (!f) return '';
  const { total } = f.res;
  if (total === 0) return 'no match';
  return `${f.index >= 0 ? `${matchNumber(positionOf(f)).toLocaleString('en-US')} / ` : ''}${total.toLocaleString('en-US')} match${total === 1 ? '' : 'es'}`;
}

const kindsOf = (kind: string): ItemKind[] | undefined => KIND_FILTERS.find((f) => f.id === kind)?.kinds;
/** One search's identity: its text and kind filter; null when there is none to make. */
const queryKey = (text: string, kind: string): string | null => (text.trim() === '' && kindsOf(kind) === undefined ? null : `${kind}\u0000${text.trim()}`);

/** The items a finding names as its evidence, as `table:id` keys. */
export function evidenceKeys(f: Finding): Set<string> {
  return new Set([
    ...f.evidence.kernels.map((id) => `kernels:${id}`),
    ...f.evidence.memcpys.map((id) => `memcpys:${id}`),
    ...f.evidence.memsets.map((id) => `memsets:${id}`),
    ...f.evidence.apiCalls.map((id) => `api_calls:${id}`),
    ...f.evidence.syncs.map((id) => `syncs:${id}`),
  ]);
}

export function useSearch(summary: RecordingSummary | null, goTo: GoTo, report: Report): Search {
  const api = getApi();
  const [text, setText] = useState('');
  const [kind, setKind] = useState('all');
  const [found, setFound] = useState<Found | null>(null);
  const [evidence, setEvidence] = useState<Set<string> | null>(null);
  // Another recording shown: no matches and no evidence of the last one (React's "adjusting state when a prop changes").
  const [shownFor, setShownFor] = useState(summary);
  if (shownFor !== summary) {
    setShownFor(summary);
    setFound(null);
    setEvidence(null);
  }

  // An Enter (1) or Shift+Enter (-1) waiting for the answer to the search typed now.
  const waiting = useRef<1 | -1 | null>(null);
  // Read when a match is shown: goTo changes with what it unfolds, and the search must not be asked again for that.
  const latestGoTo = useRef(goTo);
  useEffect(() => {
    latestGoTo.current = goTo;
  }, [goTo]);
  const show = useCallback((f: Found, index: number) => {
    setFound({ ...f, index });
    const it = f.res.items[index]!;
    latestGoTo.current(it.ref, it.rowId, it.startNs, it.endNs);
  }, []);
  const query = queryKey(text, kind);

  // Names (and kinds) to highlight, and the first page of matches to step through.
  useEffect(() => {
    if (!summary || query === null) {
      waiting.current = null;
      setFound(null);
      return;
    }
    let live = true;
    const t = setTimeout(() => {
      api
        .search(summary.recordingId, { text: text.trim(), kinds: kindsOf(kind), limit: SEARCH_LIMIT })
        .then((r) => {
          if (!live) return;
          const f: Found = { query, res: r, index: -1, page: 0, cursors: [undefined] };
          const dir = waiting.current;
          waiting.current = null;
          // The step asked for while this was on its way: from no current match, to the first (or the last).
          const plan = dir && r.items.length ? planStep(positionOf(f), dir, undefined) : null;
          if (plan?.kind === 'within') show(f, plan.index);
          else setFound(f);
        })
        .catch((e) => {
          if (!live) return;
          waiting.current = null;
          report(e);
        });
    }, TYPING_REST_MS);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [api, summary, query, text, kind, report, show]);

  const highlight = useMemo<SearchHighlight | null>(() => {
    const kinds = kindsOf(kind);
    const current = found && found.index >= 0 ? found.res.items[found.index]?.ref : undefined;
    // A search of more names than its answer lists (the 1,000 with the most time): the others by their text.
    // (The text of the search answered: what queryKey put after the kind.)
    const cut = found && found.res.namesTotal > found.res.names.length ? { text: found.query.slice(found.query.indexOf('\u0000') + 1).toLowerCase() } : {};
    if (found) return { nameIds: new Set(found.res.names.map((n) => n.nameId)), kinds: kinds ? new Set(kinds) : undefined, current, ...cut };
    if (evidence) return { nameIds: new Set(), refs: evidence };
    return null;
  }, [found, evidence, kind]);

  const step = useCallback(
    (dir: 1 | -1) => {
      if (!summary || query === null) return;
      // The answer to what is typed now is not here yet: taken when it comes.
      if (!found || found.query !== query) {
        waiting.current = dir;
        return;
      }
      const { res } = found;
      if (res.items.length === 0) return;
      const last = res.items[res.items.length - 1]!;
      const plan = planStep(positionOf(found), dir, { startNs: toNs(last.startNs), table: last.ref.table, id: last.ref.id });
      if (plan.kind === 'within') return show(found, plan.index);
      // Another page of matches: asked for after the cursor that starts it.
      api
        .search(summary.recordingId, { text: text.trim(), kinds: kindsOf(kind), limit: SEARCH_LIMIT, ...(plan.after ? { after: plan.after } : {}) })
        .then((r) => {
          if (r.items.length === 0) return;
          show(
            { query, res: r, index: -1, page: plan.page, cursors: [...found.cursors.slice(0, plan.page), plan.after] },
            plan.index === 'first' ? 0 : r.items.length - 1,
          );
        })
        .catch(report);
    },
    [api, summary, found, query, text, kind, show, report],
  );

  const type = useCallback((t: string) => {
    setText(t);
    setEvidence(null);
  }, []);
  const clear = useCallback(() => {
    setText('');
    setKind('all');
  }, []);
  const showEvidence = useCallback((f: Finding) => {
    setEvidence(evidenceKeys(f));
    setText('');
    setKind('all');
  }, []);
  const clearEvidence = useCallback(() => setEvidence(null), []);

  return {
    text,
    type,
    kind,
    setKind,
    clear,
    res: found?.res ?? null,
    matchText: matchText(found),
    step,
    highlight,
    showingEvidence: evidence !== null,
    showEvidence,
    clearEvidence,
  };
}
