// The scope menu of the findings panel, the stats and the compare view:
// the steady state (the default: start-up left out), the whole recording,
// the selection on the timeline (while there is one), or an NVTX range —
// all its instances, or one (the number beside the menu; clicking a box of
// the iterations row picks one too).
import { memo } from 'react';
import type { RangeName } from '../../../profiler/contract/api.ts';
import { parseScope, scopeKey, scopeTitle, type Scope } from './scope.ts';

export const ScopePicker = memo(function ScopePicker(props: {
  scope: Scope;
  onScope: (s: Scope) => void;
  /** The recording's NVTX ranges (api.ranges); undefined while not known. */
  ranges: RangeName[] | undefined;
  /** The selection on the timeline as a window scope; null when there is none (the compare view has none). */
  selection: Scope | null;
}) {
  const { scope, onScope, selection } = props;
  const ranges = props.ranges ?? [];
  const key = scopeKey(scope);
  const rangeName = scope.kind === 'range' ? scope.name : null;
  // The scope itself is always an option, even before the ranges are known or once the selection is gone.
  const extra =
    scope.kind === 'window' && (!selection || scopeKey(selection) !== key)
      ? scope
      : scope.kind === 'range' && (scope.instance !== undefined || !ranges.some((r) => r.name === rangeName))
        ? scope
        : null;
  const instances = ranges.find((r) => r.name === rangeName)?.instances;
  return (
    <span className="scope-picker">
      <select data-testid="scope-picker" value={key} title="What the findings and statistics analyse" onChange={(e) => onScope(parseScope(e.target.value))}>
        <option value="steady">Steady state (start-up left out)</option>
        <option value="whole">Whole recording</option>
        {selection && <option value={scopeKey(selection)}>{scopeTitle(selection)}</option>}
        {extra && <option value={key}>{scopeTitle(extra)}</option>}
        {ranges.length > 0 && (
          <optgroup label="NVTX range">
            {ranges.map((r) => (
              <option key={r.name} value={scopeKey({ kind: 'range', name: r.name })}>
                {r.name} · {r.instances.toLocaleString('en-US')}×
              </option>
            ))}
          </optgroup>
        )}
      </select>
      {rangeName !== null && (
        <label className="scope-instance" title="One instance of the range (empty: all of them)">
          #
          <input
            data-testid="scope-instance"
            type="number"
            className="num-input"
            min={1}
            max={instances}
            placeholder="all"
            value={scope.kind === 'range' && scope.instance !== undefined ? scope.instance : ''}
            onChange={(e) => {
              const k = Math.floor(Number(e.target.value));
              onScope(
                e.target.value === '' || !(k >= 1)
                  ? { kind: 'range', name: rangeName }
                  : { kind: 'range', name: rangeName, instance: instances ? Math.min(k, instances) : k },
              );
            }}
          />
        </label>
      )}
    </span>
  );
});
