/**
 * Timeline: kernels per stream over time, the GPU's idle gaps, and CPU ops.
 */

import { h } from '../dom';
import { fmtInt, fmtTime } from '../format';
import { emptyState, IViewContext } from './common';

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
  const idle = data.splitTime('idle');
  if (idle !== null && kernels.length) {
    caption.push(`GPU idle ${fmtTime(idle)} per run (red lane)`);
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
      { kernels, cpuOps, span: data.span },
      ctx.theme()
    )
  );
}
