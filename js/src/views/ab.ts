/**
 * A/B: the variants of the same cell (eager, compiled, CUDA graph, ...)
 * with their timing, speed-up, correctness check and span split.
 */

import { h } from '../dom';
import { fmtInt, fmtTime, fmtX } from '../format';
import type { IABVariant } from '../schema';
import {
  emptyState,
  heading,
  ISplitPart,
  IViewContext,
  splitBar,
  splitLegend
} from './common';

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
    panel.appendChild(emptyState('No A/B comparison in this report.'));
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
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        h('th', null, 'variant'),
        h('th', { class: 'jp-brrr-num' }, 'median'),
        h('th', { class: 'jp-brrr-num' }, 'IQR'),
        h('th', { class: 'jp-brrr-num' }, 'speed-up (range)'),
        h('th', null, 'verdict'),
        h('th', null, 'outputs'),
        h('th', { class: 'jp-brrr-num' }, 'compile'),
        h('th', { class: 'jp-brrr-num' }, 'kernels')
      )
    )
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
      h('td', null, v.verdict ?? '\u2014'),
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
  const withSplit = variants.filter(v => v.split);
  if (withSplit.length) {
    const s2 = h('section', { class: 'jp-brrr-section' });
    s2.appendChild(heading('Span split per variant (same scale)'));
    const spanOf = (v: IABVariant) => {
      const s = v.split!;
      return (
        s.span_s ??
        (s.compute_s ?? 0) +
          (s.memory_s ?? 0) +
          (s.other_s ?? 0) +
          (s.idle_s ?? 0)
      );
    };
    const maxSpan = Math.max(...withSplit.map(spanOf), 0);
    const grid = h('div', { class: 'jp-brrr-ab-splits' });
    let legendParts: ISplitPart[] = [];
    for (const v of withSplit) {
      const s = v.split!;
      const parts: ISplitPart[] = [
        { key: 'compute', seconds: s.compute_s },
        { key: 'memory', seconds: s.memory_s },
        { key: 'other', seconds: s.other_s },
        { key: 'idle', seconds: s.idle_s }
      ];
      legendParts = parts.map(p => ({ key: p.key, seconds: null }));
      const span = spanOf(v);
      grid.appendChild(h('div', { class: 'jp-brrr-ab-name' }, v.name));
      grid.appendChild(
        splitBar(parts, span, maxSpan > 0 ? span / maxSpan : 1, 'brrr-ab-split')
      );
      grid.appendChild(
        h('div', { class: 'jp-brrr-num jp-brrr-muted' }, fmtTime(span))
      );
    }
    s2.appendChild(grid);
    const legend = splitLegend(legendParts, null);
    legend.classList.add('jp-brrr-legend-names');
    s2.appendChild(legend);
    panel.appendChild(s2);
  }

  if (ab.notes.length) {
    const s3 = h('section', { class: 'jp-brrr-section' });
    s3.appendChild(heading('Notes'));
    const ul = h('ul', { class: 'jp-brrr-notes' });
    for (const n of ab.notes) {
      ul.appendChild(h('li', null, n));
    }
    s3.appendChild(ul);
    panel.appendChild(s3);
  }
}
