/**
 * jupyter_brrr: a JupyterLab MIME renderer for jupyter_brrr reports.
 *
 * The renderer is marked safe: it draws from report data only, sets every
 * string from the payload as text, and evaluates no code, so a report also
 * renders in an untrusted (shared) notebook.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { ComparisonWidget, HistoryWidget, JobWidget } from './job_widget';
import {
  COMPARISON_MIME_TYPE,
  HISTORY_MIME_TYPE,
  JOB_MIME_TYPE,
  MIME_TYPE
} from './schema';
import { ReportWidget } from './widget';

export { MIME_TYPE, parseReport, SCHEMA_VERSION, tableRows } from './schema';
export { ReportWidget } from './widget';

/** Create a renderer for the report MIME type. */
export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  defaultRank: 40,
  createRenderer: options => new ReportWidget(options)
};

/** The MIME renderer extension. */
const extension: IRenderMime.IExtension = {
  id: 'jupyter-brrr:plugin',
  description: 'Renders jupyter_brrr GPU profiling reports.',
  rendererFactory,
  rank: 40,
  dataType: 'json',
  fileTypes: [
    {
      name: 'brrr-report',
      displayName: 'jupyter_brrr report',
      mimeTypes: [MIME_TYPE],
      extensions: ['.brrr.json']
    }
  ],
  documentWidgetFactoryOptions: {
    name: 'jupyter_brrr report',
    primaryFileType: 'brrr-report',
    fileTypes: ['brrr-report'],
    defaultFor: ['brrr-report']
  }
};

/** Create a renderer for a job report (the ranks of one distributed run). */
export const jobRendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [JOB_MIME_TYPE],
  defaultRank: 40,
  createRenderer: options => new JobWidget(options)
};

/** Create a renderer for a comparison of two measurements (jupyter_brrr.diff). */
export const comparisonRendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [COMPARISON_MIME_TYPE],
  defaultRank: 40,
  createRenderer: options => new ComparisonWidget(options)
};

/** Create a renderer for a named cell's runs (%brrr history NAME). */
export const historyRendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [HISTORY_MIME_TYPE],
  defaultRank: 40,
  createRenderer: options => new HistoryWidget(options)
};

/** The job report's renderer. */
const jobExtension: IRenderMime.IExtension = {
  id: 'jupyter-brrr:job',
  description:
    'Renders jupyter_brrr job reports (the ranks of a distributed run).',
  rendererFactory: jobRendererFactory,
  rank: 40,
  dataType: 'json'
};

/** The comparison's renderer. */
const comparisonExtension: IRenderMime.IExtension = {
  id: 'jupyter-brrr:comparison',
  description: 'Renders jupyter_brrr comparisons of two measurements.',
  rendererFactory: comparisonRendererFactory,
  rank: 40,
  dataType: 'json'
};

/** The history's renderer. */
const historyExtension: IRenderMime.IExtension = {
  id: 'jupyter-brrr:history',
  description: "Renders a jupyter_brrr named cell's runs (%brrr history NAME).",
  rendererFactory: historyRendererFactory,
  rank: 40,
  dataType: 'json'
};

export default [extension, jobExtension, comparisonExtension, historyExtension];
