// One compared recording's lane (CompareView.tsx): its own rows, selection,
// hidden rows and folds, on the compare view's aligned time (its view
// shifted by the recording's alignment: `shift` ns into it is t = 0), with
// its start-up band and iterations row; a click on an iteration picks that
// instance as the diff's scope.
import { useMemo, useState } from 'react';
import type { ItemRef, RecordingSummary } from '../../../profiler/contract/api.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { useOverlays } from '../scope/overlays.ts';
import type { Scope } from '../scope/scope.ts';
import { Timeline, type View } from '../timeline/Timeline.tsx';

/** One compared recording's lane: its own rows and selection, a shared or own view. */
export function Lane(props: {
  summary: RecordingSummary;
  shift: number;
  anchorMissing: boolean;
  view: View;
  onView: (aligned: View) => void;
  focused: boolean;
  onFocus: () => void;
  role: string;
  onError: (err: unknown) => void;
  scope: Scope;
  onScope: (s: Scope) => void;
}) {
  const { summary, shift, scope } = props;
  const [selected, setSelected] = useState<ItemRef | null>(null);
  const [ready, setReady] = useState(false);
  const overlays = useOverlays(summary.recordingId, ready);
  const iterations = overlays.iterations ?? null;
  const chosenInstance = scope.kind === 'range' && iterations && scope.name === iterations.name ? (scope.instance ?? null) : null;
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const [folded, setFolded] = useState<Set<string>>(new Set());
  const own = useMemo(() => ({ start: props.view.start + shift, end: props.view.end + shift }), [props.view, shift]);
  return (
    <section
      className={`cmp-lane${props.focused ? ' focused' : ''}`}
      data-testid="compare-lane"
      data-recording={summary.recordingId}
      onMouseEnter={props.onFocus}
      onMouseDown={props.onFocus}
    >
      <header className="cmp-lane-head">
        <span className="cmp-role">{props.role}</span>
        <b title={summary.path}>{summary.name}</b>
        <span className="hint" data-testid="lane-shift">
          {props.anchorMissing ? 'alignment event not found: unshifted' : `t = 0 at ${formatDuration(shift)} into the recording`}
        </span>
      </header>
      <Timeline
        summary={summary}
        view={own}
        onView={(v) => props.onView({ start: v.start - shift, end: v.end - shift })}
        selected={selected}
        onSelect={setSelected}
        details={null}
        search={null}
        hidden={hidden}
        onHidden={setHidden}
        folded={folded}
        onFolded={setFolded}
        onError={props.onError}
        timeOrigin={shift}
        keyboard={props.focused}
        onFirstData={() => setReady(true)}
        startup={overlays.startup}
        iterations={iterations}
        chosenInstance={chosenInstance}
        onIteration={(name, instance) => props.onScope({ kind: 'range', name, instance })}
      />
    </section>
  );
}
