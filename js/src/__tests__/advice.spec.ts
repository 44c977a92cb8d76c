/**
 * A recommendation's saving, code change and tried fix as the Overview shows
 * them (views/overview.ts): the saving field of a report written now, the
 * detail's last sentence of one saved before the field, and the verdict of a
 * fix tried, predicted against measured.
 */

import { describe, expect, it } from 'vitest';

import { parseReport } from '../schema';
import { ruledOutText, savingParts, verdictText } from '../views/overview';
import { readJson } from './fixtures';

/** The recommendations of a report document, as the browser reads them. */
function recommendationsOf(doc: any) {
  return parseReport(doc).recommendations;
}

const SMALL = readJson('reports', 'small.json');

function withRecommendations(recs: unknown[]) {
  return recommendationsOf({ ...SMALL, recommendations: recs });
}

describe("a recommendation's saving", () => {
  it('is read from the saving field of a report written now', () => {
    const doc = readJson('advice', 'recommendations_saving_field.json');
    const [first] = withRecommendations(doc.recommendations);
    const parts = savingParts(first)!;
    expect(parts.text).toBe(doc.recommendations[0].saving.text);
    expect(parts.text.startsWith('Predicted by replaying')).toBe(true);
    expect(parts.predictedBy).toBe('replay');
    expect(parts.notModelled.length).toBeGreaterThan(0);
    // Read from the field, not found in the detail: a detail without the sentence still has it.
    const [cut] = withRecommendations([
      { ...doc.recommendations[0], detail: first.evidence }
    ]);
    expect(savingParts(cut)!.text).toBe(parts.text);
  });

  it("is the detail's last sentence in a report saved before the field", () => {
    const old = readJson('reports', 'history_run.json').report;
    const [first] = withRecommendations(old.recommendations);
    expect(first.saving).toBeNull();
    const parts = savingParts(first)!;
    expect(parts.text).toMatch(/^Predicted by replaying .* 2\.55x\.$/);
    expect(parts.notModelled).toEqual([]);
  });
});

describe("a fix's code change and verdict", () => {
  it('reads the code change of a fix that needs one', () => {
    const doc = readJson('advice', 'recommendations_saving_field.json');
    const [first] = withRecommendations(doc.recommendations);
    expect(first.cause).toBe('synchronisation');
    expect(first.code_change!.before).toContain('.item()');
    expect(first.code_change!.after).toContain('total.item()');
  });

  it('says the verdict, measured against predicted', () => {
    const [rec] = withRecommendations([
      {
        title: 't',
        detail: 'd',
        cause: 'bf16',
        try: {
          fix: 'bf16',
          verdict: 'smaller than predicted',
          reason: 'measured 1 ms saved, predicted 2 ms',
          predicted_s: 0.002,
          measured_s: 0.001,
          measured_low_s: 0.0008,
          measured_high_s: 0.0012
        }
      }
    ]);
    expect(verdictText(rec.try!)).toBe(
      'Tried (bf16): smaller than predicted: measured 1 ms saved (800 µs to 1.2 ms), predicted 2 ms saved. measured 1 ms saved, predicted 2 ms'
    );
  });

  it('says the predicted saving with its likely range (views/format.py does too)', () => {
    const [rec] = withRecommendations([
      {
        title: 't',
        detail: 'd',
        cause: 'bf16',
        try: {
          fix: 'bf16',
          verdict: 'confirmed',
          reason: '1.5x against eager',
          predicted_s: 0.002,
          predicted_low_s: 0.0015,
          predicted_high_s: 0.0025,
          measured_s: 0.0018,
          measured_low_s: 0.0016,
          measured_high_s: 0.002
        }
      }
    ]);
    expect(verdictText(rec.try!)).toContain(
      'predicted 2 ms saved (likely 1.5 ms to 2.5 ms)'
    );
  });
});

describe('a fix the replay says cannot pay', () => {
  // Saved by the H200 before the split: the CUDA graph that cannot pay in a loop of calls was
  // the second recommendation ("saves up to 0%").
  const saved = readJson(
    '..',
    '..',
    'bench',
    'data',
    'h200',
    'fixes_2',
    'conv_channels_first_autocast.json'
  );

  it('is ruled out, not numbered, in a report saved before the split', () => {
    expect(saved.recommendations.map((r: any) => r.cause)).toEqual([
      'layout',
      'launch overhead'
    ]);
    const report = parseReport(saved);
    expect(report.recommendations.map(r => r.cause)).toEqual(['layout']);
    expect(report.ruled_out.map(r => r.cause)).toEqual(['launch overhead']);
    expect(ruledOutText(report.ruled_out)).toMatch(
      /^Ruled out, as it cannot pay here: launch overhead \(The GPU waits for launches 11% of the time\): Predicted by replaying .* so this fix cannot pay there\.$/
    );
  });

  it("keeps a report's own ruled_out list and its reasons", () => {
    const [, launch] = saved.recommendations;
    const report = parseReport({
      ...saved,
      recommendations: [saved.recommendations[0]],
      ruled_out: [{ ...launch, ruled_out: 'the GPU is busy' }]
    });
    expect(report.recommendations.map(r => r.cause)).toEqual(['layout']);
    expect(ruledOutText(report.ruled_out)).toBe(
      'Ruled out, as it cannot pay here: launch overhead (The GPU waits for launches 11% of the time): the GPU is busy.'
    );
  });
});
