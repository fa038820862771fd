// A recording merged from several (one job's ranks opened together, or
// `streamscope merge`): one line above the views saying so, with how its
// clocks were lined up and the residual the alignment left
// (contract/job.ts jobHeadline), and on demand the recordings it came from,
// each with its host and how its times were placed. Inputs whose clock
// could not be aligned are also warned about (use-recording-ui.ts).
import { memo, useState } from 'react';
import { describeSource, jobHeadline, jobInputs, type JobInfo } from '../../../profiler/contract/job.ts';

export const JobBar = memo(function JobBar(props: { job: JobInfo }) {
  const { job } = props;
  const [open, setOpen] = useState(false);
  return (
    <div className="job-bar" data-testid="job-info">
      <div className="job-line">
        <span data-testid="job-headline">{jobHeadline(job)}</span>
        <button className="linkish" data-testid="job-sources-toggle" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
          {open ? 'hide the recordings' : 'the recordings'}
        </button>
      </div>
      {open && (
        <table className="job-sources" data-testid="job-sources">
          <tbody>
            {jobInputs(job).map((s) => (
              <tr key={s.id} data-clock={s.clock}>
                <td title={s.file}>
                  <code>{s.file.split('/').pop()}</code>
                </td>
                <td>{s.host ?? '—'}</td>
                <td>{describeSource(s)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
});
