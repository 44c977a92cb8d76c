/**
 * Overview: the span split, key figures, notes and recommendations.
 */

import { h } from '../dom';
import {
  fmtBytes,
  fmtInt,
  fmtPct,
  fmtSI,
  fmtTime,
  ellipsize,
  profiledScope,
  DEVICE_MEMORY
} from '../format';
import { opTime, ReportData, SPLIT_KEYS } from '../model';
import { FIX_OF_CAUSE, stepRows } from '../schema';
import type {
  ICodeChange,
  IRecommendation,
  IRuns,
  ISummary,
  ITryVerdict
} from '../schema';
import {
  badge,
  card,
  emptyState,
  heading,
  ISplitPart,
  IViewContext,
  notesSection,
  splitBar,
  splitLegend,
  tableHead
} from './common';

/**
 * The timed runs' spread, protocol and clock, for the span card (null without
 * timed runs). The quartiles of fewer than four runs are interpolated, so
 * then it quotes the extremes (as the spread does: analysis/spread.py).
 */
export function timingDetail(s: ISummary): string | null {
  const t = s.timing;
  if (!t || !t.timed_runs || t.median_s === null) {
    return null;
  }
  const width =
    t.timed_runs >= 4
      ? `IQR ${fmtTime(t.q1_s)}\u2013${fmtTime(t.q3_s)}`
      : `max ${fmtTime(t.max_s)}`;
  let text = `median of ${fmtInt(t.timed_runs)} ${t.protocol} runs; min ${fmtTime(t.min_s)}, ${width}`;
  const clocks = t.sm_clock_mhz.filter((c): c is number => c !== null);
  if (clocks.length) {
    text += `; SM clock ${Math.round(Math.min(...clocks))}\u2013${Math.round(Math.max(...clocks))} MHz`;
  }
  const kinds = t.findings.map(f => f.kind);
  if (kinds.includes('host_slow') && t.host_slowdown !== null) {
    text += `; host CPU ${t.host_slowdown.toFixed(2)}x slower than its best`;
  }
  const disagree = kinds.filter(k => k !== 'host_slow');
  if (disagree.length) {
    text += `; the runs disagree (${disagree.join(', ')}: see the notes)`;
  }
  return text;
}

/** What was allocated before the run and what one run added, for the memory card. */
function memoryDetail(s: ISummary): string | null {
  const cap = s.memory_capacity_bytes;
  const pm = s.peak_memory_bytes;
  let text = cap
    ? `${fmtPct(pm !== null ? pm / cap : null)} of ${fmtBytes(cap)} ${DEVICE_MEMORY}`
    : '';
  const before = s.memory_before_bytes ?? null;
  const increase = s.memory_increase_bytes ?? null;
  if (before !== null && increase !== null) {
    text += `${text ? '; ' : ''}${fmtBytes(before)} before, +${fmtBytes(increase)} by one run`;
  }
  return text || null;
}

function runsText(runs: IRuns | null): string {
  if (!runs) {
    return '\u2014';
  }
  if (runs.total === null && runs.warmup === null) {
    // A loaded trace: it records its profiler steps, not how often the code ran in all.
    return runs.profiled
      ? `${fmtInt(runs.profiled)} profiler steps`
      : 'not recorded';
  }
  const total =
    runs.total ?? (runs.warmup ?? 0) + (runs.timed ?? 0) + (runs.profiled ?? 0);
  return total === 1 ? 'once' : `${fmtInt(total)} times`;
}

function runsDetail(runs: IRuns | null, warm: boolean | null | undefined) {
  const parts: string[] = [];
  if (runs) {
    if (runs.warmup) {
      parts.push(`${runs.warmup} warm-up`);
    }
    if (runs.timed) {
      parts.push(`${runs.timed} timed`);
    }
    if (runs.profiled) {
      parts.push(`${runs.profiled} profiled`);
    }
  }
  let text = parts.join(', ');
  if (warm === true) {
    text += `${text ? '; ' : ''}warm (steady state)`;
  } else if (warm === false) {
    text += `${text ? '; ' : ''}first run: includes one-time costs`;
  }
  return text || null;
}

/** The span card's title and detail: one run, the median profiler step of a loaded
 * trace, or the whole of a trace that marks no steps. */
