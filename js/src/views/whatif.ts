/**
 * What-if: pick a part of the step (or an op) and a speed-up factor N; see
 * the span it would have, the speed-up and its limit.
 *
 * A report with a step graph carries the span replayed on the step's
 * dependencies at a few factors per target (`what_if`, analysis/whatif.py):
 * the tab interpolates between them linearly in 1/N (exact at those factors,
 * as `report.what_if()` gives them). A report without one (older, or no GPU
 * work) gets Amdahl's law on the span, labelled as such: it adds up times that
 * overlap, so on a step where the GPU waits for the host it promises gains
 * that cannot happen.
 */

import { COLORS, LABELS } from '../colors';
import { h } from '../dom';
import { ellipsize, fmtPct, fmtTime, fmtX } from '../format';
import { opTime, SPLIT_KEYS } from '../model';
import type { ReportData } from '../model';
import type { IOpRow, IWhatIf, IWhatIfTarget } from '../schema';
import { card, emptyState, IViewContext } from './common';

/** How a replayed projection is labelled. */
export const REPLAYED =
  "predicted by replaying the step's dependencies (without the profiler's own cost)";
/** How an Amdahl projection is labelled. */
export const AMDAHL =
  "Amdahl's law on the span: this report carries no step graph to replay, so times that overlap are added up";

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

/**
 * A replayed target's span at factor n, as a ratio to the span now: linear in
 * 1/n between the factors replayed (exact at them), the last ratio past the
 * last factor; one that is not scalable (the syncs removed) is its limit.
 */
export function replayedRatio(t: IWhatIfTarget, n: number): number {
  if (!t.scalable) {
    return n > 1 ? 1 / t.limit : 1;
  }
  const { factors: k, ratios: r } = t;
  if (n <= k[0]) {
    return r[0];
  }
  for (let i = 1; i < k.length; i++) {
    if (n <= k[i]) {
      const w = (1 / k[i - 1] - 1 / n) / (1 / k[i - 1] - 1 / k[i]);
      return r[i - 1] + (r[i] - r[i - 1]) * w;
    }
  }
  return r[r.length - 1];
}

/** What the view can speed up, with the projection at a factor. */
interface ITarget {
  id: string;
  group: string;
  label: string;
  /** Share of the span drawn in the bars (0 where it has none). */
  share: number;
  color: string;
  /** The projection at factor n. */
  at(n: number): { span: number; speedup: number; limit: number };
  /** Whether the factor applies (not for the syncs, removed or not). */
  scalable: boolean;
  /** The sentence under the bars. */
  explain(n: number): string;
}

const GROUPS = {
  part: 'Part of the span',
  knob: 'The whole step',
  op: 'Op (self GPU time)'
} as const;

/** The replayed targets of a report's `what_if`. */
function replayedTargets(span: number, whatIf: IWhatIf): ITarget[] {
  return whatIf.targets.map(t => {
    const shareText =
      t.share !== null ? ` (${fmtPct(t.share)} of the span)` : '';
    const text = `${ellipsize(t.label, 70)}${shareText}`;
    const at = (n: number) => {
      const ratio = replayedRatio(t, n);
      return { span: span * ratio, speedup: 1 / ratio, limit: t.limit };
    };
    return {
      id: t.id,
      group: GROUPS[t.kind as keyof typeof GROUPS] ?? GROUPS.knob,
      label: text,
      share: t.share ?? 0,
      color: t.kind === 'part' ? (COLORS[t.key] ?? COLORS.other) : COLORS.other,
      at,
      scalable: t.scalable,
      explain: (n: number) => {
        const r = at(n);
        const change = t.scalable
          ? t.change.replace(/\bNx\b/g, fmtX(n))
          : t.change;
        return (
          `${change}: the span goes from ${fmtTime(span)} to ${fmtTime(r.span)}, ` +
          `${REPLAYED}. Exact at N = ${t.factors.map(k => sig3(k)).join(', ')}; ` +
          'linear in 1/N between. After this fix the largest part may change: measure again.'
        );
      }
    };
  });
}

function sig3(k: number): string {
  return String(Number(k.toPrecision(3)));
}

/**
 * The Amdahl targets: the parts of the span (a GPU report) and the 50 ops of
 * most self time. An op's share, without GPU work, is the Overview's: of the
 * profiled run's CPU op time, applied to the part of the span the ops take.
 */
function amdahlTargets(data: ReportData, span: number): ITarget[] {
  const out: ITarget[] = [];
  const explain = (share: number, label: string) => (n: number) => {
    const r = amdahl(span, share, n);
    return (
      `${label}. Making it ${fmtX(n)} faster takes the span from ${fmtTime(span)} to ${fmtTime(r.span)}; ` +
      'the rest of the span bounds the gain, and after this fix the largest part may change: measure again.'
    );
  };
  if (!data.cpuOnly) {
    for (const k of SPLIT_KEYS) {
      const share = data.splitShare(k);
      if (share !== null) {
        out.push({
          id: `part:${k}`,
          group: GROUPS.part,
          label: `${LABELS[k]} (${fmtPct(share)} of the span)`,
          share,
          color: COLORS[k],
          at: n => amdahl(span, share, n),
          scalable: true,
          explain: explain(share, `p = ${fmtPct(share)} of the span`)
        });
      }
    }
  }
  const cpu = data.cpuOnly;
  const time = (o: IOpRow) => opTime(o, cpu);
  // The ops' share of the span (their CPU time, from the profiled run, at most all of it).
  const opsOfSpan = cpu ? Math.min(1, data.opCpuTime / span) : 1;
  data.ops
    .filter(o => time(o) > 0)
    .sort((a, b) => time(b) - time(a))
    .slice(0, 50)
    .forEach((o, i) => {
      const name = o.shapes ? `${o.name} ${o.shapes}` : o.name;
      let share: number;
      let label: string;
      let words: string;
      if (cpu) {
        const ofOps = data.opCpuShare(o) ?? 0;
        share = ofOps * opsOfSpan;
        label = `${ellipsize(name, 70)} (${fmtPct(ofOps)} of CPU op time)`;
        words = `p = ${fmtPct(ofOps)} of the CPU op time, which is ${fmtPct(opsOfSpan)} of the span: ${fmtPct(share)} of the span`;
      } else {
        share = Math.min(1, time(o) / span);
        label = `${ellipsize(name, 70)} (${fmtPct(share)} of the span)`;
        words = `p = ${fmtPct(share)} of the span`;
      }
      out.push({
        id: `op:${i}`,
        group: cpu ? 'Op (CPU time)' : GROUPS.op,
        label,
        share,
        color: COLORS.other,
        at: n => amdahl(span, share, n),
        scalable: true,
        explain: explain(share, words)
      });
    });
  return out;
}

