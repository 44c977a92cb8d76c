/**
 * What the Sweep and Memory charts draw (chart_data.ts), from the sweep and
 * memory breakdown of tests/data/reports/sweep.json as Python writes them.
 */

import { describe, expect, it } from 'vitest';

import {
  bytesUnit,
  memorySteps,
  sizeTicks,
  splitShares,
  sweepGuides,
  sweepPoints
} from '../chart_data';
import { SPLIT_KEYS } from '../model';
import { IMemoryTimeline, parseReport, tableRows } from '../schema';
import { readJson } from './fixtures';

const doc = readJson('reports', 'sweep.json');
const report = parseReport(doc);
const rows = (t: { columns: string[]; data: unknown[][] }) =>
  tableRows<{ [key: string]: any }>(t as any);

describe('the sweep charts', () => {
  const sweep = report.sweep!;
  const ok = rows(doc.sweep.points).filter(
    p => p.status === 'ok' && p.span_s > 0
  );

  it('place each measured size at its time, with the verdict that reached it', () => {
    const points = sweepPoints(sweep);
    expect(points.map(p => p.size)).toEqual(ok.map(p => p.size));
    expect(points.map(p => p.span_s)).toEqual(ok.map(p => p.span_s));
    const doublings = rows(doc.sweep.doublings);
    expect(points[0].verdict).toBeNull(); // nothing before the first size
    expect(points.slice(1).map(p => [p.from_size, p.verdict])).toEqual(
      doublings.map(d => [d.from_size, d.verdict])
    );
    expect(points[1].per_doubling).toBe(doublings[0].per_doubling);
  });

  it('leave out failed sizes and sizes with no time', () => {
    const failed = {
      ...sweep,
      points: {
        ...sweep.points,
        data: sweep.points.data.map((row, i) => {
          const copy = [...row];
          const columns = sweep.points.columns;
          if (i === 1) {
            copy[columns.indexOf('status')] = 'oom';
          }
          if (i === 2) {
            copy[columns.indexOf('span_s')] = null;
          }
          return copy;
        })
      }
    };
    expect(sweepPoints(failed).map(p => p.size)).toEqual(
      [0, 3].map(i => ok[i].size)
    );
  });

  it('draw both guides in order, and none that a log axis cannot show', () => {
    const guides = sweepGuides(sweep);
    expect(guides.map(g => g.label)).toEqual([
      'flat (overhead)',
      'slope 1 (saturated)'
    ]);
    expect(guides[0].x).toEqual(
      doc.sweep.guides.flat.map((p: number[]) => p[0])
    );
    expect(guides[1].y).toEqual(
      doc.sweep.guides.linear.map((p: number[]) => p[1])
    );
    expect(
      sweepGuides({
        ...sweep,
        guides: {
          flat: [
            [0, 1],
            [8, 1]
          ]
        }
      })
    ).toEqual([]);
  });

  it('stack each size split as shares that add up to the whole', () => {
    const parts = splitShares(ok);
    const held = SPLIT_KEYS.filter(k => ok.some(p => (p[`${k}_s`] ?? 0) > 0));
    expect(parts.map(p => p.key)).toEqual(held);
    ok.forEach((p, i) => {
      const total = held.reduce((a, k) => a + p[`${k}_s`], 0);
      expect(parts[0].bottom[i]).toBe(0);
      expect(parts[parts.length - 1].top[i]).toBeCloseTo(1, 12);
      parts.forEach((part, k) => {
        expect(part.top[i] - part.bottom[i]).toBeCloseTo(
          p[`${part.key}_s`] / total,
          12
        );
        if (k > 0) {
          expect(part.bottom[i]).toBe(parts[k - 1].top[i]);
        }
      });
    });
  });

  it('ticks the sizes themselves, thinned when there are many', () => {
    expect(sizeTicks([32, 4, 8, 16, 8])).toEqual([4, 8, 16, 32]);
    const many = Array.from({ length: 12 }, (_v, i) => 2 ** i);
    const ticks = sizeTicks(many, 6);
    expect(ticks.length).toBeLessThanOrEqual(6);
    expect(ticks[0]).toBe(1);
  });
});

describe('the memory timeline', () => {
  const t = report.memory!.timeline;

  it('stacks the categories that hold bytes as steps up to the next moment', () => {
    const steps = memorySteps(t);
    const n = t.times_s.length - 1;
    expect(steps.start).toEqual(t.times_s.slice(0, n));
    expect(steps.end).toEqual(t.times_s.slice(1));
    const held = t.categories.filter((_c, k) =>
      t.bytes[k].slice(0, n).some(v => v > 0)
    );
    expect(steps.parts.map(p => p.key)).toEqual(held);
    expect(held).toContain('parameters');
    for (let i = 0; i < n; i++) {
      const sum = t.bytes.reduce((a, series) => a + series[i], 0);
      expect(steps.total[i]).toBe(sum);
      let below = 0;
      for (const part of steps.parts) {
        expect(part.bottom[i]).toBe(below);
        expect(part.value[i]).toBe(t.bytes[t.categories.indexOf(part.key)][i]);
        below = part.top[i];
      }
      expect(below).toBe(sum);
    }
  });

  it('draws nothing from fewer than two moments', () => {
    const one: IMemoryTimeline = {
      times_s: [0],
      categories: ['parameters'],
      bytes: [[10]],
      allocated: [10]
    };
    const steps = memorySteps(one);
    expect(steps.start).toEqual([]);
    expect(steps.parts).toEqual([]);
  });

  it('reads the axis in one decimal byte unit', () => {
    expect(bytesUnit(999)).toEqual({ scale: 1, label: 'B' });
    expect(bytesUnit(131656)).toEqual({ scale: 1e-3, label: 'kB' });
    expect(bytesUnit(141e9)).toEqual({ scale: 1e-9, label: 'GB' });
  });
});
