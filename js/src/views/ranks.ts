/**
 * Ranks: the ranks of one torch.distributed job side by side (a job report,
 * jupyter_brrr/report/job.py). Each rank's span split with communication (its
 * exposed part), sorted so that the straggler shows, the per-rank table, the
 * straggler named with its figures, the collectives with their bus bandwidth,
 * and a timeline with one lane per rank and the collectives outlined.
 */

import type { IChartHandle, IChartTheme } from '../charts';
import { COLORS } from '../colors';
import { h } from '../dom';
import { fmtBytes, fmtInt, fmtPct, fmtSI, fmtTime, fmtX } from '../format';
import {
  IJob,
  IJobRankRow,
  JOB_SPLIT_PARTS,
  jobCallRows,
  jobCollectiveRows,
  jobLaneRows,
  jobRankRows,
  jobStepRows
} from '../schema';
import {
  card,
  dataTable,
  emptyState,
  heading,
  notesSection,
  splitBar
} from './common';

/** What the job views render with. */
export interface IJobContext {
  /** The job report. */
  job: IJob;
  /** Colours of the current theme. */
  theme(): IChartTheme;
  /** Keep a chart so that it is removed with the widget. */
  track(handle: IChartHandle): void;
}

/** The parts of a rank's span in words (communication: its exposed part). */
const PART_LABELS: { [part: string]: string } = {
  compute: 'compute',
  memory: 'memory',
  other: 'other',
  communication: 'comm. exposed',
  idle: 'idle'
};

/** Who holds the others back, in one sentence (as views/job_text.py says it). */
export function stragglerLine(job: IJob): string {
  const s = job.summary.straggler;
  if (job.summary.ranks.length < 2) {
    return 'Straggler: needs two ranks or more.';
  }
  const noise = fmtTime(s.noise_s);
  if (s.rank === null) {
    if (!s.decided) {
      return `No straggler: at every collective the ranks arrive within the clocks' noise (${noise}) of each other.`;
    }
    const counts = Object.entries(s.varies ?? {})
      .sort((a, b) => b[1] - a[1])
      .map(([r, c]) => `rank ${r} ${c}`)
      .join(', ');
    return `No consistent straggler: the last rank varies (${counts} of ${s.decided} collectives decided beyond ${noise} of clock noise).`;
  }
  const late =
    s.lateness_per_step_s !== null && s.lateness_per_step_s !== undefined
      ? `${fmtTime(s.lateness_per_step_s)} late per step`
      : `${fmtTime(s.lateness_s)} late in all`;
  const wait =
    s.others_wait_per_step_s !== null && s.others_wait_per_step_s !== undefined
      ? `the others wait ${fmtTime(s.others_wait_per_step_s)} per step (median)`
      : `the others wait ${fmtTime(s.others_wait_s)} (median)`;
  return `Straggler: rank ${s.rank} arrives last at ${s.last_count ?? '?'} of ${s.decided} collectives (beyond ${noise} of clock noise), ${late}; ${wait}.`;
}

/**
 * A thin bar under a rank's split: all its communication on the same scale,
 * the exposed part solid and the part hidden behind its own work pale.
 */
function commBar(r: IJobRankRow, longest: number): HTMLElement {
  const all = r.comm_s ?? 0;
  const bar = h('div', {
    class: 'jp-brrr-commbar',
    data: { testid: 'brrr-rank-comm' },
    title: `communication ${fmtTime(r.comm_s)}: exposed ${fmtTime(r.communication_s)}, hidden behind work ${fmtTime(r.hidden_comm_s)} (${fmtPct(r.overlap, 0)})`,
    style: { width: `${longest > 0 ? Math.min(1, all / longest) * 100 : 0}%` }
  });
  for (const [part, seconds] of [
    ['exposed', r.communication_s ?? 0],
    ['hidden', r.hidden_comm_s ?? 0]
  ] as [string, number][]) {
    if (all > 0 && seconds > 0) {
      bar.appendChild(
        h('div', {
          class: `jp-brrr-commbar-${part}`,
          data: { part },
          style: {
            width: `${(seconds / all) * 100}%`,
            background: COLORS.communication
          }
        })
      );
    }
  }
  return bar;
}

function busy(r: IJobRankRow): number | null {
  return r.span_s !== null && r.idle_s !== null ? r.span_s - r.idle_s : null;
}

