/**
 * What the Sweep and Memory charts draw, computed from report data with no
 * BokehJS and no DOM (so the unit tests run it in node): the sweep's
 * measured times with the verdict of the doubling that reached each size,
 * its guides, the split of each size's span as shares, and the memory
 * timeline as stacked steps. charts_sweep.ts draws these with BokehJS.
 */

import { SPLIT_KEYS } from './model';
import { ISweep, IMemoryTimeline, tableRows } from './schema';

/** One measured size of a sweep. */
export interface ISweepPoint {
  /** The size. */
  size: number;
  /** Time per step (median), seconds. */
  span_s: number;
  /** Its spread: the first and third quartiles, seconds. */
  q1_s: number | null;
  q3_s: number | null;
  /** Items per second, where the sweep counted items. */
  items_per_s: number | null;
  /** The doubling that reached this size: its verdict, factor and size before. */
  verdict: string | null;
  per_doubling: number | null;
  from_size: number | null;
}

/** A dashed guide of the time chart: two points. */
export interface IGuide {
  /** Its key in the report (flat or linear). */
  key: string;
  /** Its legend label. */
  label: string;
  /** Sizes and seconds. */
  x: number[];
  y: number[];
}

/** The guides in drawing order, with their labels. */
export const GUIDES: [key: string, label: string][] = [
  ['flat', 'flat (overhead)'],
  ['linear', 'slope 1 (saturated)']
];

/** Guides of a sweep that has them, in GUIDES order; positive only (log axes). */
export function sweepGuides(sweep: ISweep): IGuide[] {
  const out: IGuide[] = [];
  for (const [key, label] of GUIDES) {
    const line = sweep.guides[key];
    if (
      line &&
      line.length === 2 &&
      line.every(p => p.length >= 2 && p[0] > 0 && p[1] > 0)
    ) {
      out.push({ key, label, x: line.map(p => p[0]), y: line.map(p => p[1]) });
    }
  }
  return out;
}

/** The sizes measured (status ok, a positive time), with the verdict that reached each. */
export function sweepPoints(sweep: ISweep): ISweepPoint[] {
  const rows = tableRows<{ [key: string]: any }>(sweep.points);
  const doublings = tableRows<{ [key: string]: any }>(sweep.doublings);
  const reached = new Map<number, { [key: string]: any }>();
  for (const d of doublings) {
    reached.set(d.to_size, d);
  }
  return rows
    .filter(p => p.status === 'ok' && p.size > 0 && (p.span_s ?? 0) > 0)
    .map(p => {
      const d = reached.get(p.size);
      return {
        size: p.size,
        span_s: p.span_s,
        q1_s: p.q1_s ?? null,
        q3_s: p.q3_s ?? null,
        items_per_s: p.items_per_s ?? null,
        verdict: d?.verdict ?? null,
        per_doubling: d?.per_doubling ?? null,
        from_size: d?.from_size ?? null
      };
    });
}

/** One part of stacked bars or areas: per bar (or step), its bottom and top. */
export interface IStackPart {
  /** The part's key (a split key or a memory category). */
  key: string;
  /** Where it starts and ends, per bar or step. */
  bottom: number[];
  top: number[];
  /** The part's own value, per bar or step. */
  value: number[];
}

/**
 * The split of each size's span as shares (each bar sums to 1), bottom to
 * top in SPLIT_KEYS order; parts that are zero at every size are left out.
 */
export function splitShares(
  points: { [key: string]: unknown }[]
): IStackPart[] {
  const values = SPLIT_KEYS.map(key =>
    points.map(p => Math.max(0, Number(p[`${key}_s`] ?? 0) || 0))
  );
  const totals = points.map((_p, i) =>
    values.reduce((sum, v) => sum + v[i], 0)
  );
  const base = points.map(() => 0);
  const out: IStackPart[] = [];
  SPLIT_KEYS.forEach((key, k) => {
    if (!values[k].some(v => v > 0)) {
      return;
    }
    const bottom = [...base];
    values[k].forEach((v, i) => {
      base[i] += totals[i] > 0 ? v / totals[i] : 0;
    });
    out.push({ key, bottom, top: [...base], value: values[k] });
  });
  return out;
}

/** Stacked steps: each moment's bytes hold until the next moment. */
export interface IStepStacks {
  /** Start and end of each step, seconds (one step fewer than moments). */
  start: number[];
  end: number[];
  /** The categories that hold bytes somewhere, bottom to top. */
  parts: IStackPart[];
  /** The stack's height per step. */
  total: number[];
}

/**
 * The memory timeline as stacked steps: step i runs from moment i to moment
 * i + 1 with the bytes of moment i; categories that are empty throughout
 * are left out.
 */
export function memorySteps(t: IMemoryTimeline): IStepStacks {
  const n = Math.max(0, t.times_s.length - 1);
  const start = t.times_s.slice(0, n);
  const end = t.times_s.slice(1, n + 1);
  const base = new Array<number>(n).fill(0);
  const parts: IStackPart[] = [];
  t.categories.forEach((key, k) => {
    const series = t.bytes[k] ?? [];
    const value = start.map((_s, i) => Math.max(0, series[i] ?? 0));
    if (!value.some(v => v > 0)) {
      return;
    }
    const bottom = [...base];
    value.forEach((v, i) => (base[i] += v));
    parts.push({ key, bottom, top: [...base], value });
  });
  return { start, end, parts, total: base };
}

/** A decimal byte unit for an axis whose values reach `top` (as fmtBytes counts). */
export function bytesUnit(top: number): { scale: number; label: string } {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (top >= 1000 ** (i + 1) && i < units.length - 1) {
    i++;
  }
  return { scale: 1 / 1000 ** i, label: units[i] };
}

/** Ticks for a log axis of sizes: the sizes, thinned to at most `most`. */
export function sizeTicks(sizes: number[], most = 8): number[] {
  const sorted = [...new Set(sizes)].sort((a, b) => a - b);
  if (sorted.length <= most) {
    return sorted;
  }
  const every = Math.ceil(sorted.length / most);
  return sorted.filter((_s, i) => i % every === 0);
}
