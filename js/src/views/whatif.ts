/**
 * What-if: Amdahl's law, live. Pick a part of the span (or an op) and a
 * speed-up factor N; see the projected span, the speed-up and its limit.
 */

import { COLORS, LABELS } from '../colors';
import { h } from '../dom';
import { ellipsize, fmtPct, fmtTime, fmtX } from '../format';
import { opTime, SPLIT_KEYS } from '../model';
import type { ReportData } from '../model';
import type { IOpRow } from '../schema';
import { card, emptyState, IViewContext } from './common';

/** Projected span when a share p of `span` runs n times faster. */
export function amdahl(
  span: number,
  p: number,
  n: number
): { span: number; speedup: number; limit: number } {
  const q = Math.min(1, Math.max(0, p));
  const projected = span * (1 - q) + (span * q) / n;
  return {
    span: projected,
    speedup: 1 / (1 - q + q / n),
    limit: q >= 1 ? Infinity : 1 / (1 - q)
  };
}

interface ITarget {
  id: string;
  label: string;
  share: number;
  color: string;
}

/**
 * What the view can speed up: the parts of the span (a GPU report) and the
 * 50 ops of most self time, each with its share of the span.
 */
function whatIfTargets(
  data: ReportData,
  span: number
): { targets: ITarget[]; opTargets: ITarget[] } {
  const targets: ITarget[] = [];
  if (!data.cpuOnly) {
    for (const k of SPLIT_KEYS) {
      const share = data.splitShare(k);
      if (share !== null) {
        targets.push({
          id: `part:${k}`,
          label: `${LABELS[k]} (${fmtPct(share)} of the span)`,
          share,
          color: COLORS[k]
        });
      }
    }
  }
  // Ops (name and shapes, as the Python side's what_if): self time over
  // the span. GPU: self GPU time; no GPU: self CPU time.
  const time = (o: IOpRow) => opTime(o, data.cpuOnly);
  const opTargets = data.ops
    .filter(o => time(o) > 0)
    .sort((a, b) => time(b) - time(a))
    .slice(0, 50)
    .map((o, i) => {
      const share = Math.min(1, time(o) / span);
      const label = o.shapes ? `${o.name} ${o.shapes}` : o.name;
      return {
        id: `op:${i}`,
        label: `${ellipsize(label, 70)} (${fmtPct(share)})`,
        share,
        color: COLORS.other
      };
    });

  return { targets, opTargets };
}

/** The menu of what to speed up, starting on the largest part of the span. */
function targetSelect(
  targets: ITarget[],
  opTargets: ITarget[],
  cpuOnly: boolean
): { select: HTMLSelectElement; all: Map<string, ITarget>; first: ITarget } {
  const select = h('select', {
    class: 'jp-brrr-select',
    data: { testid: 'brrr-whatif-target' },
    attrs: { 'aria-label': 'part to speed up' }
  });
  const all = new Map<string, ITarget>();
  if (targets.length) {
    const g = h('optgroup', { attrs: { label: 'Part of the span' } });
    for (const t of targets) {
      g.appendChild(h('option', { attrs: { value: t.id } }, t.label));
      all.set(t.id, t);
    }
    select.appendChild(g);
  }
  if (opTargets.length) {
    const g = h('optgroup', {
      attrs: { label: cpuOnly ? 'Op (CPU time)' : 'Op (self GPU time)' }
    });
    for (const t of opTargets) {
      g.appendChild(h('option', { attrs: { value: t.id } }, t.label));
      all.set(t.id, t);
    }
    select.appendChild(g);
  }
  // Start on the largest part of the span.
  const first =
    [...targets].sort((a, b) => b.share - a.share)[0] ?? opTargets[0];
  select.value = first.id;

  return { select, all, first };
}