function spanScope(s: ISummary): [string, string] {
  const steps = s.steps as
    | { steady?: number; median_step?: string; count?: number }
    | null
    | undefined;
  if (s.span_source === 'trace_step' && steps) {
    return [
      'Span (median step)',
      `${steps.median_step} of ${steps.steady} steady profiler steps in the trace`
    ];
  }
  if (s.span_source === 'trace' && s.runs?.total === null) {
    return [
      'Span (whole trace)',
      'the trace marks no profiler steps: how many runs it holds is unknown'
    ];
  }
  return ['Span (one run)', 'wall-clock span of the GPU work'];
}

/** A loaded trace's profiler steps: each one's span and split. */
function stepsSection(ctx: IViewContext): HTMLElement | null {
  const steps = stepRows(ctx.data.report);
  if (!steps.length) {
    return null;
  }
  const sec = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-steps' }
  });
  sec.appendChild(heading(`The ${steps.length} profiler steps of the trace`));
  const table = h('table', { class: 'jp-brrr-table jp-brrr-compact' });
  table.appendChild(
    tableHead([
      ['step'],
      ['kind'],
      ['span', true],
      ...SPLIT_KEYS.map(k => [k, true] as [string, boolean])
    ])
  );
  const tb = h('tbody');
  for (const step of steps) {
    const span = step.span_s ?? 0;
    const share = (t: number | null) =>
      fmtPct(span > 0 && t !== null ? t / span : null);
    tb.appendChild(
      h(
        'tr',
        null,
        h('td', { class: 'jp-brrr-name' }, step.step),
        h('td', null, step.kind),
        h('td', { class: 'jp-brrr-num' }, fmtTime(step.span_s)),
        ...SPLIT_KEYS.map(k =>
          h('td', { class: 'jp-brrr-num' }, share(step[`${k}_s`]))
        )
      )
    );
  }
  table.appendChild(tb);
  sec.appendChild(table);
  return sec;
}

/** Render the overview into a panel. */
export function renderOverview(panel: HTMLElement, ctx: IViewContext): void {
  const { data } = ctx;
  const r = data.report;
  const s = r.summary;
  for (const state of emptyStates(data)) {
    panel.appendChild(state);
  }
  if (!data.cpuOnly && !data.noGpuWork) {
    panel.appendChild(spanSplit(data));
  }

  // Key figures.
  const cards = h('div', { class: 'jp-brrr-cards' });
  if (!data.cpuOnly) {
    gpuCards(cards, data);
  } else if (!data.empty) {
    // The span per run (the timed runs', where there are some), apart from the op time of
    // the profiled run: the two come from different runs, and each card says which.
    if (data.span !== null) {
      const [spanTitle, spanDetail] = spanScope(s);
      cards.appendChild(
        card(
          spanTitle,
          fmtTime(data.span),
          timingDetail(s) ?? spanDetail,
          'brrr-card-span'
        )
      );
    }
    cards.appendChild(
      card(
        'CPU op time',
        fmtTime(data.opCpuTime),
        profiledScope(s.runs),
        'brrr-card-cpu'
      )
    );
  }
  cards.appendChild(
    card(
      'Code ran',
      runsText(s.runs),
      runsDetail(s.runs, s.warm),
      'brrr-card-runs'
    )
  );
  panel.appendChild(cards);
  const stepsTable = stepsSection(ctx);
  if (stepsTable) {
    panel.appendChild(stepsTable);
  }
  if (data.cpuOnly && data.ops.length) {
    panel.appendChild(topCpuOps(data));
  }
  if (r.recommendations.length || r.ruled_out.length) {
    panel.appendChild(recommendations(r.recommendations, r.ruled_out));
  }
  if (r.notes.length) {
    panel.appendChild(notesSection(r.notes, 'brrr-notes'));
  }
}

