/**
 * The apps: a header, a tab bar and one panel per view, drawn into a plain
 * DOM element. TabbedApp is the one tab mechanism; ReportApp draws a report
 * with it (and job_app.ts a job report and a comparison), each with its tabs
 * from tabs.ts. They are the one interactive renderer: the JupyterLab and
 * Notebook 7 MIME renderers (widget.ts, job_widget.ts) and the standalone
 * HTML file (standalone.ts) all draw with them. Views are drawn when their
 * tab is first opened; charts load BokehJS lazily.
 */

import { themeOf } from './charts';
import type { IChartHandle, IChartTheme } from './charts';
import { clear, h, showViewError } from './dom';
import { fmtPct, fmtTime } from './format';
import { ReportData } from './model';
import { parseReport } from './schema';
import { ITab, tabsFor } from './tabs';
import { IViewContext } from './views/common';

/** The CSS class of the root element. */
export const CLASS_NAME = 'jp-brrr';

/** One render time measurement. */
export interface IRenderTiming {
  /** Which view: "report" for the first paint, else the tab id. */
  view: string;
  /** Milliseconds from start to the view being drawn. */
  ms: number;
  /** Ops in the report. */
  ops: number;
  /** Kernels in the report. */
  kernels: number;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/naming-convention
  interface Window {
    /** Render timings of every jupyter_brrr report view drawn on the page. */
    jupyterBrrrRenderTiming?: IRenderTiming[];
  }
}

/** The chart module (BokehJS with it). */
export type ChartsModule = typeof import('./charts');

let chartsModule: Promise<ChartsModule> | null = null;

/** Load the chart module (and BokehJS with it) once per page. */
export function loadCharts(): Promise<ChartsModule> {
  if (!chartsModule) {
    chartsModule = import('./charts');
    chartsModule.catch(() => {
      chartsModule = null;
    });
  }
  return chartsModule;
}

function record(t: IRenderTiming): void {
  const list = (window.jupyterBrrrRenderTiming ??= []);
  list.push(t);
  if (list.length > 1000) {
    list.splice(0, list.length - 1000);
  }
}

/** Options of an app. */
export interface IReportAppOptions {
  /** How the chart module is loaded (lazily, by default). */
  charts?: () => Promise<ChartsModule>;
}

/** What every app gives the document it draws: the theme, charts, their upkeep. */
export interface IAppTools {
  /** Colours of the current theme for charts. */
  theme(): IChartTheme;
  /** The chart module (BokehJS), loaded lazily unless the app was given it. */
  charts(): Promise<ChartsModule>;
  /** Keep a chart so that it is removed with the view. */
  track(handle: IChartHandle): void;
}

/** A document as an app draws it: its title line and its tabs with what they draw with. */
export interface ITabbedDocument<C> {
  /** The title line. */
  header: HTMLElement;
  /** The tabs this document shows, in order: the first is opened first. */
  tabs: ITab<C>[];
  /** What the tabs draw with. */
  ctx: C;
  /** Told how long each view took to draw; `null`: the first paint of the whole document. */
  timed?: (view: string | null, ms: number) => void;
}

/**
 * The one tab mechanism of every document (a report, a job report, a
 * comparison): a header, a tab bar and one panel per tab, each drawn when its
 * tab is first opened. A render that a newer one has replaced lands nowhere;
 * an update in place stays on the tab the user had open, and charts are
 * redrawn in the new colours when JupyterLab switches theme.
 */
export abstract class TabbedApp<C> {
  constructor(
    readonly node: HTMLElement,
    options: IReportAppOptions = {}
  ) {
    this._charts = options.charts ?? loadCharts;
    node.classList.add(CLASS_NAME);
    // Charts are drawn on canvas with the theme's colours read at draw time:
    // redraw when JupyterLab switches theme (it sets these body attributes).
    this._themeObserver = new MutationObserver(() => {
      const theme = document.body.dataset.jpThemeName ?? '';
      if (theme !== this._themeName && this._doc !== undefined) {
        this._themeName = theme;
        void this.render(this._doc);
      }
    });
    this._themeObserver.observe(document.body, {
      attributes: true,
      attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light']
    });
  }

