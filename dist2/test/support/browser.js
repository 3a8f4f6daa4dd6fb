/**
 * A real headless browser for the browser tests: Debian's
 * chromium-headless-shell (installed by `infra/stack.sh install`) driven by
 * playwright-core, which downloads no browser of its own.
 *
 * openPage() opens a URL in a fresh context and records what a page must not
 * do: reach another origin (every such request is recorded and aborted, so a
 * test never touches the network; a WebSocket is only recorded), log a console error, throw an uncaught
 * error, or open an alert()/confirm()/prompt() (a dialog means a script ran,
 * as an injected `<img onerror=alert(1)>` would).
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { REPO_ROOT } from './services.js';
/** Where Debian's package puts the browser (/usr/bin/chromium-headless-shell is a script that execs it). */
const DEBIAN_PATHS = ['/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium-headless-shell'];
export const SCREENSHOTS_DIR = join(REPO_ROOT, 'test-artifacts', 'screenshots');
/** AGENTLEDGER_CHROMIUM if set (it must exist), else the first Debian path that does. */
export function chromiumPath() {
    const override = process.env['AGENTLEDGER_CHROMIUM'];
    const candidates = override ? [override] : DEBIAN_PATHS;
    const found = candidates.find((p) => existsSync(p));
    if (found === undefined)
        throw new Error(`no headless Chromium at ${candidates.join(' or ')}; run \`bash infra/stack.sh install\``);
    return found;
}
/**
 * Launches the browser. Playwright's own flags already include --headless,
 * --disable-dev-shm-usage and, unless chromiumSandbox is set, --no-sandbox.
 * The sandbox is kept for any user but root: Chromium refuses to sandbox
 * itself as root ("Chromium sandboxing failed!"), and works as another user here.
 */
export async function launchBrowser() {
    return chromium.launch({
        executablePath: chromiumPath(),
        headless: true,
        chromiumSandbox: process.getuid?.() !== 0,
        timeout: 30_000,
    });
}
/** Schemes that name no server: loading them reaches no origin. */
const LOCAL_SCHEMES = new Set(['data:', 'blob:', 'about:']);
/** Opens `url` in a new context, recording from before the first byte (see the file's comment). */
export async function openPage(browser, url, opts = {}) {
    const origin = new URL(url).origin;
    const record = { otherOrigin: [], consoleErrors: [], pageErrors: [], dialogs: [] };
    const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 800 } });
    const elsewhere = (target) => !LOCAL_SCHEMES.has(target.protocol) && target.origin !== origin;
    await context.route(elsewhere, async (route) => {
        record.otherOrigin.push(route.request().url());
        await route.abort('blockedbyclient');
    });
    const page = await context.newPage();
    // WebSockets bypass routes: recorded (not stopped) when they go to another host.
    page.on('websocket', (ws) => {
        const target = new URL(ws.url().replace(/^ws/, 'http'));
        if (elsewhere(target))
            record.otherOrigin.push(ws.url());
    });
    page.on('console', (m) => {
        if (m.type() === 'error')
            record.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => record.pageErrors.push(`${e.name}: ${e.message}`));
    page.on('dialog', (d) => {
        record.dialogs.push(`${d.type()}: ${d.message()}`);
        d.dismiss().catch(() => undefined);
    });
    await page.goto(url, { waitUntil: opts.waitUntil ?? 'load', timeout: opts.timeoutMs ?? 30_000 });
    return { page, record, close: () => context.close() };
}
/** Saves a full-page PNG as test-artifacts/screenshots/<name>.png under the repo root; returns its path. */
export async function screenshot(page, name) {
    await mkdir(SCREENSHOTS_DIR, { recursive: true });
    const path = join(SCREENSHOTS_DIR, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    return path;
}
//# sourceMappingURL=browser.js.map