/** The banners of a report with no GPU, no GPU work or no work at all. */
function emptyStates(data: ReportData): HTMLElement[] {
  const shown: HTMLElement[] = [];
  if (data.cpuOnly && !data.empty) {
    shown.push(
      h(
        'div',
        { class: 'jp-brrr-banner', data: { testid: 'brrr-cpu-only' } },
        data.noGpuFound
          ? 'No GPU was found: this report shows CPU op times only.'
          : 'No GPU work was recorded: this report shows CPU op times only.'
      )
    );
  }

  if (data.empty) {
    shown.push(
      emptyState(
        'No GPU work was recorded in this cell.',
        "The profiled code launched no kernels and ran no PyTorch ops, so there is no time to break down: profile code that calls PyTorch (a model's forward, tensor maths)."
      )
    );
  } else if (!data.cpuOnly && data.noGpuWork) {
    shown.push(
      emptyState(
        'No GPU work was recorded in this cell.',
        'The code ran PyTorch ops, but none launched a GPU kernel: move the model and its inputs to the GPU (.to("cuda")) and profile again.'
      )
    );
  }

  return shown;
}

/** Where the span went: the split bar and its legend. */
function spanSplit(data: ReportData): HTMLElement {
  const span = data.span;
  // Communication only where there was some (reports of one GPU have none).
  const parts: ISplitPart[] = SPLIT_KEYS.filter(
    k => k !== 'communication' || (data.splitTime(k) ?? 0) > 0
  ).map(k => ({
    key: k,
    seconds: data.splitTime(k)
  }));
  const sec = h('section', { class: 'jp-brrr-section' });
  sec.appendChild(heading('Where the span went'));
  sec.appendChild(splitBar(parts, span));
  sec.appendChild(splitLegend(parts, span));
  return sec;
}

/** The key figures of a report with GPU work: span, busy, compute, bandwidth, cost model, memory. */
function gpuCards(cards: HTMLElement, data: ReportData): void {
  const s = data.report.summary;
  const span = data.span;
  const [spanTitle, spanDetail] = spanScope(s);
  cards.appendChild(
    card(
      spanTitle,
      fmtTime(span),
      timingDetail(s) ?? spanDetail,
      'brrr-card-span'
    )
  );
  cards.appendChild(
    card(
      'GPU busy',
      fmtPct(data.busyShare, 0),
      s.busy_s !== null ? `${fmtTime(s.busy_s)} with a kernel running` : null,
      'brrr-card-busy',
      data.busyShare
    )
  );
  const peaks = s.peaks;
  const dtype = data.mainDtype;
  const peakF = dtype && peaks ? peaks.flops[dtype] : null;
  const flopsPerS = s.achieved_flops_per_s;
  const bytesPerS = s.achieved_bytes_per_s;
  const src = peaks?.source
    ? ` (${peaks.measured ? 'measured' : peaks.source})`
    : '';
  cards.appendChild(
    card(
      'Achieved compute',
      fmtSI(flopsPerS, 'FLOP/s'),
      peakF
        ? `${fmtPct(flopsPerS !== null ? flopsPerS / peakF : null)} of ${dtype} peak ${fmtSI(peakF, 'FLOP/s')}${src}, while busy`
        : peaks && data.olderVersion
          ? 'saved by an older jupyter_brrr: upgrade the notebook to see its share of the peak'
          : peaks
            ? 'no op with a FLOP model ran on the GPU'
            : 'no peak known for this device',
      'brrr-card-flops',
      peakF && flopsPerS !== null ? flopsPerS / peakF : null
    )
  );
  const bw = peaks?.bandwidth ?? null;
  cards.appendChild(
    card(
      'Achieved bandwidth',
      fmtSI(bytesPerS, 'B/s'),
      bw
        ? `${fmtPct(bytesPerS !== null ? bytesPerS / bw : null)} of peak ${fmtSI(bw, 'B/s')}${src}, while busy`
        : 'no peak known for this device',
      'brrr-card-bw',
      bw && bytesPerS !== null ? bytesPerS / bw : null
    )
  );
  const modelled = s.modelled_share;
  if (modelled !== null) {
    const estimated =
      typeof s.estimated_share === 'number' ? s.estimated_share : 0;
    const missing = Array.isArray(s.unmodelled_ops) ? s.unmodelled_ops : [];
    const names = missing
      .slice(0, 3)
      .map(o => (o && typeof o.name === 'string' ? o.name : ''))
      .filter(n => n)
      .join(', ');
    cards.appendChild(
      card(
        'Cost model',
        fmtPct(modelled),
        modelled < 0.97 && names
          ? `of the GPU time has FLOP and byte counts; without: ${names}`
          : `of the GPU time has FLOP and byte counts${estimated >= 0.01 ? ` (${fmtPct(estimated)} estimated)` : ''}`,
        'brrr-card-modelled',
        modelled
      )
    );
  }
  const cap = s.memory_capacity_bytes;
  const pm = s.peak_memory_bytes;
  cards.appendChild(
    card(
      'Peak memory',
      fmtBytes(pm),
      memoryDetail(s),
      'brrr-card-mem',
      cap && pm !== null ? pm / cap : null
    )
  );
}

