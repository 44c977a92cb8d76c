/*
 * Builds the standalone report app (js/src/standalone.ts, compiled by tsc to
 * js/lib/standalone.js) into ONE script with BokehJS inside, and its styles
 * into one CSS file, under jupyter_brrr/standalone/: report.save_html()
 * inlines both next to the report JSON, so the saved file opens offline.
 *
 *   node js/build-standalone.js [--development]
 *
 * Rspack comes with @jupyter/builder, which builds the JupyterLab extension.
 */
const fs = require('fs');
const path = require('path');
const { rspack } = require('@rspack/core');

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'jupyter_brrr', 'standalone');
const development = process.argv.includes('--development');
// The same BokehJS rule as the extension's build (see webpack.config.js).
const bokehRule = require('./webpack.config.js').module.rules[0];

const config = {
  mode: development ? 'development' : 'production',
  devtool: false,
  context: root,
  entry: path.join(root, 'js', 'lib', 'standalone.js'),
  target: ['web', 'es2020'],
  output: {
    path: out,
    filename: 'report.js',
    // One file: a dynamic import (the lazy chart module, BokehJS's WebGL
    // glyphs) is bundled in, never fetched from elsewhere.
    asyncChunks: false,
    clean: false
  },
  optimization: { splitChunks: false, runtimeChunk: false },
  ignoreWarnings: [/Failed to read .*bokehjs.*source map/],
  module: { rules: [bokehRule] },
  performance: { hints: false },
  plugins: [
    // No MathJax (TeX) and no WebGL: see standalone-stub.js.
    new rspack.NormalModuleReplacementPlugin(
      /^\.\/mathjax$|^\.\.\/glyphs\/webgl$|^\.\/webgl\//,
      path.join(root, 'js', 'standalone-stub.js')
    )
  ]
};

fs.mkdirSync(out, { recursive: true });
rspack(config, (err, stats) => {
  if (err || stats.hasErrors()) {
    console.error(
      err ?? stats.toString({ colors: false, all: false, errors: true })
    );
    process.exit(1);
  }
  const css = ['standalone.css', 'base.css', 'runs.css']
    .map(name => fs.readFileSync(path.join(root, 'js', 'style', name), 'utf8'))
    .join('\n');
  fs.writeFileSync(path.join(out, 'report.css'), css);
  const size = fs.statSync(path.join(out, 'report.js')).size;
  console.log(
    `jupyter_brrr/standalone/report.js: ${(size / 1e6).toFixed(2)} MB`
  );
});
