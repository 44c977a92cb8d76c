/**
 * Timeline: kernels per stream over time, the GPU's idle gaps, and CPU ops.
 */

import { h } from '../dom';
import { fmtInt, fmtTime } from '../format';
import { emptyState, IViewContext } from './common';

/** The time from 0 to `end` when no kernel runs: the red lane's length, as
 * charts.ts (idleGaps) draws it; here so that the view needs no chart code. */
function idleTime(
  kernels: { start_s: number | null; dur_s: number | null }[],
  end: number
): number {
  const spans = kernels
    .map(k => [k.start_s!, k.start_s! + Math.max(0, k.dur_s!)])
    .sort((a, b) => a[0] - b[0]);
  let idle = 0;
  let reached = 0;
  for (const [a, b] of spans) {
    idle += Math.max(0, a - reached);
    reached = Math.max(reached, b);
  }
  return idle + Math.max(0, end - reached);
}

/** Render the timeline view into a panel. */
export async function renderTimeline(
  panel: HTMLElement,
  ctx: IViewContext
): Promise<void> {
  const { data } = ctx;
  // Aggregated kernels (very large traces) stand for many launches: their
  // start is the first launch and their duration the total, so they are
  // not drawn on a time axis.
  const aggregated = data.report.kernels.aggregated === true;
  const kernels = aggregated
    ? []
    : data.kernels.filter(k => k.start_s !== null && k.dur_s !== null);
  const cpuOps = data.cpuOps.filter(c => c.start_s !== null);
  if (!kernels.length && !cpuOps.length) {
    let detail =
      'No kernels and no CPU ops were recorded in this cell: profile code that calls PyTorch.';
    if (data.kernels.length && aggregated) {
      detail =
        'The trace held too many kernels, so the report aggregates them by name: they have no single start time. Open the saved trace in Perfetto for the full timeline.';
    } else if (data.cpuOnly) {
      const { title, detail: what } = data.noGpuMessage;
      detail = `${title} No CPU ops with times were recorded either. ${what}`;
    }
    panel.appendChild(emptyState('No timeline to show.', detail));
    return;
  }
  const chartEl = h('div', {
    class: 'jp-brrr-chart',
    data: { testid: 'brrr-timeline' }
  });
  panel.appendChild(chartEl);
  const streams = new Set(kernels.map(k => k.stream));
  const caption: string[] = [];
  if (data.cpuOnly) {
    caption.push(
      data.noGpuFound
        ? 'No GPU was found: CPU ops only'
        : 'No GPU work: CPU ops only'
    );
  }
  caption.push(
    `${fmtInt(kernels.length)} kernels on ${streams.size} stream${streams.size === 1 ? '' : 's'}, ${fmtInt(cpuOps.length)} CPU ops`
  );
  // The chart draws the profiled run as traced (slower than the timed runs under the
  // profiler, or faster): its own length and idle time, and the timed runs' apart.
  let start = 0;
  let end = 0;
  for (const k of kernels) {
    end = Math.max(end, k.start_s! + (k.dur_s ?? 0));
  }
  for (const c of cpuOps) {
    start = Math.min(start, c.start_s!);
    end = Math.max(end, c.start_s! + (c.dur_s ?? 0));
  }
  const drawnIdle = kernels.length ? idleTime(kernels, end) : null;
  const s = data.report.summary;
  const timed = (s.timing?.timed_runs ?? 0) > 0;
  caption.push(
    `${timed ? 'the profiled run' : 'the traced run'}, as traced: ${fmtTime(end - start)}` +
      (drawnIdle !== null ? `, GPU idle ${fmtTime(drawnIdle)} (red lane)` : '')
  );
  const idle = data.splitTime('idle');
  if (timed && data.span !== null) {
    caption.push(
      `the timed runs: span ${fmtTime(data.span)} per run` +
        (idle !== null && kernels.length
          ? `, GPU idle ${fmtTime(idle)} per run`
          : '')
    );
  }
  caption.push('wheel to zoom, drag to pan');
  if (aggregated) {
    caption.push(
      `the ${fmtInt(data.report.kernels.total ?? data.kernels.length)} kernels are aggregated by name in this report, so only CPU ops are drawn`
    );
  }
  panel.appendChild(
    h(
      'div',
      { class: 'jp-brrr-muted jp-brrr-caption' },
      caption.join('; ') + '.'
    )
  );
  const charts = await ctx.charts();
  ctx.track(
    await charts.drawTimeline(
      chartEl,
      { kernels, cpuOps, span: null },
      ctx.theme()
    )
  );
}
