/**
 * A/B: the variants of the same cell (eager, compiled, CUDA graph, ...)
 * with their timing, speed-up, correctness check and span split.
 */

import { h } from '../dom';
import { fmtInt, fmtTime, fmtX } from '../format';
import { SPLIT_KEYS } from '../model';
import type { IABSplit, IABVariant, IRecommendation } from '../schema';
import {
  colorLegend,
  emptyState,
  heading,
  IViewContext,
  notesSection,
  splitBar,
  tableHead
} from './common';
import { tryVerdict } from './overview';

function correctness(v: IABVariant): HTMLElement {
  if (v.error) {
    return h(
      'span',
      { class: 'jp-brrr-status jp-brrr-status-error' },
      'failed'
    );
  }
  if (v.correct === true) {
    return h(
      'span',
      { class: 'jp-brrr-status jp-brrr-status-ok' },
      '\u2713 match'
    );
  }
  if (v.correct === false) {
    const errs: string[] = [];
    if (v.max_abs_err !== null) {
      errs.push(`max abs ${v.max_abs_err.toExponential(2)}`);
    }
    if (v.max_rel_err !== null) {
      errs.push(`max rel ${v.max_rel_err.toExponential(2)}`);
    }
    return h(
      'span',
      {
        class: 'jp-brrr-status jp-brrr-status-mismatch',
        data: { testid: 'brrr-ab-mismatch' }
      },
      `\u2717 MISMATCH${errs.length ? ` (${errs.join(', ')})` : ''}`
    );
  }
  return h('span', { class: 'jp-brrr-status jp-brrr-muted' }, 'not checked');
}

function speedupText(v: IABVariant): string {
  if (v.speedup === null) {
    return '\u2014';
  }
  let s = fmtX(v.speedup);
  if (v.speedup_low !== null && v.speedup_high !== null) {
    s += ` (${fmtX(v.speedup_low)}\u2013${fmtX(v.speedup_high)})`;
  }
  return s;
}

/** Render the A/B view into a panel. */
export function renderAB(panel: HTMLElement, ctx: IViewContext): void {
  const ab = ctx.data.report.ab;
  if (!ab || !ab.variants.length) {
    panel.appendChild(
      emptyState(
        'No A/B comparison in this report.',
        'Run one with %%brrr --ab compile,graph or jupyter_brrr.compare(fn, *args).'
      )
    );
    return;
  }
  const variants = ab.variants;
  const mismatch = variants.some(v => v.correct === false);
  if (mismatch) {
    panel.appendChild(
      h(
        'div',
        { class: 'jp-brrr-alert', data: { testid: 'brrr-ab-alert' } },
        'Outputs differ: at least one variant does not match the baseline. Its timing is not a valid comparison until that is understood.'
      )
    );
  }

  const sec = h('section', { class: 'jp-brrr-section' });
  sec.appendChild(heading('Variants'));
  const table = h('table', {
    class: 'jp-brrr-table jp-brrr-ab',
    data: { testid: 'brrr-ab-table' }
  });
  table.appendChild(
    tableHead([
      ['variant'],
      ['median', true],
      ['IQR', true],
      ['speed-up (range)', true],
      ['verdict'],
      ['outputs'],
      ['compile', true],
      ['kernels', true]
    ])
  );
  const tb = h('tbody');
  for (const v of variants) {
    const tr = h(
      'tr',
      {
        class:
          v.correct === false
            ? 'jp-brrr-row-mismatch'
            : v.error
              ? 'jp-brrr-row-error'
              : '',
        data: { testid: 'brrr-ab-row' }
      },
      h('td', { class: 'jp-brrr-name' }, v.name),
      h('td', { class: 'jp-brrr-num' }, fmtTime(v.median_s)),
      h('td', { class: 'jp-brrr-num' }, fmtTime(v.iqr_s)),
      h(
        'td',
        {
          class: `jp-brrr-num jp-brrr-speedup${
            v.speedup !== null && v.speedup > 1 && v.correct !== false
              ? ' jp-brrr-good'
              : ''
          }`
        },
        speedupText(v)
      ),
      h(
        'td',
        { title: v.fallback_reason ?? undefined },
        v.verdict === 'fallback'
          ? 'unchanged: fell back to eager'
          : (v.verdict ?? '\u2014')
      ),
      h('td', null, correctness(v)),
      h('td', { class: 'jp-brrr-num' }, fmtTime(v.compile_s)),
      h('td', { class: 'jp-brrr-num' }, fmtInt(v.kernel_count))
    );
    tb.appendChild(tr);
    if (v.error) {
      tb.appendChild(
        h(
          'tr',
          { class: 'jp-brrr-row-error' },
          h(
            'td',
            { attrs: { colspan: '8' } },
            h('pre', { class: 'jp-brrr-error-text' }, v.error)
          )
        )
      );
    }
  }
  table.appendChild(tb);
  sec.appendChild(h('div', { class: 'jp-brrr-table-wrap' }, table));
  panel.appendChild(sec);

  // Span splits, on one scale so that bar lengths compare.
  const splits = variants.filter(v => v.split) as (IABVariant & {
    split: IABSplit;
  })[];
  if (splits.length) {
    const s2 = h('section', { class: 'jp-brrr-section' });
    s2.appendChild(heading('Span split per variant (same scale)'));
    const partsOf = (s: IABSplit) =>
      SPLIT_KEYS.map(k => ({ key: k, seconds: s[`${k}_s` as const] }));
    // The span, or the sum of its parts where the span is missing.
    const spanOf = (s: IABSplit) =>
      s.span_s ?? partsOf(s).reduce((a, p) => a + (p.seconds ?? 0), 0);
    const maxSpan = Math.max(...splits.map(v => spanOf(v.split)), 0);
    const grid = h('div', { class: 'jp-brrr-ab-splits' });
    for (const v of splits) {
      const span = spanOf(v.split);
      grid.appendChild(h('div', { class: 'jp-brrr-ab-name' }, v.name));
      grid.appendChild(
        splitBar(
          partsOf(v.split),
          span,
          maxSpan > 0 ? span / maxSpan : 1,
          'brrr-ab-split'
        )
      );
      grid.appendChild(
        h('div', { class: 'jp-brrr-num jp-brrr-muted' }, fmtTime(span))
      );
    }
    s2.appendChild(grid);
    s2.appendChild(colorLegend(SPLIT_KEYS));
    panel.appendChild(s2);
  }

  const tried = ctx.data.report.recommendations.filter(r => r.try);
  if (tried.length) {
    panel.appendChild(fixesTried(tried));
  }

  if (ab.notes.length) {
    panel.appendChild(notesSection(ab.notes));
  }
}

/** The recommendations whose fix was tried: each one's verdict, predicted against measured. */
function fixesTried(tried: IRecommendation[]): HTMLElement {
  const sec = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-ab-fixes' }
  });
  sec.appendChild(heading('Fixes tried'));
  const list = h('ul', { class: 'jp-brrr-recs' });
  for (const rec of tried) {
    list.appendChild(
      h(
        'li',
        { class: 'jp-brrr-rec', data: { cause: rec.cause } },
        h('span', { class: 'jp-brrr-rec-title' }, rec.title),
        tryVerdict(rec.try!)
      )
    );
  }
  sec.appendChild(list);
  return sec;
}
