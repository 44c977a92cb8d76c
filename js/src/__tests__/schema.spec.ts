/** Reading report documents: the example files of tests/data/reports. */

import { describe, expect, it } from 'vitest';

import {
  MEMORY_CATEGORIES,
  MEMORY_LARGEST_COLUMNS,
  opRows,
  parseReport,
  ReportError,
  SCHEMA_VERSION,
  SWEEP_POINT_COLUMNS,
  SWEEP_VERDICTS,
  tableRows
} from '../schema';
import { readJson } from './fixtures';

describe('parseReport', () => {
  it('reads a report of the previous schema version, with no display specs', () => {
    const doc = readJson('reports', 'small.json');
    expect(doc.version).toBe(1);
    const report = parseReport(doc);
    expect(report.display).toBeNull();
    expect(opRows(report).length).toBe(doc.ops.data.length);
  });

  it('reads the display specs of a report of this version', () => {
    const doc = readJson('reports', 'small_v2.json');
    expect(doc.version).toBe(SCHEMA_VERSION);
    const report = parseReport(doc);
    expect(report.display).not.toBeNull();
    const spec = report.display!.roofline!;
    expect(spec.x_range).toEqual(doc.display.roofline.x_range);
    expect(spec.ceilings.map(c => c.label)).toEqual(
      doc.display.roofline.ceilings.map((c: any) => c.label)
    );
    expect(report.display!.main_dtype).toBe(doc.display.main_dtype);
  });

  it('reads a report given as JSON text', () => {
    const text = JSON.stringify(readJson('reports', 'small.json'));
    expect(parseReport(text).name).toBe('cell [3]');
  });

  it('refuses a newer version, saying to update', () => {
    expect(() => parseReport(readJson('reports', 'newer.json'))).toThrow(
      /newer jupyter_brrr.*Update jupyter_brrr/
    );
  });

  it('refuses what is not a report', () => {
    expect(() => parseReport({ schema: 'something else' })).toThrow(
      ReportError
    );
    expect(() => parseReport('not json')).toThrow(/not a jupyter_brrr report/);
    expect(() => parseReport(null)).toThrow(ReportError);
  });

  it('keeps markup in names as plain strings', () => {
    const report = parseReport(readJson('reports', 'xss.json'));
    expect(opRows(report).some(o => o.name.includes('<'))).toBe(true);
  });

  it('reads the empty, CPU-only and A/B examples', () => {
    expect(parseReport(readJson('reports', 'empty.json')).ops.data).toEqual([]);
    expect(parseReport(readJson('reports', 'cpu_only.json')).summary.gpu).toBe(
      false
    );
    const ab = parseReport(readJson('reports', 'ab.json')).ab!;
    expect(ab.variants.length).toBeGreaterThan(1);
  });
});

describe('the sweep and memory documents', () => {
  const doc = readJson('reports', 'sweep.json');
  const report = parseReport(doc);

  it('reads a sweep: its tables, verdicts and guides', () => {
    const sweep = report.sweep!;
    expect(sweep.variable).toBe(doc.sweep.variable);
    expect(sweep.points.columns).toEqual([...SWEEP_POINT_COLUMNS]);
    expect(sweep.points.data.length).toBe(doc.sweep.points.data.length);
    const verdicts = tableRows<{ verdict: string }>(sweep.doublings).map(
      d => d.verdict
    );
    expect(
      verdicts.every(v => (SWEEP_VERDICTS as readonly string[]).includes(v))
    ).toBe(true);
    expect(sweep.guides.flat).toEqual(doc.sweep.guides.flat);
    expect(sweep.knee).toBe(doc.sweep.knee);
  });

  it('reads a memory breakdown: the parts at the peak and the timeline', () => {
    const memory = report.memory!;
    expect(Object.keys(memory.at_peak).sort()).toEqual(
      [...MEMORY_CATEGORIES].sort()
    );
    const t = memory.timeline;
    expect(t.bytes.length).toBe(t.categories.length);
    expect(t.bytes.every(series => series.length === t.times_s.length)).toBe(
      true
    );
    expect(memory.largest.columns).toEqual([...MEMORY_LARGEST_COLUMNS]);
  });

  it('leaves both out of a report that has neither', () => {
    const plain = parseReport(readJson('reports', 'small.json'));
    expect(plain.sweep).toBeNull();
    expect(plain.memory).toBeNull();
  });
});
