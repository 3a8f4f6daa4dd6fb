/**
 * The browser of the browser tests (test/support/browser.ts) runs here and its
 * recorders can fail: pages served on 127.0.0.1 by a tiny node:http server
 * put `<img src=x onerror=alert(1)>` into the document as text (shown as
 * text, no dialog) and as HTML (the handler runs: a dialog is recorded), and
 * load a script from http://example.invalid (recorded and aborted). No
 * service of the stack is needed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { chromiumPath, launchBrowser, openPage, screenshot } from '../support/browser.js';
const PAYLOAD = '<img src=x onerror=alert(1)>';
/** One page per path; each script puts the payload in #out its own way. */
const PAGES = {
    '/text': `<p id="status">waiting</p><p id="out"></p>
<script>
document.getElementById('out').textContent = ${JSON.stringify(PAYLOAD)};
document.getElementById('status').textContent = 'rendered by script';
</script>`,
    '/html': `<p id="out"></p>
<script>document.getElementById('out').innerHTML = ${JSON.stringify(PAYLOAD)};</script>`,
    '/elsewhere': `<p>a page that loads a script from another origin</p>
<script src="http://example.invalid/x.js"></script>`,
};
let server;
let base;
let browser;
const opened = [];
before(async () => {
    server = createServer((req, res) => {
        const body = PAGES[req.url ?? ''];
        if (body === undefined)
            res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        else
            res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>smoke</title>${body}`);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${server.address().port}`;
    const started = performance.now();
    browser = await launchBrowser();
    console.log(`[browser-smoke] ${chromiumPath()} ${browser.version()} launched in ${Math.round(performance.now() - started)} ms`);
});
after(async () => {
    for (const p of opened)
        await p.close();
    await browser?.close();
    await new Promise((resolve) => server.close(() => resolve()));
});
const open = async (path) => {
    const p = await openPage(browser, base + path);
    opened.push(p);
    return p;
};
test('text set by a script shows, the payload as text: no element, no dialog; screenshot saved', async () => {
    const { page, record } = await open('/text');
    assert.equal(await page.textContent('#status'), 'rendered by script');
    assert.equal(await page.textContent('#out'), PAYLOAD);
    assert.equal(await page.locator('#out img').count(), 0);
    assert.deepEqual(record, { otherOrigin: [], consoleErrors: [], pageErrors: [], dialogs: [] });
    const png = readFileSync(await screenshot(page, 'browser-smoke-text'));
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
});
test('the payload as HTML runs its handler: the dialog is recorded', async () => {
    const { page, record } = await open('/html');
    // The 404 of src=x fires onerror; load waits for the image, but give the dialog a moment anyway.
    for (let i = 0; i < 100 && record.dialogs.length === 0; i++)
        await page.waitForTimeout(20);
    assert.deepEqual(record.dialogs, ['alert: 1']);
    assert.equal(await page.locator('#out img').count(), 1);
    assert.equal(record.consoleErrors.length, 1, 'the 404 of src=x');
    assert.deepEqual(record.otherOrigin, []);
});
test('a script from another origin is recorded and never fetched', async () => {
    const { record } = await open('/elsewhere');
    assert.deepEqual(record.otherOrigin, ['http://example.invalid/x.js']);
    assert.match(record.consoleErrors.join('\n'), /ERR_BLOCKED_BY_CLIENT/);
    assert.deepEqual(record.dialogs, []);
});
test('an uncaught error is recorded', async () => {
    const { page, record } = await open('/text');
    await page.evaluate(() => setTimeout(() => { throw new TypeError('boom'); }));
    for (let i = 0; i < 100 && record.pageErrors.length === 0; i++)
        await page.waitForTimeout(20);
    assert.deepEqual(record.pageErrors, ['TypeError: boom']);
});
test('a missing browser is one line saying how to install it', () => {
    const saved = process.env['AGENTLEDGER_CHROMIUM'];
    process.env['AGENTLEDGER_CHROMIUM'] = '/nonexistent/chromium';
    try {
        assert.throws(chromiumPath, (e) => !e.message.includes('\n') && e.message.includes('run `bash infra/stack.sh install`'));
    }
    finally {
        if (saved === undefined)
            delete process.env['AGENTLEDGER_CHROMIUM'];
        else
            process.env['AGENTLEDGER_CHROMIUM'] = saved;
    }
});
//# sourceMappingURL=browser-smoke.test.js.map