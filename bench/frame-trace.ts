// Frame work from a Chromium trace, for the renderer benchmark: how long
// the page's main thread was busy in each frame. Frame-to-frame times
// measured in the page cannot say whether the app fits the 16 ms budget
// (vsync holds them at 16.7 ms or more either way); this can.
interface TraceEvent { ph: string; name: string; pid: number; tid: number; ts: number; dur?: number; args?: { name?: string } }

/**
 * The renderer main thread's busy time in each frame of a Chromium trace:
 * its top-level tasks between one BeginMainFrame and the next (input,
 * script, the frame's style, layout, paint and commit, and whatever else
 * the thread ran in that interval, such as parsing an answer).
 */
export function mainThreadWorkPerFrame(trace: { traceEvents: TraceEvent[] } | TraceEvent[]): number[] {
  const events = Array.isArray(trace) ? trace : trace.traceEvents;
  const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  if (!main) throw new Error('the trace has no renderer main thread');
  const on = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur !== undefined);
  const tasks = on.filter((e) => e.name === 'ThreadControllerImpl::RunTask').sort((a, b) => a.ts - b.ts);
  const frames = on.filter((e) => e.name === 'ProxyMain::BeginMainFrame').map((e) => e.ts).sort((a, b) => a - b);
  const work: number[] = [];
  let t = 0;
  for (let f = 0; f + 1 < frames.length; f++) {
    const [a, b] = [frames[f]!, frames[f + 1]!];
    while (t < tasks.length && tasks[t]!.ts + tasks[t]!.dur! <= a) t++;
    let busy = 0;
    for (let k = t; k < tasks.length && tasks[k]!.ts < b; k++) busy += Math.min(tasks[k]!.ts + tasks[k]!.dur!, b) - Math.max(tasks[k]!.ts, a);
    work.push(busy / 1000);
  }
  return work;
}
