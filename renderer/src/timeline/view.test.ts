// The view's clamp and moves (view.ts): every path that changes the view
// ends in clampView, so these are the bounds the keys, wheel, drag, buttons
// and jumps all keep.
import { describe, expect, it } from 'vitest';
import { clampView, EDGE, MIN_SPAN_NS, panView, zoomView, type View } from './view.ts';

// normalise-concurrent.sqlite's summary: a recording starting 14 ms after its origin.
const rec = { startNs: 14_022_472, endNs: 439_059_840 };
const full = rec.endNs - rec.startNs;
const width = (v: View) => v.end - v.start;

describe('clampView', () => {
  it('keeps a view inside the recording as it is', () => {
    const v = { start: 100e6, end: 200e6 };
    expect(clampView(v, rec)).toEqual(v);
    expect(clampView({ start: rec.startNs, end: rec.endNs }, rec)).toEqual({ start: rec.startNs, end: rec.endNs });
  });

  it('moves a view reaching past an end back in, its width kept, to within EDGE of its width', () => {
    // The search jump that showed [-621 ms, 1079 ms] on a 425 ms recording.
    const jump = clampView({ start: -621e6, end: 1079e6 }, rec);
    expect(jump.start).toBeGreaterThanOrEqual(0);
    expect(jump.start).toBeGreaterThanOrEqual(rec.startNs - EDGE * full);
    expect(jump.end).toBeLessThanOrEqual(rec.endNs + EDGE * full);
    const late = clampView({ start: 430e6, end: 450e6 }, rec);
    expect(width(late)).toBeCloseTo(20e6, 0);
    expect(late.end).toBeCloseTo(rec.endNs + EDGE * 20e6, 0);
    const early = clampView({ start: -5e6, end: 5e6 }, rec);
    expect(width(early)).toBeCloseTo(10e6, 0);
    expect(early.start).toBeCloseTo(rec.startNs - EDGE * 10e6, 0);
  });

  it('never shows time before the origin for a recording that starts after it', () => {
    const atOrigin = { startNs: 0, endNs: 1e9 };
    expect(clampView({ start: -3e8, end: 5e8 }, atOrigin).start).toBe(0);
    expect(clampView({ start: -1e12, end: 1e12 }, atOrigin)).toEqual({ start: 0, end: 1e9 * (1 + EDGE) });
    // A job's rank aligned to another's clock may start before it: its own start is the bound then.
    expect(clampView({ start: -9e8, end: -8e8 }, { startNs: -5e8, endNs: 1e9 }).start).toBe(-5e8);
  });

  it('a view wider than the recording is the recording and its margins, around its middle', () => {
    const wide = clampView({ start: -1e12, end: 1e12 }, rec);
    expect(width(wide)).toBeLessThanOrEqual(full * (1 + 2 * EDGE) + 1);
    expect(wide.start).toBeGreaterThanOrEqual(rec.startNs - EDGE * full);
    expect(wide.end).toBeLessThanOrEqual(rec.endNs + EDGE * full);
  });

  it(`is never narrower than ${MIN_SPAN_NS} ns, and an empty or inverted view is the whole recording`, () => {
    expect(width(clampView({ start: 200e6, end: 200e6 + 3 }, rec))).toBe(MIN_SPAN_NS);
    expect(clampView({ start: 300e6, end: 200e6 }, rec)).toEqual({ start: rec.startNs, end: rec.endNs });
    expect(clampView({ start: NaN, end: NaN }, rec)).toEqual({ start: rec.startNs, end: rec.endNs });
  });
});

describe('zoomView and panView', () => {
  const v = { start: 100e6, end: 200e6 };
  it('zoom keeps the point under the cursor where it is', () => {
    const z = zoomView(v, 0.5, 0.25);
    expect(width(z)).toBe(50e6);
    expect(z.start + 0.25 * width(z)).toBe(v.start + 0.25 * width(v));
  });
  it(`zoom stops at ${MIN_SPAN_NS} ns without creeping towards the cursor`, () => {
    const floor = { start: 150e6, end: 150e6 + MIN_SPAN_NS };
    expect(zoomView(floor, 0.5, 0.9)).toEqual(floor);
  });
  it('pan moves by a share of the width', () => {
    expect(panView(v, -0.15)).toEqual({ start: 85e6, end: 185e6 });
  });
  it('many pans and zooms, each clamped, stay inside', () => {
    let w: View = { start: rec.startNs, end: rec.endNs };
    for (let i = 0; i < 200; i++) w = clampView(panView(zoomView(w, i % 7 === 0 ? 0.5 : 1.3, 0.9), i < 100 ? -0.4 : 0.4), rec);
    expect(w.start).toBeGreaterThanOrEqual(rec.startNs - EDGE * full);
    expect(w.end).toBeLessThanOrEqual(rec.endNs + EDGE * full);
  });
});