/** Render the what-if view into a panel. */
export function renderWhatIf(panel: HTMLElement, ctx: IViewContext): void {
  const { data } = ctx;
  const span =
    data.span ?? (data.cpuOnly && data.opCpuTime > 0 ? data.opCpuTime : null);
  if (span === null || !(span > 0)) {
    panel.appendChild(
      emptyState(
        'Nothing to project.',
        'This report has no span and no op times. Profile code that runs PyTorch ops to see what speeding up a part of it would gain.'
      )
    );
    return;
  }
  const { targets, opTargets } = whatIfTargets(data, span);
  if (!targets.length && !opTargets.length) {
    panel.appendChild(
      emptyState(
        'Nothing to project.',
        'No part of the span and no op has a recorded time: profile the cell again to get one.'
      )
    );
    return;
  }

  const { select, all, first } = targetSelect(targets, opTargets, data.cpuOnly);

  const slider = h('input', {
    class: 'jp-brrr-slider',
    data: { testid: 'brrr-whatif-slider' },
    attrs: {
      type: 'range',
      min: '0',
      max: '2',
      step: '0.01',
      value: String(Math.log10(2)),
      'aria-label': 'speed-up factor (log scale)',
      // Arrow keys move the slider, not the notebook's cursor.
      'data-lm-suppress-shortcuts': 'true'
    }
  });
  const nLabel = h('span', {
    class: 'jp-brrr-whatif-n',
    data: { testid: 'brrr-whatif-n' }
  });
  const projEl = h('span', {
    class: 'jp-brrr-whatif-span',
    data: { testid: 'brrr-whatif-span' }
  });
  const speedEl = h('span', {
    class: 'jp-brrr-whatif-speedup',
    data: { testid: 'brrr-whatif-speedup' }
  });
  const limitEl = h('span', {
    class: 'jp-brrr-whatif-limit',
    data: { testid: 'brrr-whatif-limit' }
  });
  const before = h('div', { class: 'jp-brrr-whatif-bar' });
  const after = h('div', { class: 'jp-brrr-whatif-bar' });
  const explain = h('div', { class: 'jp-brrr-muted jp-brrr-caption' });

  panel.appendChild(
    h(
      'section',
      { class: 'jp-brrr-section jp-brrr-whatif' },
      h(
        'div',
        { class: 'jp-brrr-whatif-controls' },
        h('label', null, 'Make ', select),
        h('label', null, ' faster by ', slider, nLabel)
      ),
      h(
        'div',
        { class: 'jp-brrr-cards' },
        card('Projected span', projEl, `now ${fmtTime(span)}`),
        card('Whole-cell speed-up', speedEl, '1 / ((1 \u2212 p) + p / N)'),
        card('Limit (N \u2192 \u221e)', limitEl, '1 / (1 \u2212 p)')
      ),
      h(
        'div',
        { class: 'jp-brrr-whatif-bars' },
        h('span', { class: 'jp-brrr-muted' }, 'now'),
        before,
        h('span', { class: 'jp-brrr-muted' }, 'then'),
        after
      ),
      explain
    )
  );

  const seg = (width: number, color: string) =>
    h('div', {
      class: 'jp-brrr-whatif-seg',
      style: { width: `${Math.max(0, width) * 100}%`, background: color }
    });

  const update = () => {
    const t = all.get(select.value) ?? first;
    const n = Math.pow(10, Number(slider.value));
    const r = amdahl(span, t.share, n);
    nLabel.textContent = fmtX(n);
    projEl.textContent = fmtTime(r.span);
    projEl.dataset.seconds = String(r.span);
    speedEl.textContent = fmtX(r.speedup);
    speedEl.dataset.value = String(r.speedup);
    limitEl.textContent = Number.isFinite(r.limit) ? fmtX(r.limit) : '\u221e';
    limitEl.dataset.value = String(r.limit);
    before.replaceChildren(
      seg(t.share, t.color),
      seg(1 - t.share, 'var(--jp-layout-color3)')
    );
    after.replaceChildren(
      seg(t.share / n, t.color),
      seg(1 - t.share, 'var(--jp-layout-color3)')
    );
    explain.textContent =
      `p = ${fmtPct(t.share)} of the span. ` +
      `Making it ${fmtX(n)} faster takes the span from ${fmtTime(span)} to ${fmtTime(r.span)}; ` +
      'the rest of the span bounds the gain, and after this fix the largest part may change: measure again.';
  };
  select.addEventListener('change', update);
  slider.addEventListener('input', update);
  update();
}
