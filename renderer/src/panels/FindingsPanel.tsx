// The diagnosis (findings()) of the scope picked above it: why streams did
// not overlap, worst first, each with its cost and what-if estimate.
// Clicking one shows its evidence. The panel says which scope the list is
// for (ScopeInfo.label of the answer shown) and what it should be read with
// (ScopeInfo.notes: rows the analysis left out as not possible, operations
// a window cut), that a newer one is on its way while the selection moves,
// and how far the analysis has got while it waits (scope/progress-text.ts).
import { useState, memo } from 'react';
import type { Finding, RangeName } from '../../../profiler/contract/api.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { scopeKey, type Scope } from '../scope/scope.ts';
import { ScopePicker } from '../scope/ScopePicker.tsx';
import type { ScopedState } from '../scope/scoped-answer.ts';
import { progressText } from '../scope/progress-text.ts';
import { findingsSoFar } from '../scope/analysis-progress.ts';

// Memoised: the app re-renders on every view change while panning, and
// this panel does not depend on the view.
export const FindingsPanel = memo(function FindingsPanel(props: {
  answer: ScopedState<Finding[]>;
  onShow: (f: Finding) => void;
  scope: Scope;
  onScope: (s: Scope) => void;
  ranges: RangeName[] | undefined;
  selection: Scope | null;
}) {
  const { shown, pending, error, waiting } = props.answer;
  const progress = progressText(waiting, props.scope);
  // Before the first answer, what the rules found while the what-ifs replay (their costs the rules' own).
  const early = shown ? null : findingsSoFar(waiting, props.scope);
  const findings = shown?.value ?? early;
  const shownKey = shown ? scopeKey(shown.scope) : early ? `early:${scopeKey(props.scope)}` : '';
  // Which finding is open, for the list it belongs to.
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section
      className={`panel${pending && shown ? ' stale' : ''}`}
      data-testid="findings"
      data-scope={shownKey}
      data-pending={pending ? 'true' : 'false'}
      data-early={early ? 'true' : 'false'}
    >
      <h2>Findings {findings && findings.length > 0 && <span className="count">{findings.length}</span>}</h2>
      <div className="scope-row">
        <ScopePicker scope={props.scope} onScope={props.onScope} ranges={props.ranges} selection={props.selection} />
      </div>
      {shown && (
        <p className="scope-label" data-testid="scope-label" title="What these findings looked at">
          {shown.info.label}
          {pending ? ` · updating…${progress ? ` ${progress}` : ''}` : ''}
        </p>
      )}
      {shown?.info.notes?.map((note) => (
        <p key={note} className="scope-note" data-testid="scope-note">
          {note}
        </p>
      ))}
      {error && (
        <p className="hint scope-error" data-testid="scope-error">
          {error}
        </p>
      )}
      {findings === null && !error && (
        <p className="hint" data-testid="findings-progress">
          Diagnosing…{progress ? ` ${progress}` : ''}
        </p>
      )}
      {early && !error && (
        <p className="hint" data-testid="findings-early">
          Estimating what fixing them would save{progress ? ` (${progress})` : ''}: until then each cost is the rule's own measure.
        </p>
      )}
      {findings && findings.length === 0 && <p className="hint">Nothing serialized the streams.</p>}
      {findings?.map((f, i) => {
        const id = `${shownKey}:${i}`;
        return (
          <div key={id} className={`finding sev-${f.severity}`} data-kind={f.kind}>
            <button
              className="f-head"
              data-testid="finding"
              onClick={() => {
                setOpen(open === id ? null : id);
                props.onShow(f);
              }}
            >
              <span className="sev">{f.severity}</span>
              <span className="cost" title="Time it cost">
                {formatDuration(f.costNs)}
              </span>
              <span className="title">{f.title}</span>
              {f.whatIf ? (
                <span
                  className="whatif"
                  title={f.whatIf.findings ? `one estimate for the ${f.whatIf.findings} findings of this fix (${f.whatIf.fix})` : f.whatIf.fix}
                >
                  what if fixed: {formatDuration(f.whatIf.measuredNs)} → {formatDuration(f.whatIf.predictedNs)}
                  {f.whatIf.findings ? ` (with ${f.whatIf.findings - 1} other${f.whatIf.findings > 2 ? 's' : ''})` : ''}
                </span>
              ) : f.whatIfUnavailable ? (
                <span className="whatif" title={f.whatIfUnavailable}>
                  what if fixed: not modelled here
                </span>
              ) : (
                early &&
                f.fixId && (
                  <span className="whatif" data-testid="whatif-estimating">
                    what if fixed: estimating…
                  </span>
                )
              )}
            </button>
            {open === id && (
              <div className="f-body">
                <p>{f.explanation}</p>
                {f.fix && (
                  <p>
                    <b>Fix:</b> {f.fix}
                  </p>
                )}
              </div>
            )}
          </div>
        );
      })}
    </section>
  );
});