/** The menu of what to speed up, starting on the largest part of the span. */
function targetSelect(targets: ITarget[]): {
  select: HTMLSelectElement;
  all: Map<string, ITarget>;
  first: ITarget;
} {
  const select = h('select', {
    class: 'jp-brrr-select',
    data: { testid: 'brrr-whatif-target' },
    attrs: { 'aria-label': 'part to speed up' }
  });
  const all = new Map<string, ITarget>();
  const groups = new Map<string, HTMLElement>();
  for (const t of targets) {
    let g = groups.get(t.group);
    if (!g) {
      g = h('optgroup', { attrs: { label: t.group } });
      groups.set(t.group, g);
      select.appendChild(g);
    }
    g.appendChild(h('option', { attrs: { value: t.id } }, t.label));
    all.set(t.id, t);
  }
  // Start on the largest part of the span (an op where there are none).
  const parts = targets.filter(t => t.id.startsWith('part:'));
  const first =
    [...parts].sort((a, b) => b.share - a.share)[0] ??
    targets.find(t => t.id.startsWith('op:')) ??
    targets[0];
  select.value = first.id;
  return { select, all, first };
}

/** The controls, cards, bars and captions of the view (filled in by its update). */
function layout(
  select: HTMLSelectElement,
  span: number,
  whatIf: IWhatIf | null
) {
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
  const method = h(
    'div',
    {
      class: 'jp-brrr-muted jp-brrr-caption',
      data: {
        testid: 'brrr-whatif-method',
        method: whatIf ? 'replay' : 'amdahl'
      }
    },
    whatIf
      ? `Each span is ${whatIf.predicted_by}. Not modelled: ${whatIf.not_modelled.join('; ')}.`
      : `Each span is ${AMDAHL}.`
  );

  const section = h(
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
      card(
        whatIf ? 'Predicted span' : 'Projected span',
        projEl,
        `now ${fmtTime(span)}`
      ),
      card(
        'Whole-cell speed-up',
        speedEl,
        whatIf ? 'replayed' : '1 / ((1 \u2212 p) + p / N)'
      ),
      card(
        'Limit (N \u2192 \u221e)',
        limitEl,
        whatIf ? 'replayed' : '1 / (1 \u2212 p)'
      )
    ),
    h(
      'div',
      { class: 'jp-brrr-whatif-bars' },
      h('span', { class: 'jp-brrr-muted' }, 'now'),
      before,
      h('span', { class: 'jp-brrr-muted' }, 'then'),
      after
    ),
    explain,
    method
  );

  return {
    section,
    slider,
    nLabel,
    projEl,
    speedEl,
    limitEl,
    before,
    after,
    explain
  };
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
  const whatIf = data.report.what_if ?? null;
  const targets = whatIf
    ? replayedTargets(span, whatIf)
    : amdahlTargets(data, span);
  if (!targets.length) {
    panel.appendChild(
      emptyState(
        'Nothing to project.',
        'No part of the span and no op has a recorded time: profile the cell again to get one.'
      )
    );
    return;
  }

  const { select, all, first } = targetSelect(targets);
  const {
    section,
    slider,
    nLabel,
    projEl,
    speedEl,
    limitEl,
    before,
    after,
    explain
  } = layout(select, span, whatIf);
  panel.appendChild(section);

  const seg = (width: number, color: string) =>
    h('div', {
      class: 'jp-brrr-whatif-seg',
      style: {
        width: `${Math.min(1, Math.max(0, width)) * 100}%`,
        background: color
      }
    });

  const update = () => {
    const t = all.get(select.value) ?? first;
    const n = Math.pow(10, Number(slider.value));
    const r = t.at(n);
    slider.disabled = !t.scalable;
    nLabel.textContent = t.scalable ? fmtX(n) : 'removed';
    projEl.textContent = fmtTime(r.span);
    projEl.dataset.seconds = String(r.span);
    speedEl.textContent = fmtX(r.speedup);
    speedEl.dataset.value = String(r.speedup);
    limitEl.textContent = Number.isFinite(r.limit) ? fmtX(r.limit) : '\u221e';
    limitEl.dataset.value = String(r.limit);
    // Now: the target's share of the span; then: the span left, the target's part shrunk
    // by the factor where it has a share, the rest what the replay says remains.
    const left = r.span / span;
    const mine = Math.min(t.share / (t.scalable ? n : Infinity), left);
    before.replaceChildren(
      seg(t.share, t.color),
      seg(1 - t.share, 'var(--jp-layout-color3)')
    );
    after.replaceChildren(
      seg(mine, t.color),
      seg(left - mine, 'var(--jp-layout-color3)')
    );
    explain.textContent = t.explain(n);
  };
  select.addEventListener('change', update);
  slider.addEventListener('input', update);
  update();
}
