/// <reference lib="dom" />
// Frame work from a Chromium trace, for the renderer benchmark: how long
// the page's main thread was busy in each frame. Frame-to-frame times
// measured in the page cannot say whether the app fits the 16 ms budget
// (vsync holds them at 16.7 ms or more either way); this can.
interface TraceEvent {
  ph: string;
  name: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string };
}

/** Per frame, in ms: wall time the main thread was in tasks, and the part of it on a CPU. */
export interface FrameWork {
  wallMs: number[];
  /**
   * The thread's own CPU time in those tasks (the trace's thread clock): the
   * work the page asked for, without the time it waited for a core while
   * other processes ran (on a 2-core machine shared with the server and
   * Chromium's other threads, a 1 ms paint can take 50 ms of wall time).
   */
  cpuMs: number[];
}

/**
 * The renderer main thread's busy time in each frame of a Chromium trace:
 * its top-level tasks between one BeginMainFrame and the next (input,
 * script, the frame's style, layout, paint and commit, and whatever else
 * the thread ran in that interval, such as decoding an answer). A task
 * that crosses a frame boundary counts in each frame for its overlap.
 */
export function mainThreadWorkPerFrame(trace: { traceEvents: TraceEvent[] } | TraceEvent[]): FrameWork {
  const events = Array.isArray(trace) ? trace : trace.traceEvents;
  const main = events.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  if (!main) throw new Error('the trace has no renderer main thread');
  const on = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur !== undefined);
  const tasks = on.filter((e) => e.name === 'ThreadControllerImpl::RunTask').sort((a, b) => a.ts - b.ts);
  const frames = on
    .filter((e) => e.name === 'ProxyMain::BeginMainFrame')
    .map((e) => e.ts)
    .sort((a, b) => a - b);
  const wallMs: number[] = [];
  const cpuMs: number[] = [];
  let t = 0;
  for (let f = 0; f + 1 < frames.length; f++) {
    const [a, b] = [frames[f]!, frames[f + 1]!];
    while (t < tasks.length && tasks[t]!.ts + tasks[t]!.dur! <= a) t++;
    let wall = 0;
    let cpu = 0;
    for (let k = t; k < tasks.length && tasks[k]!.ts < b; k++) {
      const task = tasks[k]!;
      const overlap = Math.max(0, Math.min(task.ts + task.dur!, b) - Math.max(task.ts, a));
      wall += overlap;
      // Without a thread clock (some platforms), CPU time is taken as wall
      // time; the two clocks differ in resolution, so a busy task can read a
      // little more thread time than wall time: never counted past its wall.
      cpu += task.dur! > 0 ? (overlap / task.dur!) * Math.min(task.tdur ?? task.dur!, task.dur!) : 0;
    }
    wallMs.push(wall / 1000);
    cpuMs.push(cpu / 1000);
  }
  return { wallMs, cpuMs };
}

/**
 * A page's script whose frames do a known amount of work, for
 * `page.evaluate`: 10 idle frames (a redraw each, nothing else), 10 frames
 * each busy for 30 ms of wall time in a loop, 5 idle frames. The frame-trace
 * test checks that mainThreadWorkPerFrame finds them; the responsiveness
 * benchmark prints how busy and idle they read on this machine.
 */
export async function frameWorkPage(): Promise<void> {
  const ctx = (document.getElementById('c') as HTMLCanvasElement).getContext('2d')!;
  const frame = () => new Promise((r) => requestAnimationFrame(() => r(null)));
  for (let i = 0; i < 10; i++) await frame();
  for (let i = 0; i < 10; i++) {
    await frame();
    const until = performance.now() + 30;
    while (performance.now() < until) ctx.fillRect(i, 0, 1, 1);
  }
  for (let i = 0; i < 5; i++) await frame();
}
