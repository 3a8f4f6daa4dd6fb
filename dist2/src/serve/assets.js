/**
 * The files the page is made of, by the path they are served at: nothing else
 * on disk can be fetched through `serve`. The page's own files are in
 * `src/serve/page/` (plain JavaScript and CSS, served as written); uPlot comes
 * from its npm package.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
const PAGE_DIR = fileURLToPath(new URL('../../../src/serve/page/', import.meta.url));
const UPLOT_DIR = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
export const PAGE_ASSETS = {
    '/': { file: join(PAGE_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
    '/assets/app.js': { file: join(PAGE_DIR, 'app.js'), type: JS },
    '/assets/money.js': { file: join(PAGE_DIR, 'money.js'), type: JS },
    '/assets/dom.js': { file: join(PAGE_DIR, 'dom.js'), type: JS },
    '/assets/tables.js': { file: join(PAGE_DIR, 'tables.js'), type: JS },
    '/assets/chart.js': { file: join(PAGE_DIR, 'chart.js'), type: JS },
    '/assets/panels.js': { file: join(PAGE_DIR, 'panels.js'), type: JS },
    '/assets/app.css': { file: join(PAGE_DIR, 'app.css'), type: CSS },
    '/assets/uPlot.iife.min.js': { file: join(UPLOT_DIR, 'uPlot.iife.min.js'), type: JS },
    '/assets/uPlot.min.css': { file: join(UPLOT_DIR, 'uPlot.min.css'), type: CSS },
    '/favicon.ico': { file: join(PAGE_DIR, 'favicon.svg'), type: 'image/svg+xml' },
};
//# sourceMappingURL=assets.js.map