/** Render the Ranks view of a job into a panel. */
export function renderRanks(panel: HTMLElement, ctx: IJobContext): void {
  const { job } = ctx;
  const ranks = jobRankRows(job);
  if (!ranks.length) {
    panel.appendChild(
      emptyState(
        'No ranks in this job report.',
        'Load the traces of every rank together: jupyter_brrr.load("traces/").'
      )
    );
    return;
  }
  const straggler = job.summary.straggler.rank;
  panel.appendChild(stragglerBanner(job));
  panel.appendChild(jobCards(job.summary));
  panel.appendChild(rankBars(ranks, straggler));
  if (job.recommendations.length) {
    panel.appendChild(adviceSection(job));
  }
  panel.appendChild(rankTable(ranks, straggler));
  const collectives = jobCollectiveRows(job);
  if (collectives.length) {
    panel.appendChild(collectivesSection(collectives));
  }
  const steps = jobStepRows(job);
  if (steps.length) {
    panel.appendChild(stepsSection(steps));
  }
  if (job.notes.length) {
    panel.appendChild(notesSection(job.notes));
  }
}

/** Who holds the others back, as a banner (a caption where nobody does). */
function stragglerBanner(job: IJob): HTMLElement {
  const straggler = job.summary.straggler.rank;
  return h(
    'div',
    {
      class: straggler !== null ? 'jp-brrr-banner' : 'jp-brrr-caption',
      data: {
        testid: 'brrr-straggler',
        rank: straggler === null ? '' : String(straggler)
      }
    },
    stragglerLine(job)
  );
}

/** The job's figures as cards: ranks, span, communication, imbalance. */
function jobCards(s: IJob['summary']): HTMLElement {
  const cards = h('div', { class: 'jp-brrr-cards' });
  cards.appendChild(
    card(
      'ranks',
      `${s.ranks.length} of ${s.world_size}`,
      `${s.backend} backend`,
      'brrr-job-ranks'
    )
  );
  cards.appendChild(
    card(
      'longest span',
      fmtTime(s.span_s),
      s.devices.join(', '),
      'brrr-job-span'
    )
  );
  cards.appendChild(
    card(
      'communication per rank',
      fmtTime(s.comm_s),
      `${fmtPct(s.overlap, 0)} hidden behind the rank's own work`,
      'brrr-job-comm',
      s.overlap
    )
  );
  cards.appendChild(
    card(
      'exposed communication',
      fmtTime(s.exposed_comm_s),
      `${fmtPct(s.exposed_share, 0)} of the span (mean of the ranks)`,
      'brrr-job-exposed',
      s.exposed_share
    )
  );
  if (s.imbalance !== null) {
    cards.appendChild(
      card(
        'work imbalance',
        fmtX(s.imbalance),
        `rank ${s.busiest_rank ?? '?'} works ${fmtTime(s.work_max_s)}, the others ${fmtTime(s.work_median_s)} (median)`,
        'brrr-job-imbalance'
      )
    );
  }
  return cards;
}

/**
 * Each rank's span split, on one scale, with its communication under it; the
 * latest rank at collectives on top.
 */
