/**
 * The JupyterLab / Notebook 7 MIME renderers of the documents that stand
 * beside a report: a job report, a comparison of two measurements and a named
 * cell's runs. Each is
 * a Lumino widget around its app (job_app.ts), drawn with the report's tab
 * mechanism (app.ts).
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { ComparisonApp, HistoryApp, JobApp } from './job_app';
import { AppWidget } from './widget';

/** A job report: the Ranks tab and the per-rank Timeline. */
export class JobWidget extends AppWidget {
  constructor(options: IRenderMime.IRendererOptions) {
    super(options, node => new JobApp(node));
  }
}

/** A comparison of two measurements (jupyter_brrr.diff): the Change view alone. */
export class ComparisonWidget extends AppWidget {
  constructor(options: IRenderMime.IRendererOptions) {
    super(options, node => new ComparisonApp(node));
  }
}

/** A named cell's runs (%brrr history NAME): the Change tab's chart and runs table. */
export class HistoryWidget extends AppWidget {
  constructor(options: IRenderMime.IRendererOptions) {
    super(options, node => new HistoryApp(node));
  }
}
