// The label column: one DOM row per canvas row, at the same y (rows.ts lays
// both out): group titles with their fold buttons, row names with their
// detail, share of the device's time and hide button. What people and tests
// read stays in the DOM; the canvas beside it draws the rows.
import { memo, useMemo } from 'react';
import { formatPercent } from '../base/time.ts';
import { inFlightPeaks } from './in-flight.ts';
import type { Layout, TrackGroup } from './rows.ts';
import type { Loaded } from './window-loader.ts';

/** The label column's width (CSS pixels); the ruler's and the overview's corners are as wide. */
export const LABEL_W = 310;

/** The label column: one DOM row per canvas row, at the same y. */
export const Labels = memo(function Labels(props: {
  layout: Layout;
  groups: TrackGroup[];
  folded: Set<string>;
  onFold: (id: string) => void;
  onHide: (id: string) => void;
  concPeaks: Map<number, string>;
}) {
  const { layout, folded, onFold, onHide, concPeaks } = props;
  return (
    <div className="tl-labels" style={{ width: LABEL_W, height: layout.height }}>
      {layout.rows.map((r) =>
        r.type === 'group' ? (
          <div
            key={r.id}
            className={`tl-group depth-${r.group.depth} tl-group-${r.group.kind}`}
            data-testid={`group-${r.id}`}
            style={{ top: r.y, height: r.h }}
            title={`${r.group.title}${r.group.subtitle ? ` · ${r.group.subtitle}` : ''}`}
          >
            <button className="fold" data-testid={`fold-${r.id}`} aria-expanded={!folded.has(r.id)} onClick={() => onFold(r.id)}>
              {folded.has(r.id) ? '▸' : '▾'}
            </button>
            <span className="g-title">{r.group.title}</span>
            <span className="g-sub">
              {r.group.subtitle}
              {folded.has(r.id) ? ` · ${r.group.contents} folded` : ''}
            </span>
          </div>
        ) : (
          <div
            key={r.id}
            className={`tl-label tl-${r.row!.kind} depth-${r.group.depth}`}
            data-testid={`row-${r.id}`}
            style={{ top: r.y, height: r.h }}
            title={`${r.row!.label} · ${r.row!.kind === 'conc' ? (concPeaks.get(r.row!.deviceId!) ?? r.row!.detail) : r.row!.detail}`}
          >
            <span className="l-name">{r.row!.label}</span>
            <span className="l-detail">{r.row!.kind === 'conc' ? (concPeaks.get(r.row!.deviceId!) ?? r.row!.detail) : r.row!.detail}</span>
            {r.row!.share !== undefined && (
              <span className="l-share" title="Share of the device's busy time">
                <span className="l-share-fill" style={{ width: `${Math.round(Math.min(1, r.row!.share) * 100)}%` }} />
                <span className="l-share-num">{formatPercent(r.row!.share)}</span>
              </span>
            )}
            <button className="hide" data-testid={`hide-${r.id}`} title="Hide this row" onClick={() => onHide(r.id)}>
              ×
            </button>
          </div>
        ),
      )}
    </div>
  );
});

/** Per device, its In-flight row's label: each lane's peak over the loaded window (in-flight.ts). */
export function useConcurrencyPeaks(loaded: Loaded | null): Map<number, string> {
  return useMemo(() => {
    const m = new Map<number, string>();
    for (const [dev, c] of loaded?.concurrency ?? []) m.set(dev, inFlightPeaks(c));
    return m;
  }, [loaded]);
}
