/**
 * The What-if tab's model against Python's `report.what_if()` on the same
 * report (tests/data/whatif, written by its make_fixture.py): the replayed
 * span at the curves' factors exactly, between them within the
 * interpolation's error; Amdahl's law for a report without the curves.
 */

import { describe, expect, it } from 'vitest';

import { ReportData } from '../model';
import { parseReport } from '../schema';
import { amdahl, replayedRatio } from '../views/whatif';
import { readJson } from './fixtures';

const report = parseReport(readJson('whatif', 'tiny_mlp.report.json'));
const table: any[] = readJson('whatif', 'tiny_mlp.what_if.json');
const span = report.summary.span_s!;

describe('the replayed what-if', () => {
  const targets = report.what_if!.targets;

  it('offers what report.what_if() answers for', () => {
    expect(targets.map(t => t.id).sort()).toEqual(table.map(r => r.id).sort());
    expect(report.what_if!.predicted_by).toMatch(
      /^predicted by replaying the step's dependencies/
    );
  });

  it('gives the same spans as Python at the factors it replayed', () => {
    for (const row of table) {
      const t = targets.find(x => x.id === row.id)!;
      expect(t.limit).toBeCloseTo(row.limit, 12);
      for (const n of [2, 10, 100]) {
        // Each curve has these factors (one with nothing to speed up has only 1).
        expect(t.factors.length === 1 || t.factors.includes(n)).toBe(true);
        const shown = span * replayedRatio(t, n);
        expect(shown / row[`span_at_${n}x_s`]).toBeCloseTo(1, 9);
      }
    }
  });

  it('is close to Python between them', () => {
    for (const row of table) {
      const t = targets.find(x => x.id === row.id)!;
      for (const n of [1.5, 5, 30]) {
        const shown = span * replayedRatio(t, n);
        const exact = row[`span_at_${n}x_s`];
        expect(Math.abs(shown - exact) / exact).toBeLessThan(0.01);
      }
    }
  });

  it('promises nothing for faster kernels where the GPU waits for the host', () => {
    const addmm = targets.find(
      t => t.kind === 'op' && t.name === 'aten::addmm'
    )!;
    const op = new ReportData(report).ops.find(o => o.name === 'aten::addmm')!;
    // Amdahl on the span: over 1.035x at 2x.
    expect(amdahl(span, op.gpu_time_s! / span, 2).speedup).toBeGreaterThan(
      1.035
    );
    expect(1 / replayedRatio(addmm, 2)).toBeLessThan(1.005);
  });
});

describe('a report without the curves', () => {
  it('has none: the tab shows Amdahl', () => {
    const older = parseReport(readJson('reports', 'small.json'));
    expect(older.what_if).toBeNull();
  });
});