function rankBars(ranks: IJobRankRow[], straggler: number | null): HTMLElement {
  const bars = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-rank-bars' }
  });
  bars.appendChild(heading("Each rank's span, split (same scale)"));
  const longest = Math.max(...ranks.map(r => r.span_s ?? 0), 0);
  const order = [...ranks].sort(
    (a, b) =>
      Number(b.rank === straggler) - Number(a.rank === straggler) ||
      (b.last_count ?? 0) - (a.last_count ?? 0) ||
      (b.lateness_s ?? 0) - (a.lateness_s ?? 0) ||
      a.rank - b.rank
  );
  const grid = h('div', { class: 'jp-brrr-ab-splits' });
  for (const r of order) {
    grid.appendChild(
      h(
        'div',
        { class: 'jp-brrr-ab-name' },
        `rank ${r.rank}${r.rank === straggler ? ' (straggler)' : ''}`
      )
    );
    grid.appendChild(
      h(
        'div',
        null,
        splitBar(
          JOB_SPLIT_PARTS.map(p => ({ key: p, seconds: r[`${p}_s`] })),
          r.span_s,
          longest > 0 ? (r.span_s ?? 0) / longest : 1,
          'brrr-rank-bar'
        ),
        commBar(r, longest)
      )
    );
    grid.appendChild(
      h(
        'div',
        { class: 'jp-brrr-num jp-brrr-muted' },
        `${fmtTime(r.span_s)}${r.hidden_comm_s ? `, ${fmtTime(r.hidden_comm_s)} comm. hidden` : ''}`
      )
    );
  }
  bars.appendChild(grid);
  bars.appendChild(
    h(
      'div',
      { class: 'jp-brrr-legend' },
      h(
        'span',
        { class: 'jp-brrr-legend-item' },
        h('span', {
          class: 'jp-brrr-swatch jp-brrr-commbar-hidden',
          style: { background: COLORS.communication }
        }),
        h(
          'span',
          { class: 'jp-brrr-legend-name' },
          'thin bar: all communication, pale where hidden behind work'
        )
      ),
      ...JOB_SPLIT_PARTS.map(p =>
        h(
          'span',
          { class: 'jp-brrr-legend-item', data: { part: p } },
          h('span', {
            class: 'jp-brrr-swatch',
            style: { background: COLORS[p] ?? '#888' }
          }),
          h('span', { class: 'jp-brrr-legend-name' }, PART_LABELS[p] ?? p)
        )
      )
    )
  );
  return bars;
}

/** The job's recommendations. */
function adviceSection(job: IJob): HTMLElement {
  const recs = h('section', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-job-advice' }
  });
  recs.appendChild(heading('What to try first'));
  recs.appendChild(
    h(
      'ul',
      { class: 'jp-brrr-notes' },
      ...job.recommendations.map(r =>
        h(
          'li',
          { data: { kind: r.kind } },
          h('b', null, r.title),
          `: ${r.detail}`
        )
      )
    )
  );
  return recs;
}

/** The per-rank table. */
function rankTable(
  ranks: IJobRankRow[],
  straggler: number | null
): HTMLElement {
  const sec = h('section', { class: 'jp-brrr-section' });
  sec.appendChild(heading('Ranks'));
  const table = dataTable(
    [
      ['rank', true],
      ['span', true],
      ['busy', true],
      ['compute', true],
      ['memory', true],
      ['other', true],
      ['communication', true],
      ['comm. exposed', true],
      ['overlap', true],
      ['idle', true],
      ['last at', true],
      ['late', true],
      ['waited', true],
      ['clock offset', true]
    ],
    ranks.map(r => ({
      props: {
        class: r.rank === straggler ? 'jp-brrr-rank-straggler' : '',
        data: { testid: 'brrr-rank-row', rank: String(r.rank) },
        title: [r.file, r.host, r.device].filter(x => x).join(', ')
      },
      cells: [
        `${r.rank}${r.rank === straggler ? ' \u25cf' : ''}`,
        fmtTime(r.span_s),
        fmtTime(busy(r)),
        fmtTime(r.compute_s),
        fmtTime(r.memory_s),
        fmtTime(r.other_s),
        fmtTime(r.comm_s),
        fmtTime(r.communication_s),
        fmtPct(r.overlap, 0),
        fmtTime(r.idle_s),
        fmtInt(r.last_count),
        fmtTime(r.lateness_s),
        fmtTime(r.wait_s),
        fmtTime(r.clock_offset_s)
      ]
    })),
    { testid: 'brrr-rank-table', compact: true }
  );
  sec.appendChild(h('div', { class: 'jp-brrr-table-wrap' }, table));
  sec.appendChild(
    h(
      'div',
      { class: 'jp-brrr-muted jp-brrr-caption' },
      "busy: the span less idle time; communication: all of it, comm. exposed: the part with none of the rank's own work beside it; last at: collectives the rank arrived last at, beyond the clocks' noise; late: how long it held the others back; waited: how long it waited for the last rank."
    )
  );
  return sec;
}

