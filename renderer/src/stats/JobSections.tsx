// The Stats tab's sections for a job of several ranks: its communication
// (per rank and GPU: compute, communication hidden or exposed, copies,
// idle; the collectives) and its stragglers (which rank arrives last at the
// collectives, the wait it causes and its own).
import type { Communication as CommunicationStats, Stragglers as StragglerStats } from '../../../profiler/contract/api.ts';
import { participantName } from '../../../profiler/contract/stragglers.ts';
import { formatDuration } from '../../../profiler/contract/time.ts';
import { KIND_COLORS } from '../base/colors.ts';
import { Bar, SortTable } from '../base/tables.tsx';

/**
 * Communication (issue 13; `report`'s Communication section): per rank and
 * GPU, its time over the scope's GPU span as compute, communication
 * (hidden behind compute or exposed), other copies and idle, and the share
 * of communication compute hid; the collectives by kind.
 */
export function Communication(props: { communication: CommunicationStats; devName: (id: number | null) => string }) {
  const c = props.communication;
  const rows = c.ranks.flatMap((r) => r.devices.map((d) => ({ ...d, pid: r.pid, rank: r.rank, worldSize: r.worldSize })));
  const time = (ns: number, span: number, color: string) => <Bar share={span > 0 ? ns / span : 0} text={formatDuration(ns)} color={color} />;
  return (
    <section>
      <h2>
        Communication <span className="h-note">NCCL kernels and peer copies; per rank and GPU: compute + exposed + copies + idle = the GPU span</span>
      </h2>
      <SortTable
        testId="stats-communication"
        initial="overlap"
        rows={rows}
        cols={[
          {
            key: 'rank',
            label: 'rank',
            value: (r) => r.rank ?? -1,
            show: (r) => (r.rank === null ? '—' : `${r.rank}${r.worldSize !== null ? ` of ${r.worldSize}` : ''}`),
          },
          { key: 'pid', label: 'pid', numeric: true, value: (r) => r.pid },
          { key: 'device', label: 'device', value: (r) => r.deviceId, show: (r) => props.devName(r.deviceId) },
          { key: 'compute', label: 'compute', numeric: true, value: (r) => r.computeNs, show: (r) => time(r.computeNs, r.spanNs, KIND_COLORS.kernel) },
          { key: 'comm', label: 'communication', numeric: true, value: (r) => r.communicationNs, show: (r) => time(r.communicationNs, r.spanNs, '#c0504d') },
          { key: 'exposed', label: 'exposed', numeric: true, value: (r) => r.exposedNs, show: (r) => time(r.exposedNs, r.spanNs, '#c0504d') },
          { key: 'copies', label: 'copies', numeric: true, value: (r) => r.copyNs, show: (r) => time(r.copyNs, r.spanNs, '#6a9fd0') },
          { key: 'idle', label: 'idle', numeric: true, value: (r) => r.idleNs, show: (r) => time(r.idleNs, r.spanNs, '#999') },
          {
            key: 'overlap',
            label: 'hidden behind compute',
            numeric: true,
            value: (r) => r.overlap ?? -1,
            show: (r) => (r.overlap === null ? <span className="hint">—</span> : <Bar share={r.overlap} />),
          },
        ]}
      />
      <SortTable
        testId="stats-collectives"
        initial="total"
        rows={[
          ...c.collectives.map((k) => ({ kind: k.collective, count: k.count, totalNs: k.totalNs })),
          ...(c.peerCopies.count > 0 ? [{ kind: 'peer copies', count: c.peerCopies.count, totalNs: c.peerCopies.totalNs }] : []),
        ]}
        cols={[
          { key: 'kind', label: 'collective', value: (r) => r.kind },
          { key: 'count', label: 'count', numeric: true, value: (r) => r.count },
          { key: 'total', label: 'total', numeric: true, value: (r) => r.totalNs, show: (r) => formatDuration(r.totalNs) },
        ]}
      />
    </section>
  );
}

/**
 * Stragglers (issue 13; `report`'s Stragglers section): the NCCL collective
 * instances matched across ranks; per rank how often it arrived last, the
 * wait that caused the others and its own wait, how late it arrives; the
 * straggler, when one is named.
 */
export function Stragglers(props: { stragglers: StragglerStats; devName: (id: number | null) => string }) {
  const s = props.stragglers;
  const maxWait = s.ranks.reduce((m, r) => Math.max(m, r.causedWaitNs, r.waitedNs), 1);
  const wait = (ns: number) => <Bar share={ns / maxWait} text={formatDuration(ns)} color="#c0504d" />;
  const g = s.gaps;
  const skipped = g.partialInstances + g.unsynchronizedInstances;
  return (
    <section>
      <h2>
        Stragglers{' '}
        <span className="h-note">
          {s.instances.toLocaleString('en-US')} NCCL collective instances matched across {s.ranks.length} ranks
          {skipped > 0 ? ` (${skipped.toLocaleString('en-US')} more not matched on every rank)` : ''}; wait: time spent in a collective before its last rank
          arrived
        </span>
      </h2>
      <p className="hint" data-testid="stats-straggler">
        {s.straggler
          ? `Straggler: ${participantName(s.straggler)}, last at ${s.straggler.lastCount} of ${s.straggler.instances}; the others waited ${formatDuration(s.straggler.causedWaitNs)} for it.`
          : 'No straggler: no rank arrives last more often than chance has it, with a wait that matters.'}
      </p>
      <SortTable
        testId="stats-stragglers"
        initial="caused"
        rows={s.ranks}
        cols={[
          {
            key: 'rank',
            label: 'rank',
            value: (r) => r.rank ?? -1,
            show: (r) => (r.rank === null ? '—' : `${r.rank}${r.worldSize !== null ? ` of ${r.worldSize}` : ''}`),
          },
          { key: 'host', label: 'host', value: (r) => r.host ?? '' },
          { key: 'pid', label: 'pid', numeric: true, value: (r) => r.pid },
          { key: 'device', label: 'device', value: (r) => r.deviceId, show: (r) => props.devName(r.deviceId) },
          {
            key: 'last',
            label: 'last',
            numeric: true,
            value: (r) => r.lastCount,
            show: (r) => <Bar share={r.instances > 0 ? r.lastCount / r.instances : 0} text={`${r.lastCount} of ${r.instances}`} />,
          },
          { key: 'caused', label: 'wait caused', numeric: true, value: (r) => r.causedWaitNs, show: (r) => wait(r.causedWaitNs) },
          { key: 'waited', label: 'waited', numeric: true, value: (r) => r.waitedNs, show: (r) => wait(r.waitedNs) },
          { key: 'late', label: 'mean late', numeric: true, value: (r) => r.meanLateNs, show: (r) => formatDuration(r.meanLateNs) },
          {
            key: 'skew',
            label: 'skew when last',
            numeric: true,
            value: (r) => r.meanSkewWhenLastNs ?? -1,
            show: (r) =>
              r.meanSkewWhenLastNs === null ? (
                <span className="hint">—</span>
              ) : (
                `${formatDuration(r.meanSkewWhenLastNs)} (max ${formatDuration(r.maxSkewWhenLastNs!)})`
              ),
          },
        ]}
      />
    </section>
  );
}
