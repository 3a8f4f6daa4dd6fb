/**
 * A TCP proxy on 127.0.0.1 in front of a real service, which a test can make
 * hold every byte both ways (connections stay open, nothing answers: a
 * server that hangs, not one that is down) and then let go again.
 */
import { connect, createServer } from 'node:net';
export async function tcpProxy(targetHost, targetPort) {
    let held = false;
    const sockets = new Set();
    /** Bytes held back, per destination, in arrival order. */
    const waiting = new Map();
    const forward = (from, to) => {
        from.on('data', (chunk) => {
            if (held)
                waiting.get(to)?.push(chunk);
            else
                to.write(chunk);
        });
        from.on('end', () => to.end());
    };
    const server = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        for (const s of [client, upstream]) {
            sockets.add(s);
            waiting.set(s, []);
            s.on('close', () => {
                sockets.delete(s);
                waiting.delete(s);
            });
            s.on('error', () => {
                client.destroy();
                upstream.destroy();
            });
        }
        forward(client, upstream);
        forward(upstream, client);
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    return {
        port: server.address().port,
        hold() {
            held = true;
        },
        release() {
            held = false;
            for (const [to, chunks] of waiting)
                for (const chunk of chunks.splice(0))
                    to.write(chunk);
        },
        async close() {
            for (const s of sockets)
                s.destroy();
            await new Promise((r) => server.close(() => r()));
        },
    };
}
//# sourceMappingURL=tcp-proxy.js.map