/** A CPU-only report's top ops by CPU time. */
function topCpuOps(data: ReportData): HTMLElement {
  const sec = h('section', { class: 'jp-brrr-section' });
  sec.appendChild(heading('Top ops by CPU time'));
  const top = [...data.ops]
    .sort((a, b) => opTime(b, true) - opTime(a, true))
    .slice(0, 10);
  const table = h('table', { class: 'jp-brrr-table jp-brrr-compact' });
  table.appendChild(
    tableHead([
      ['op'],
      ['shapes'],
      ['calls', true],
      ['self CPU', true],
      ['share', true]
    ])
  );
  const tb = h('tbody');
  for (const o of top) {
    const t = o.self_cpu_time_s ?? o.cpu_time_s;
    tb.appendChild(
      h(
        'tr',
        null,
        h('td', { class: 'jp-brrr-name', title: o.name }, o.name),
        h(
          'td',
          { class: 'jp-brrr-shapes', title: o.shapes },
          ellipsize(o.shapes, 60)
        ),
        h('td', { class: 'jp-brrr-num' }, fmtInt(o.calls)),
        h('td', { class: 'jp-brrr-num' }, fmtTime(t)),
        h('td', { class: 'jp-brrr-num' }, fmtPct(data.opCpuShare(o)))
      )
    );
  }
  table.appendChild(tb);
  sec.appendChild(table);
  return sec;
}

/**
 * What to try first: the first three recommendations, the rest behind a button; below them,
 * one line for those the replay rules out (not numbered: they cannot pay here).
 */
function recommendations(
  recs: IRecommendation[],
  ruledOut: IRecommendation[]
): HTMLElement {
  const sec = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-recommendations' }
  });
  sec.appendChild(heading('What to try first'));
  const list = h('ol', { class: 'jp-brrr-recs' });
  const SHOWN = 3;
  recs.forEach((rec, i) => {
    const li = h(
      'li',
      { class: 'jp-brrr-rec', data: { cause: rec.cause } },
      h(
        'div',
        { class: 'jp-brrr-rec-head' },
        badge(rec.bottleneck),
        rec.cause ? h('span', { class: 'jp-brrr-rec-cause' }, rec.cause) : null,
        h('span', { class: 'jp-brrr-rec-title' }, rec.title),
        rec.share !== null
          ? h(
              'span',
              { class: 'jp-brrr-rec-share' },
              rec.cause
                ? `saves up to ${fmtPct(rec.share, 0)}`
                : `${fmtPct(rec.share, 0)} of the span`
            )
          : null
      ),
      ...recommendationBody(rec),
      rec.try ? tryVerdict(rec.try) : null,
      FIX_OF_CAUSE[rec.cause] && inNotebook() ? tryControl(rec, i) : null
    );
    if (i >= SHOWN) {
      li.hidden = true;
    }
    list.appendChild(li);
  });
  sec.appendChild(list);
  if (recs.length > SHOWN) {
    const more = h(
      'button',
      { class: 'jp-brrr-link' },
      `Show ${recs.length - SHOWN} more`
    );
    more.addEventListener('click', () => {
      list.querySelectorAll('li').forEach(li => (li.hidden = false));
      more.remove();
    });
    sec.appendChild(more);
  }
  if (ruledOut.length) {
    sec.appendChild(
      h(
        'div',
        {
          class: 'jp-brrr-rec-ruled-out jp-brrr-muted',
          data: { testid: 'brrr-ruled-out' }
        },
        ruledOutText(ruledOut)
      )
    );
  }
  return sec;
}

/** The ruled-out line, as the Python views write it (views/format.py's ruled_out). */
export function ruledOutText(ruledOut: IRecommendation[]): string {
  const said = ruledOut.map(
    r =>
      `${r.cause || 'advice'} (${r.title}): ${(r.ruled_out ?? '').replace(/\.$/, '')}`
  );
  return `Ruled out, as it cannot pay here: ${said.join('; ')}.`;
}

