/**
 * A webhook receiver on 127.0.0.1 for the alert tests: answers `failWith`
 * (500 unless told) to its first `failures` requests, then 200 to a request
 * whose signature verifies (401 otherwise), and records every request.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
export async function webhookReceiver(secret, failures, failWith = 500) {
    const got = [];
    const server = createServer((req, res) => {
        const chunks = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            const want = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
            const sent = Buffer.from(String(req.headers['x-agentledger-signature'] ?? ''));
            const signed = sent.length === want.length && timingSafeEqual(sent, want);
            const status = got.length < failures ? failWith : signed ? 200 : 401;
            got.push({ status, key: req.headers['idempotency-key'], signed, body });
            res.writeHead(status).end(status === 200 ? 'ok' : 'not now');
        });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        server,
        url: `http://127.0.0.1:${server.address().port}/hook`,
        got,
        close: () => new Promise((resolve) => server.close(() => resolve())),
    };
}
//# sourceMappingURL=webhook-receiver.js.map