import { describe, expect, it } from 'vitest';
import { contentToCanvas, contentToPage, nsPerPhysicalPx, TimeAxis } from './coords.ts';

describe('coordinate spaces', () => {
  const view = { start: 1_000, end: 5_000 };
  const axis = new TimeAxis(view, 800);

  it('maps the view onto 0..width, and back', () => {
    expect(axis.timeToViewX(1_000)).toBe(0);
    expect(axis.timeToViewX(5_000)).toBe(800);
    expect(axis.timeToViewX(3_000)).toBe(400);
    expect(axis.timeToViewX(0)).toBe(-200);
    expect(axis.viewXToTime(400)).toBe(3_000);
    expect(axis.viewXToTime(axis.timeToViewX(1_234))).toBeCloseTo(1_234, 9);
  });

  it('converts durations and pixel stretches', () => {
    expect(axis.durationToViewPx(500)).toBe(100);
    expect(axis.viewPxToDuration(3)).toBe(15);
  });

  it('an empty view maps everything to its start instead of NaN', () => {
    const empty = new TimeAxis({ start: 10, end: 10 }, 100);
    expect(Number.isFinite(empty.timeToViewX(20))).toBe(true);
    expect(empty.timeToViewX(10)).toBe(0);
  });

  it('gives the ns per physical pixel', () => {
    expect(nsPerPhysicalPx(view, 800, 2)).toBe(2.5);
    expect(nsPerPhysicalPx(view, 0, 1)).toBe(4_000);
  });

  it('moves boxes from content to canvas and page coordinates, keeping their other fields', () => {
    const box = { x: 10, y: 100, w: 5, h: 8, id: 3 };
    expect(contentToCanvas(box, 40)).toEqual({ x: 10, y: 60, w: 5, h: 8, id: 3 });
    expect(contentToPage(box, { left: 300, top: 50 }, 40)).toEqual({ x: 310, y: 110, w: 5, h: 8, id: 3 });
  });
});
