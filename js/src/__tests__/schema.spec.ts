/** Reading report documents: the example files of tests/data/reports. */

import { describe, expect, it } from 'vitest';

import { opRows, parseReport, ReportError, SCHEMA_VERSION } from '../schema';
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
