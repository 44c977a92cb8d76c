/*
 * What the standalone bundle puts in place of BokehJS's MathJax and WebGL
 * modules (js/build-standalone.js): the report's charts draw no TeX (their
 * axis labels are constants) and on canvas, and these two are most of the
 * bundle's size. BokehJS reads this error as "module not there" and goes on
 * without them.
 */
const error = new Error('not part of the jupyter_brrr standalone bundle');
error.code = 'MODULE_NOT_FOUND';
throw error;