  /** Read the document (the parsed JSON); throw an Error that says why it cannot. */
  protected abstract build(doc: unknown, tools: IAppTools): ITabbedDocument<C>;

  /** Render a document (the parsed JSON); safe to call again on updates. */
  async render(doc: unknown): Promise<void> {
    const t0 = performance.now();
    this._doc = doc;
    this._themeName = document.body.dataset.jpThemeName ?? '';
    this._removeCharts();
    this._generation++;
    const node = this.node;
    clear(node);
    delete node.dataset.renderMs;
    node.dataset.state = 'rendering';

    let built: ITabbedDocument<C>;
    try {
      built = this.build(doc, {
        theme: () => themeOf(this.node),
        charts: this._charts,
        track: handle => {
          this._chartHandles.push(handle);
        }
      });
      if (!built.tabs.length) {
        throw new Error('This document has no view to show.');
      }
    } catch (err) {
      node.appendChild(
        h(
          'div',
          { class: 'jp-brrr-error', data: { testid: 'brrr-error' } },
          err instanceof Error ? err.message : String(err)
        )
      );
      node.dataset.state = 'error';
      node.dataset.renderMs = (performance.now() - t0).toFixed(1);
      return;
    }
    const { tabs, ctx } = built;

    node.appendChild(built.header);
    // The tabs handle the arrow keys themselves: keep JupyterLab's notebook
    // shortcuts from taking them.
    const bar = h('div', {
      class: 'jp-brrr-tabs',
      attrs: { role: 'tablist', 'data-lm-suppress-shortcuts': 'true' }
    });
    node.appendChild(bar);
    const body = h('div', { class: 'jp-brrr-body' });
    node.appendChild(body);

    const generation = this._generation;
    const buttons = new Map<string, HTMLButtonElement>();
    const panels = new Map<string, HTMLElement>();
    const drawn = new Set<string>();

    const activate = async (id: string): Promise<void> => {
      for (const [tid, b] of buttons) {
        const on = tid === id;
        b.classList.toggle('jp-mod-active', on);
        b.setAttribute('aria-selected', String(on));
        b.tabIndex = on ? 0 : -1;
        panels.get(tid)!.hidden = !on;
      }
      node.dataset.activeTab = id;
      this._activeTab = id;
      if (drawn.has(id)) {
        return;
      }
      drawn.add(id);
      const tab = tabs.find(t => t.id === id)!;
      const panel = panels.get(id)!;
      const start = performance.now();
      panel.dataset.state = 'rendering';
      try {
        await tab.render(panel, ctx);
        if (generation !== this._generation) {
          return;
        }
        panel.dataset.state = 'done';
      } catch (err) {
        if (generation !== this._generation) {
          return;
        }
        showViewError(panel, id, err);
      }
      const ms = performance.now() - start;
      panel.dataset.renderMs = ms.toFixed(1);
      built.timed?.(id, ms);
    };

    tabs.forEach((tab, i) => {
      const b = h(
        'button',
        {
          class: 'jp-brrr-tab',
          data: { tab: tab.id, testid: `brrr-tab-${tab.id}` },
          attrs: { role: 'tab', type: 'button' }
        },
        tab.label
      );
      b.addEventListener('click', () => void activate(tab.id));
      b.addEventListener('keydown', ev => {
        const k = ev.key;
        if (k === 'ArrowRight' || k === 'ArrowLeft') {
          ev.preventDefault();
          const j =
            (i + (k === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length;
          buttons.get(tabs[j].id)!.focus();
          void activate(tabs[j].id);
        }
      });
      buttons.set(tab.id, b);
      bar.appendChild(b);
      const panel = h('div', {
        class: `jp-brrr-panel jp-brrr-panel-${tab.id}`,
        data: { panel: tab.id },
        attrs: { role: 'tabpanel' }
      });
      panel.hidden = true;
      panels.set(tab.id, panel);
      body.appendChild(panel);
    });

    // On an update in place (update_display, a theme switch), stay on the
    // tab the user had open; when a tab that asks for it has just appeared
    // (an A/B comparison), show it.
    let initial = tabs[0].id;
    // A fix tried from the Overview shows its verdict there: its A/B tab does not take over.
    const stay = node.dataset.tryFixPending === '1';
    delete node.dataset.tryFixPending;
    const fresh = stay
      ? undefined
      : tabs.find(
          t => t.openWhenNew && this._renders > 0 && !this._hadTabs.has(t.id)
        );
    if (fresh) {
      initial = fresh.id;
    } else if (this._activeTab && tabs.some(t => t.id === this._activeTab)) {
      initial = this._activeTab;
    }
    this._renders++;
    this._hadTabs = new Set(tabs.map(t => t.id));
    await activate(initial);
    if (generation !== this._generation) {
      return;
    }
    const ms = performance.now() - t0;
    node.dataset.state = 'done';
    node.dataset.renderMs = ms.toFixed(1);
    built.timed?.(null, ms);
  }

  /** Free the charts and stop watching the theme. */
  dispose(): void {
    this._generation++;
    this._themeObserver.disconnect();
    this._removeCharts();
  }

  private _removeCharts(): void {
    for (const c of this._chartHandles) {
      c.remove();
    }
    this._chartHandles = [];
  }

  private _charts: () => Promise<ChartsModule>;
  private _doc: unknown = undefined;
  private _themeName = '';
  private _themeObserver: MutationObserver;
  private _activeTab: string | null = null;
  private _renders = 0;
  private _hadTabs = new Set<string>();
  private _chartHandles: IChartHandle[] = [];
  private _generation = 0;
}

/** Draws a jupyter_brrr report into `node`; render() again on updates. */
export class ReportApp extends TabbedApp<IViewContext> {
  protected build(
    doc: unknown,
    tools: IAppTools
  ): ITabbedDocument<IViewContext> {
    const data = new ReportData(parseReport(doc));
    const timing = (view: string, ms: number) =>
      record({
        view,
        ms,
        ops: data.report.ops.data.length,
        kernels: data.report.kernels.data.length
      });
    return {
      header: header(data),
      tabs: tabsFor(data),
      ctx: { data, ...tools },
      timed: (view, ms) => timing(view ?? 'report', ms)
    };
  }
}

/** The report's title line: name, device and key chips. */
function header(data: ReportData): HTMLElement {
  const r = data.report;
  const s = r.summary;
  const chips: HTMLElement[] = [];
  const chip = (text: string, cls = '', title?: string, testid?: string) =>
    chips.push(
      h(
        'span',
        {
          class: `jp-brrr-chip ${cls}`,
          title,
          data: testid ? { testid } : undefined
        },
        text
      )
    );
  chip(
    data.cpuOnly
      ? data.noGpuFound
        ? 'CPU only (no GPU found)'
        : `${s.device} (no GPU work)`
      : (s.device ?? 'unknown device'),
    'jp-brrr-chip-device',
    'device',
    'brrr-device'
  );
  if (!data.cpuOnly) {
    chip(`span ${fmtTime(data.span)}`, '', 'GPU span of one run', 'brrr-span');
    chip(
      `GPU busy ${fmtPct(data.busyShare, 0)}`,
      '',
      'share of the span with a kernel running',
      'brrr-busy'
    );
  }
  if (s.warm === true) {
    chip('warm', 'jp-brrr-chip-ok', 'steady-state numbers');
  } else if (s.warm === false) {
    chip('first run', 'jp-brrr-chip-warn', 'includes one-time costs');
  }
  return h(
    'div',
    { class: 'jp-brrr-header' },
    h('span', { class: 'jp-brrr-logo' }, 'brrr'),
    h('span', { class: 'jp-brrr-title', title: r.name }, r.name),
    h('span', { class: 'jp-brrr-chips' }, ...chips)
  );
}