/** A recommendation's evidence, fix, ops and saving; the one sentence of an older report. */
function recommendationBody(rec: IRecommendation): (HTMLElement | null)[] {
  if (!rec.cause) {
    return [
      rec.detail ? h('div', { class: 'jp-brrr-rec-detail' }, rec.detail) : null
    ];
  }
  const ops = rec.ops.filter(o => o.shapes || o.module);
  return [
    h('div', { class: 'jp-brrr-rec-detail' }, rec.evidence),
    h('div', { class: 'jp-brrr-rec-fix' }, rec.fix),
    rec.code_change ? codeChange(rec.code_change) : null,
    ops.length
      ? h(
          'div',
          { class: 'jp-brrr-rec-ops jp-brrr-muted' },
          ops
            .slice(0, 3)
            .map(
              o =>
                `${o.name} ${ellipsize(o.shapes, 60)}` +
                (o.module ? ` in ${o.module}` : '') +
                (o.line ? ` (${o.line})` : '')
            )
            .join('; ')
        )
      : null,
    ...savingLines(rec)
  ];
}

/** What a recommendation saves, as the views show it. */
export interface ISavingParts {
  /** The sentence. */
  text: string;
  /** "replay" or "additive bound"; "" in an older report. */
  predictedBy: string;
  /** What the prediction could not model ([] in an older report). */
  notModelled: string[];
}

/**
 * What a recommendation saves: its saving field (the sentence and what the
 * prediction could not model) or, in an older report, the detail's last
 * sentence: replayed ('Predicted by replaying ...') or an additive bound
 * ('At best ...'). Null where neither says.
 */
export function savingParts(rec: IRecommendation): ISavingParts | null {
  if (rec.saving) {
    return {
      text: rec.saving.text,
      predictedBy: rec.saving.predicted_by ?? '',
      notModelled: rec.saving.not_modelled
    };
  }
  const at = Math.max(
    rec.detail.lastIndexOf('Predicted by replaying'),
    rec.detail.lastIndexOf('At best')
  );
  return at >= 0
    ? { text: rec.detail.slice(at), predictedBy: '', notModelled: [] }
    : null;
}

function savingLines(rec: IRecommendation): HTMLElement[] {
  const saving = savingParts(rec);
  if (!saving) {
    return [];
  }
  const lines = [
    h(
      'div',
      {
        class: 'jp-brrr-rec-saving jp-brrr-muted',
        data: { testid: 'brrr-rec-saving', predictedBy: saving.predictedBy }
      },
      saving.text
    )
  ];
  if (saving.notModelled.length) {
    lines.push(
      h(
        'div',
        { class: 'jp-brrr-rec-unmodelled jp-brrr-muted' },
        `Not modelled: ${saving.notModelled.join('; ')}.`
      )
    );
  }
  return lines;
}

/** A fix that needs a code change: the code before and after. */
function codeChange(change: ICodeChange): HTMLElement {
  return h(
    'div',
    { class: 'jp-brrr-rec-change', data: { testid: 'brrr-rec-change' } },
    h(
      'div',
      { class: 'jp-brrr-muted' },
      change.line ? `The change (${change.line}):` : 'The change:'
    ),
    h('pre', { class: 'jp-brrr-code jp-brrr-code-before' }, change.before),
    h('pre', { class: 'jp-brrr-code jp-brrr-code-after' }, change.after)
  );
}

/** A fix's verdict, predicted against measured, in words (views/format.py's tried). */
export function verdictText(t: ITryVerdict): string {
  const figures: string[] = [];
  if (t.measured_s !== null) {
    const range =
      t.measured_low_s !== null && t.measured_high_s !== null
        ? ` (${fmtTime(t.measured_low_s)} to ${fmtTime(t.measured_high_s)})`
        : '';
    figures.push(`measured ${fmtTime(t.measured_s)} saved${range}`);
  }
  if (t.predicted_s !== null) {
    const likely =
      t.predicted_low_s !== null &&
      t.predicted_high_s !== null &&
      t.predicted_high_s > t.predicted_low_s * 1.005
        ? ` (likely ${fmtTime(t.predicted_low_s)} to ${fmtTime(t.predicted_high_s)})`
        : '';
    figures.push(`predicted ${fmtTime(t.predicted_s)} saved${likely}`);
  }
  const said = figures.length ? `: ${figures.join(', ')}` : '';
  const fix = t.fix ? ` (${t.fix})` : '';
  return `Tried${fix}: ${t.verdict}${said}. ${t.reason}`.trim();
}

