/**
 * The apps of the documents that stand beside a report, drawn with the
 * report's tab mechanism (TabbedApp, app.ts) and their tabs from tabs.ts: a
 * job report (the ranks of one torch.distributed run: Ranks and Timeline
 * tabs), a comparison of two measurements (jupyter_brrr.diff, %brrr diff)
 * and a named cell's runs (%brrr history NAME). The JupyterLab renderers
 * (job_widget.ts) and the standalone HTML file of each (standalone.ts) draw
 * with them.
 */

import { IAppTools, ITabbedDocument, TabbedApp } from './app';
import { h } from './dom';
import {
  IComparison,
  parseComparison,
  parseHistoryDocument,
  parseJob,
  ReportError
} from './schema';
import {
  COMPARISON_TABS,
  HISTORY_TABS,
  IComparisonContext,
  IHistoryContext,
  JOB_TABS
} from './tabs';
import { IJobContext } from './views/ranks';

/** A title line: the logo, a title and plain chips. */
function header(title: string, chips: string[]): HTMLElement {
  return h(
    'div',
    { class: 'jp-brrr-header' },
    h('span', { class: 'jp-brrr-logo' }, 'brrr'),
    h('span', { class: 'jp-brrr-title', title }, title),
    h(
      'span',
      { class: 'jp-brrr-chips' },
      ...chips.map(c => h('span', { class: 'jp-brrr-chip' }, c))
    )
  );
}

/** Draws a job report into `node`: the Ranks tab and the per-rank Timeline. */
export class JobApp extends TabbedApp<IJobContext> {
  protected build(
    doc: unknown,
    tools: IAppTools
  ): ITabbedDocument<IJobContext> {
    const job = parseJob(doc);
    const s = job.summary;
    return {
      header: header(`jupyter_brrr job${job.name ? `: ${job.name}` : ''}`, [
        `${s.ranks.length} of ${s.world_size} ranks`,
        `${s.backend || 'unknown'} backend`,
        s.devices.join(', ') || 'unknown device'
      ]),
      tabs: JOB_TABS,
      ctx: { job, theme: tools.theme, track: tools.track }
    };
  }
}

/** Draws a comparison of two measurements (jupyter_brrr.diff): the Change view alone. */
export class ComparisonApp extends TabbedApp<IComparisonContext> {
  protected build(doc: unknown): ITabbedDocument<IComparisonContext> {
    const c = parseComparison(doc);
    if (!c) {
      throw new ReportError('This output is not a jupyter_brrr comparison.');
    }
    const side = (s: IComparison['before']) =>
      s.run !== null
        ? `${s.name || s.label} (run ${s.run})`
        : s.name || s.label;
    return {
      header: header(
        `jupyter_brrr change: ${side(c.before)} \u2192 ${side(c.after)}`,
        [c.after.device || c.before.device || 'unknown device']
      ),
      tabs: COMPARISON_TABS,
      ctx: { comparison: c }
    };
  }
}

/** Draws a named cell's runs (%brrr history NAME): the Change tab's chart and runs table. */
export class HistoryApp extends TabbedApp<IHistoryContext> {
  protected build(
    doc: unknown,
    tools: IAppTools
  ): ITabbedDocument<IHistoryContext> {
    const history = parseHistoryDocument(doc);
    const n = history.runs.length;
    const last = n ? history.runs[n - 1] : null;
    return {
      header: header(`jupyter_brrr history: ${history.name}`, [
        `${n} run${n === 1 ? '' : 's'}`,
        last?.device || 'unknown device'
      ]),
      tabs: HISTORY_TABS,
      ctx: { history, theme: tools.theme, track: tools.track }
    };
  }
}
