/**
 * Reading what the Change and Ranks views draw: a named run's change,
 * history and target (tests/data/reports/named.json) and a job report
 * (tests/data/reports/job.json), as Python writes them; older documents
 * without these keys still read.
 */

import { describe, expect, it } from 'vitest';

import {
  changeCategoryRows,
  changeOpRows,
  changeSplitRows,
  jobCallRows,
  jobLaneRows,
  jobRankRows,
  jobStepRows,
  parseComparison,
  parseHistoryDocument,
  parseJob,
  parseReport,
  ReportError
} from '../schema';
import { readJson } from './fixtures';

describe('a named run', () => {
  it('reads its change with the verdict of each part, category and op', () => {
    const doc = readJson('reports', 'named.json');
    const report = parseReport(doc);
    const change = report.change!;
    expect(change.span.verdict).toBe(doc.change.span.verdict);
    expect(change.span.after_s).toBe(doc.change.span.after_s);
    expect(change.after.run).toBe(3);
    const ops = changeOpRows(change);
    expect(ops.map(o => o.verdict)).toEqual(
      doc.change.ops.data.map(
        (r: any[]) => r[doc.change.ops.columns.indexOf('verdict')]
      )
    );
    expect(ops.some(o => o.status === 'appeared')).toBe(true);
    expect(changeCategoryRows(change).length).toBe(
      doc.change.by_category.data.length
    );
    const split = changeSplitRows(change);
    expect(split[split.length - 1].part).toBe('span');
    expect(split[split.length - 1].verdict).toBe(doc.change.span.verdict);
  });

  it('reads its runs with their settings, and its target', () => {
    const doc = readJson('reports', 'named.json');
    const report = parseReport(doc);
    expect(report.history!.map(r => r.run)).toEqual([1, 2, 3]);
    expect(report.history!.map(r => r.settings)).toEqual(
      doc.history.map((r: any) => r.settings)
    );
    expect(report.history![0].verdict).toBeNull();
    expect(report.target!.lines).toEqual(doc.target.lines);
    expect(report.target!.goal.span_s).toBe(doc.target.goal.span_s);
    expect(report.target!.fixes.length).toBe(doc.target.fixes.length);
  });

  it('leaves a report without them as it was', () => {
    const report = parseReport(readJson('reports', 'small.json'));
    expect(report.change).toBeNull();
    expect(report.history).toBeNull();
    expect(report.target).toBeNull();
  });

  it('reads a comparison written before the verdicts per op and category', () => {
    const doc = readJson('reports', 'named.json').change;
    delete doc.by_category;
    const i = doc.ops.columns.indexOf('verdict');
    doc.ops.columns.splice(i, 1);
    doc.ops.data.forEach((r: any[]) => r.splice(i, 1));
    const change = parseComparison(doc)!;
    expect(changeCategoryRows(change)).toEqual([]);
    expect(changeOpRows(change).every(o => o.verdict === '')).toBe(true);
  });

  it('opens a report whose comparison is from a newer version, saying so', () => {
    const doc = readJson('reports', 'named.json');
    doc.change.version = 99;
    const report = parseReport(doc);
    expect(report.change).toBeNull();
    expect(report.history!.length).toBe(3);
    expect(report.notes.some(n => /newer jupyter_brrr/.test(n))).toBe(true);
  });

  it('is no comparison when the document is something else', () => {
    expect(parseComparison(null)).toBeNull();
    expect(parseComparison({ schema: 'jupyter_brrr.report' })).toBeNull();
  });

  it('reads a history document (%brrr history NAME) with the same runs', () => {
    const doc = readJson('reports', 'named.json');
    const history = parseHistoryDocument({
      schema: 'jupyter_brrr.history',
      version: 1,
      name: 'mm',
      runs: doc.history
    });
    expect(history.name).toBe('mm');
    expect(history.runs).toEqual(parseReport(doc).history);
    expect(
      parseHistoryDocument({ schema: 'jupyter_brrr.history', name: 'x' }).runs
    ).toEqual([]);
    expect(() => parseHistoryDocument(doc)).toThrow(ReportError);
    expect(() =>
      parseHistoryDocument({ schema: 'jupyter_brrr.history', version: 2 })
    ).toThrow(/newer jupyter_brrr/);
  });
});

describe('a job report', () => {
  it('reads its ranks, steps, calls and lanes', () => {
    const doc = readJson('reports', 'job.json');
    const job = parseJob(doc);
    const ranks = jobRankRows(job);
    expect(ranks.map(r => r.rank)).toEqual(doc.summary.ranks);
    const col = (name: string) => doc.ranks.columns.indexOf(name);
    expect(ranks[0].communication_s).toBe(
      doc.ranks.data[0][col('communication_s')]
    );
    expect(jobStepRows(job).length).toBe(doc.steps.data.length);
    expect(jobCallRows(job).length).toBe(doc.calls.data.length);
    expect(jobLaneRows(job).length).toBe(doc.lanes.data.length);
    expect(job.summary.straggler.decided).toBe(doc.summary.straggler.decided);
    expect(job.summary.straggler.varies).toEqual(doc.summary.straggler.varies);
  });

  it('refuses what is not a job, and a newer version', () => {
    expect(() => parseJob(readJson('reports', 'small.json'))).toThrow(
      ReportError
    );
    const doc = readJson('reports', 'job.json');
    doc.version = 99;
    expect(() => parseJob(doc)).toThrow(/newer jupyter_brrr.*Update/);
  });
});
