/**
 * A TCP proxy on 127.0.0.1 in front of a real service, which a test can make
 * hold every byte both ways (connections stay open, nothing answers: a
 * server that hangs, not one that is down) and then let go again.
 */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** From now on no byte passes, on open connections and new ones. */
  hold(): void;
  /** Bytes pass again; what was held is delivered. */
  release(): void;
  close(): Promise<void>;
}

export async function tcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let held = false;
  const sockets = new Set<Socket>();
  /** Bytes held back, per destination, in arrival order. */
  const waiting = new Map<Socket, Buffer[]>();
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (held) waiting.get(to)?.push(chunk);
      else to.write(chunk);
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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    hold() {
      held = true;
    },
    release() {
      held = false;
      for (const [to, chunks] of waiting) for (const chunk of chunks.splice(0)) to.write(chunk);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
