// The diagnosis (findings()): why streams did not overlap, worst first,
// each with its cost and what-if estimate. Clicking one shows its evidence.
import { useState, memo } from 'react';
import type { Finding } from '../../../profiler/query/api.ts';
import { formatDuration } from '../base/time.ts';

// Memoised: the app re-renders on every view change while panning, and
// this panel does not depend on the view.
export const FindingsPanel = memo(function FindingsPanel(props: { findings: Finding[] | null; onShow: (f: Finding) => void }) {
  const [open, setOpen] = useState<number | null>(null);
  const { findings } = props;
  return (
    <section className="panel" data-testid="findings">
      <h2>Findings {findings && findings.length > 0 && <span className="count">{findings.length}</span>}</h2>
      {findings === null && <p className="hint">Diagnosing…</p>}
      {findings && findings.length === 0 && <p className="hint">Nothing serialized the streams.</p>}
      {findings?.map((f, i) => (
        <div key={i} className={`finding sev-${f.severity}`}>
          <button className="f-head" data-testid="finding" onClick={() => { setOpen(open === i ? null : i); props.onShow(f); }}>
            <span className="sev">{f.severity}</span>
            <span className="cost" title="Time it cost">{formatDuration(f.costNs)}</span>
            <span className="title">{f.title}</span>
            {f.whatIf && <span className="whatif">what if fixed: {formatDuration(f.whatIf.measuredNs)} → {formatDuration(f.whatIf.predictedNs)}</span>}
          </button>
          {open === i && (
            <div className="f-body">
              <p>{f.explanation}</p>
              {f.fix && <p><b>Fix:</b> {f.fix}</p>}
            </div>
          )}
        </div>
      ))}
    </section>
  );
});
