// Statistics of a recording on the scope picked at the top (stats(id,
// scope): the same scope as the findings panel's): overlap factors,
// communication and stragglers (multi-rank jobs), kernels, copies,
// per-stream utilization and the stream-pair overlap matrix; and, when an NVTX range repeats, one row per instance (click one
// to analyse it alone). Sortable tables (click a header; again to reverse),
// with small bars where a bar reads faster than a number. The sections:
// OpTables.tsx (overlap factors, kernels, copies, streams, stream-pair
// overlap), JobSections.tsx (communication, stragglers), Iterations.tsx.
import type { RangeName, RecordingSummary } from '../../../profiler/contract/api.ts';
import { gpuName } from '../base/gpus.ts';
import { progressText } from '../scope/progress-text.ts';
import { scopeKey, type Scope } from '../scope/scope.ts';
import { useIterationFindings } from '../scope/overlays.ts';
import { ScopePicker } from '../scope/ScopePicker.tsx';
import { useScopedAnswer, type ScopedState } from '../scope/scoped-answer.ts';
import type { IterationTrack } from '../timeline/iterations.ts';
import { Iterations } from './Iterations.tsx';
import { Communication, Stragglers } from './JobSections.tsx';
import { Copies, Kernels, namesOf, OverlapFactors, StreamPairOverlap, Streams } from './OpTables.tsx';

export function StatsView(props: {
  summary: RecordingSummary;
  /** A recording being written: ask again when this changes (app/use-live.ts, at most every 5 s). */
  refresh?: number;
  scope: Scope;
  onScope: (s: Scope) => void;
  ranges: RangeName[] | undefined;
  selection: Scope | null;
  iterations: IterationTrack | null | undefined;
  onShowStream: (rowId: string) => void;
}) {
  const { summary, scope } = props;
  const answer = useScopedAnswer('stats', summary.recordingId, scope, true, props.refresh);
  const { shown, pending, error, waiting } = answer;
  const progress = progressText(waiting, scope);
  const head = <StatsHead answer={answer} progress={progress} scope={scope} onScope={props.onScope} ranges={props.ranges} selection={props.selection} />;
  // The table's top findings come with a second answer, asked here (overlays.ts): the rows show meanwhile.
  const withFindings = useIterationFindings(summary.recordingId, !!props.iterations, props.refresh);
  const track = withFindings ?? props.iterations;
  const iterations = track && <Iterations track={track} scope={scope} onScope={props.onScope} />;
  if (!shown)
    return (
      <div className="stats-view">
        {head}
        {!error && (
          <p className="hint" data-testid="stats-progress">
            Loading statistics…{progress ? ` ${progress}` : ''}
          </p>
        )}
        {iterations}
      </div>
    );
  const stats = shown.value;
  const names = namesOf(summary);
  return (
    <div className={`stats-view${pending ? ' stale' : ''}`} data-testid="stats-view">
      {head}
      <OverlapFactors stats={stats} names={names} />
      {/* Their rows name the rank, host and pid in columns of their own: the GPU beside them is its ordinal, as in the report. */}
      {stats.communication?.present && <Communication communication={stats.communication} devName={(id) => gpuName(summary.devices, id)} />}
      {stats.stragglers?.present && <Stragglers stragglers={stats.stragglers} devName={(id) => gpuName(summary.devices, id)} />}
      <Kernels stats={stats} />
      <Copies stats={stats} />
      <Streams stats={stats} names={names} onShowStream={props.onShowStream} />
      {stats.overlap.map((m) => (
        <StreamPairOverlap key={m.deviceId} m={m} names={names} />
      ))}
      {iterations}
    </div>
  );
}

/** The scope the statistics are of: its menu, the label of the answer shown (updating… while a newer one is on its way), or why it failed. */
function StatsHead(props: {
  answer: ScopedState<unknown>;
  progress: string;
  scope: Scope;
  onScope: (s: Scope) => void;
  ranges: RangeName[] | undefined;
  selection: Scope | null;
}) {
  const { shown, pending, error } = props.answer;
  const { progress } = props;
  return (
    <div className="stats-scope" data-testid="stats-scope" data-scope={shown ? scopeKey(shown.scope) : ''} data-pending={pending ? 'true' : 'false'}>
      <ScopePicker scope={props.scope} onScope={props.onScope} ranges={props.ranges} selection={props.selection} />
      {shown && (
        <span className="scope-label" data-testid="stats-scope-label">
          {shown.info.label}
          {pending ? ` · updating…${progress ? ` ${progress}` : ''}` : ''}
        </span>
      )}
      {error && <span className="hint scope-error">{error}</span>}
    </div>
  );
}
