// Overview of the whole recording (the minimap): per GPU, how many kernels
// and copies were in flight on average over time, from overview() at one
// bucket per pixel (answered from the zones: instant even for ten million
// operations), with the visible range framed. Click or drag to move the view;
// shift-drag to choose a new range.
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { OVERVIEW_TOTAL_DEVICE, type OverviewResponse, type RecordingSummary } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';
import { KIND_COLORS } from '../base/colors.ts';
import { TimeAxis } from './coords.ts';
import type { View } from './view.ts';

/** A lane per GPU, this high while they fit in OVERVIEW_MAX_H; thinner for a job of many GPUs (64 ranks: 2 px each), so the minimap never pushes the rows down. */
const LANE_H = 14;
const OVERVIEW_MAX_H = 128;
/** More GPUs than this (a lane each under 2 px: a job of 1,024 ranks) and the minimap is one lane, their sum (OverviewDevices.total). */
const MAX_LANES = OVERVIEW_MAX_H / 2;

export function Overview(props: { summary: RecordingSummary; view: View; onView: (v: View) => void; width: number }) {
  const { summary, view, onView, width } = props;
  const ref = useRef<HTMLCanvasElement>(null);
  const [conc, setConc] = useState<OverviewResponse | null>(null);
  // The devices that have streams: derived from the summary once, so the drawing effect depends on it stably.
  const gpus = useMemo(() => summary.devices.filter((d) => summary.streams.some((s) => s.deviceId === d.id)), [summary]);
  const summed = gpus.length > MAX_LANES;
  const devices = useMemo(() => (summed ? [{ id: OVERVIEW_TOTAL_DEVICE }] : gpus), [summed, gpus]);
  const laneH = Math.max(2, Math.min(LANE_H, Math.floor(OVERVIEW_MAX_H / Math.max(1, devices.length))));
  const H = Math.max(1, devices.length) * laneH + 4;
  // The whole recording across the minimap (at least 1 ns of it).
  const span = Math.max(1, summary.endNs - summary.startNs);
  const axis = useMemo(() => new TimeAxis({ start: summary.startNs, end: summary.startNs + span }, width), [summary.startNs, span, width]);
  const xOf = useCallback((t: number) => axis.timeToViewX(t), [axis]);
  useEffect(() => {
    let live = true;
    if (width < 10) return;
    getApi()
      .overview(summary.recordingId, Math.min(4096, Math.round(width)), null, summed ? { total: true } : null)
      .then((o) => {
        if (live) setConc(o);
      })
      .catch(() => {});
    return () => {
      live = false;
    };
    // endNs: a recording being written grew (its summary is asked again at most every second: app/use-live.ts).
  }, [summary.recordingId, summary.endNs, width, summed]);
  // The density, drawn once per answer and size into a canvas off the page;
  // a pan or zoom copies it and draws the view's frame over it. Redrawing
  // it and resizing the canvas (which reallocates it) in every frame cost
  // the frame ~0.5 ms on 2 cores.
  const density = useMemo(() => {
    const dpr = window.devicePixelRatio || 1;
    const c = document.createElement('canvas');
    c.width = Math.max(1, Math.round(width * dpr));
    c.height = Math.max(1, Math.round(H * dpr));
    const g = c.getContext('2d')!;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = '#f4f6f9';
    g.fillRect(0, 0, width, H);
    devices.forEach((dev, i) => {
      const cr = conc?.devices.find((d) => d.deviceId === dev.id);
      if (!cr || !conc) return;
      const y0 = 2 + i * laneH;
      const bw = axis.durationToViewPx(conc.bucketNs);
      const peak = cr.kernels.reduce((m, k, b) => Math.max(m, k + cr.copies[b]! + cr.other[b]!), 1e-9);
      for (let b = 0; b < cr.kernels.length; b++) {
        // Stacked: kernels, then copies, then the rest, scaled to the device's peak.
        let y = y0 + laneH - (laneH > 4 ? 1 : 0);
        const x = xOf(conc.startNs + b * conc.bucketNs);
        for (const [v, kind] of [
          [cr.kernels[b]!, 'kernel'],
          [cr.copies[b]!, 'memcpy-h2d'],
          [cr.other[b]!, 'memcpy-other'],
        ] as const) {
          if (!v) continue;
          const h = (v / peak) * (laneH - (laneH > 4 ? 2 : 0));
          g.fillStyle = KIND_COLORS[kind];
          g.fillRect(x, y - h, Math.max(1, bw), h);
          y -= h;
        }
      }
    });
    return c;
  }, [conc, width, devices, H, laneH, axis, xOf]);
  useLayoutEffect(() => {
    const c = ref.current!;
    if (c.width !== density.width || c.height !== density.height) {
      c.width = density.width;
      c.height = density.height;
      c.style.width = `${width}px`;
      c.style.height = `${H}px`;
    }
    const dpr = window.devicePixelRatio || 1;
    const g = c.getContext('2d')!;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.drawImage(density, 0, 0);
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    // Outside the view: dimmed; the view: framed.
    const a = Math.max(0, xOf(view.start));
    const b = Math.min(width, xOf(view.end));
    g.fillStyle = 'rgba(30, 40, 60, 0.18)';
    g.fillRect(0, 0, a, H);
    g.fillRect(b, 0, width - b, H);
    g.strokeStyle = '#1f4e80';
    g.lineWidth = 1.5;
    g.strokeRect(Math.min(a, width - 3) + 0.75, 0.75, Math.max(3, b - a) - 1.5, H - 1.5);
  }, [density, view, width, H, xOf]);
  const drag = useRef<{ x: number; shift: boolean; view: View } | null>(null);
  const toNs = (px: number) => axis.viewXToTime(px);
  const center = (px: number) => {
    const half = (view.end - view.start) / 2;
    onView({ start: toNs(px) - half, end: toNs(px) + half });
  };
  return (
    <canvas
      ref={ref}
      data-testid="overview"
      className="overview"
      title="Overview of the whole recording: click or drag to move, shift-drag to choose a range"
      onMouseDown={(e) => {
        drag.current = { x: e.nativeEvent.offsetX, shift: e.shiftKey, view };
        if (!e.shiftKey) center(e.nativeEvent.offsetX);
      }}
      onMouseMove={(e) => {
        const d = drag.current;
        if (!d || !(e.buttons & 1)) return;
        if (!d.shift) center(e.nativeEvent.offsetX);
      }}
      onMouseUp={(e) => {
        const d = drag.current;
        drag.current = null;
        if (d?.shift && Math.abs(e.nativeEvent.offsetX - d.x) > 3) {
          const [p, q] = [d.x, e.nativeEvent.offsetX].sort((m, n) => m - n);
          onView({ start: toNs(p!), end: toNs(q!) });
        }
      }}
    />
  );
}