/** The verdict of a recommendation's fix, tried. */
export function tryVerdict(t: ITryVerdict): HTMLElement {
  return h(
    'div',
    {
      class: `jp-brrr-rec-try jp-brrr-try-${t.verdict.replace(/ /g, '-')}`,
      data: { testid: 'brrr-rec-try', verdict: t.verdict }
    },
    verdictText(t)
  );
}

const POLL_MS = 300;

/**
 * Whether the app draws in JupyterLab or Notebook 7, where a cell's live
 * controls can run a fix; a standalone file has no kernel to run it in.
 */
function inNotebook(): boolean {
  return !!document.querySelector('.jp-LabShell, .jp-NotebookPanel');
}

/**
 * The Try this fix button of a recommendation whose fix runs without editing
 * the code. The run happens in the kernel, through the cell's live controls
 * (ipywidgets, notebook/controls.py), so that the same stateful-cell
 * confirmation, run-count bound, progress and Cancel apply: this button
 * presses the control's own, mirrors its progress here and offers its Cancel.
 * The verdict arrives with the report's update in place. A saved notebook
 * opened without a kernel has no live controls: the button says so.
 */
function tryControl(rec: IRecommendation, index: number): HTMLElement {
  const button = h(
    'button',
    {
      class: 'jp-brrr-button',
      data: { testid: 'brrr-try-fix' },
      attrs: {
        type: 'button',
        title: `Run this cell with the fix (${FIX_OF_CAUSE[rec.cause]}) against eager, and compare the saving measured with the one predicted`
      }
    },
    rec.try ? 'Try this fix again' : 'Try this fix'
  ) as HTMLButtonElement;
  const cancel = h(
    'button',
    {
      class: 'jp-brrr-button',
      data: { testid: 'brrr-try-cancel' },
      attrs: { type: 'button' }
    },
    'Cancel'
  ) as HTMLButtonElement;
  cancel.hidden = true;
  const status = h('span', {
    class: 'jp-brrr-muted',
    data: { testid: 'brrr-try-status' }
  });
  const box = h('div', { class: 'jp-brrr-rec-trybox' }, button, cancel, status);

  const live = (selector: string): HTMLElement | null => {
    const scope = box.closest('.jp-Cell') ?? box.closest('.jp-OutputArea');
    return scope ? scope.querySelector<HTMLElement>(selector) : null;
  };
  const visible = (el: HTMLElement | null) => !!el && el.offsetParent !== null;

  button.addEventListener('click', () => {
    const control = live(`button.jp-brrr-try-fix-${index}`);
    if (!control || (control as HTMLButtonElement).disabled) {
      status.textContent = control
        ? 'Another A/B of this cell is running.'
        : 'Try this fix runs in the kernel, through the controls under the report: run the cell in a kernel (or %%brrr --try-fixes) to try it.';
      return;
    }
    const root = box.closest<HTMLElement>('.jp-brrr');
    if (root) {
      root.dataset.tryFixPending = '1';
    }
    button.disabled = true;
    control.click();
    const started = performance.now();
    const poll = window.setInterval(() => {
      if (!box.isConnected) {
        window.clearInterval(poll); // the report was updated: the verdict is drawn
        return;
      }
      const liveCancel = live('button.jp-brrr-ab-cancel');
      const text = live('.jp-brrr-ab-status')?.textContent ?? '';
      const waiting = /^Waiting for confirmation/.test(text);
      const running = visible(liveCancel) || waiting;
      status.textContent = waiting
        ? 'The cell looks stateful: confirm under the report.'
        : text;
      cancel.hidden = !visible(liveCancel);
      if (!running && performance.now() - started > 2000) {
        window.clearInterval(poll);
        button.disabled = false;
        cancel.hidden = true;
        if (root) {
          delete root.dataset.tryFixPending;
        }
      }
    }, POLL_MS);
  });
  cancel.addEventListener('click', () => {
    live('button.jp-brrr-ab-cancel')?.click();
  });
  return box;
}
