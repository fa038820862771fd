// Search and the timeline's highlight. The text (and the kind filter) asks
// search() once typing rests; its names and kinds are highlighted, and
// Enter / Shift+Enter step through the matches, a page of SEARCH_LIMIT at a
// time (search-pages.ts decides where a step goes; this hook fetches). A
// finding's evidence is the other highlight: showing it clears the search,
// typing clears it. Another recording shown starts with neither.
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { Finding, ItemKind, ItemRef, RecordingSummary, SearchCursor, SearchResponse } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';
import { KIND_FILTERS } from '../base/colors.ts';
import type { SearchHighlight } from '../timeline/draw.ts';
import { matchNumber, planStep, type SearchPosition } from './search-pages.ts';
import type { Report } from './use-banners.ts';

export const SEARCH_LIMIT = 10_000;
const TYPING_REST_MS = 180;

/** Shows an item on the timeline (use-recording-ui.ts useGoTo). */
export type GoTo = (ref: ItemRef, rowId: string | undefined, startNs: number, endNs: number) => void;

/** A page of matches, which of them is current (-1: none yet), and the `after` that fetched each page seen. */
interface Found {
  res: SearchResponse;
  index: number;
  page: number;
  cursors: (SearchCursor | undefined)[];
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
const positionOf = (f: Found): SearchPosition => ({
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

  // Names (and kinds) to highlight, and the first page of matches to step through.
  useEffect(() => {
    const kinds = kindsOf(kind);
    if (!summary || (text.trim() === '' && kinds === undefined)) {
      setFound(null);
      return;
    }
    let live = true;
    const t = setTimeout(() => {
      api
        .search(summary.recordingId, { text: text.trim(), kinds, limit: SEARCH_LIMIT })
        .then((r) => {
          if (live) setFound({ res: r, index: -1, page: 0, cursors: [undefined] });
        })
        .catch((e) => {
          if (live) report(e);
        });
    }, TYPING_REST_MS);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [api, summary, text, kind, report]);

  const highlight = useMemo<SearchHighlight | null>(() => {
    const kinds = kindsOf(kind);
    const current = found && found.index >= 0 ? found.res.items[found.index]?.ref : undefined;
    if (found) return { nameIds: new Set(found.res.names.map((n) => n.nameId)), kinds: kinds ? new Set(kinds) : undefined, current };
    if (evidence) return { nameIds: new Set(), refs: evidence };
    return null;
  }, [found, evidence, kind]);

  const step = useCallback(
    (dir: 1 | -1) => {
      if (!summary || !found || found.res.items.length === 0) return;
      const { res } = found;
      const last = res.items[res.items.length - 1]!;
      const plan = planStep(positionOf(found), dir, { startNs: last.startNs, table: last.ref.table, id: last.ref.id });
      if (plan.kind === 'within') {
        setFound({ ...found, index: plan.index });
        const it = res.items[plan.index]!;
        goTo(it.ref, it.rowId, it.startNs, it.endNs);
        return;
      }
      // Another page of matches: asked for after the cursor that starts it.
      api
        .search(summary.recordingId, { text: text.trim(), kinds: kindsOf(kind), limit: SEARCH_LIMIT, ...(plan.after ? { after: plan.after } : {}) })
        .then((r) => {
          if (r.items.length === 0) return;
          const i = plan.index === 'first' ? 0 : r.items.length - 1;
          setFound({ res: r, index: i, page: plan.page, cursors: [...found.cursors.slice(0, plan.page), plan.after] });
          const it = r.items[i]!;
          goTo(it.ref, it.rowId, it.startNs, it.endNs);
        })
        .catch(report);
    },
    [api, summary, found, text, kind, goTo, report],
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