/** The collectives with their bus bandwidth. */
function collectivesSection(
  collectives: ReturnType<typeof jobCollectiveRows>
): HTMLElement {
  const csec = h('section', { class: 'jp-brrr-section' });
  csec.appendChild(
    heading("Collectives (time: from the last rank's arrival to the end)")
  );
  const ct = dataTable(
    [
      ['group'],
      ['op'],
      ['size', true],
      ['dtype'],
      ['where'],
      ['calls', true],
      ['time', true],
      ['median', true],
      ['algbw', true],
      ['busbw', true],
      ['of link', true],
      ['algorithm']
    ],
    collectives.map(c => ({
      props: { data: { testid: 'brrr-collective-row', op: c.op } },
      cells: [
        c.group,
        { content: c.op, class: 'jp-brrr-name' },
        fmtBytes(c.bytes),
        c.dtype,
        c.where,
        fmtInt(c.calls),
        fmtTime(c.time_s),
        fmtTime(c.median_s),
        fmtSI(c.algbw, 'B/s'),
        fmtSI(c.busbw, 'B/s'),
        fmtPct(c.link_fraction, 0),
        c.algorithm || '\u2014'
      ]
    })),
    { testid: 'brrr-collective-table', compact: true }
  );
  csec.appendChild(h('div', { class: 'jp-brrr-table-wrap' }, ct));
  return csec;
}

/** The profiler steps of every rank: a table, folded when long. */
function stepsSection(steps: ReturnType<typeof jobStepRows>): HTMLElement {
  const sec = h('details', {
    class: 'jp-brrr-section',
    data: { testid: 'brrr-job-steps' }
  });
  if (steps.length <= 40) {
    sec.setAttribute('open', '');
  }
  sec.appendChild(
    h(
      'summary',
      { class: 'jp-brrr-h' },
      `Profiler steps (${steps.length} rank-steps)`
    )
  );
  const table = dataTable(
    [
      ['rank', true],
      ['step', true],
      ['kind'],
      ['span', true],
      ['compute', true],
      ['memory', true],
      ['other', true],
      ['communication', true],
      ['comm. exposed', true],
      ['last at', true],
      ['late', true],
      ['waited', true]
    ],
    steps.map(r => ({
      props: { data: { testid: 'brrr-job-step', rank: String(r.rank) } },
      cells: [
        String(r.rank),
        r.step === null ? '\u2014' : String(r.step),
        r.kind,
        fmtTime(r.span_s),
        fmtTime(r.compute_s),
        fmtTime(r.memory_s),
        fmtTime(r.other_s),
        fmtTime(r.comm_s),
        fmtTime(r.exposed_comm_s),
        fmtInt(r.last_count),
        fmtTime(r.lateness_s),
        fmtTime(r.wait_s)
      ]
    })),
    { compact: true }
  );
  sec.appendChild(h('div', { class: 'jp-brrr-table-wrap' }, table));
  return sec;
}

/** Render the rank timeline: one lane per rank, collectives outlined. */
export async function renderRankTimeline(
  panel: HTMLElement,
  ctx: IJobContext
): Promise<void> {
  const { job } = ctx;
  const ranks = jobRankRows(job).map(r => r.rank);
  const lanes = jobLaneRows(job);
  const calls = jobCallRows(job);
  if (!ranks.length || (!lanes.length && !calls.length)) {
    panel.appendChild(
      emptyState(
        'No timeline to show.',
        'This job report holds no activity per rank (lanes) and no collective calls.'
      )
    );
    return;
  }
  const chartEl = h('div', {
    class: 'jp-brrr-chart',
    data: { testid: 'brrr-rank-timeline' }
  });
  panel.appendChild(chartEl);
  const total = job.calls.total ?? calls.length;
  const caption = [
    `${ranks.length} ranks, ${fmtInt(calls.length)} collective calls${total > calls.length ? ` (the first of ${fmtInt(total)})` : ''}`,
    "each rank's own work in the split's colours; communication in the lower band (pale: hidden behind work, solid: exposed); each collective outlined from the rank's arrival to its end",
    job.summary.one_clock
      ? 'the ranks share one clock'
      : "the ranks' clocks are aligned on the collectives' ends",
    'wheel to zoom, drag to pan'
  ];
  panel.appendChild(
    h(
      'div',
      { class: 'jp-brrr-muted jp-brrr-caption' },
      caption.join('; ') + '.'
    )
  );
  const charts = await import('../charts_runs');
  ctx.track(
    await charts.drawRankTimeline(
      chartEl,
      { ranks, lanes, calls, straggler: job.summary.straggler.rank },
      ctx.theme()
    )
  );
}
