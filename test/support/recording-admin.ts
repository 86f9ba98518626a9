/**
 * A small node:http server standing in for the admin endpoint in command tests: each request is handed, parsed,
 * to the test's `answer`, which records it and says what to send back.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the server saw it: method, path and JSON body (undefined when empty). */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
}

/** An answer: status and JSON, `destroy` to drop the connection unanswered, or `hang` to never answer. */
export type AdminAnswer = { status: number; json?: unknown } | 'destroy' | 'hang';

export interface RecordingAdmin {
  readonly url: string;
  close(): Promise<void>;
}

export async function startRecordingAdmin(answer: (req: SeenRequest) => AdminAnswer): Promise<RecordingAdmin> {
  const reply = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    const a = answer({ method: req.method!, path: req.url!, body: text === '' ? undefined : JSON.parse(text) });
    if (a === 'destroy') {
      res.socket?.destroy();
      return;
    }
    if (a === 'hang') return;
    res.writeHead(a.status, a.json === undefined ? {} : { 'content-type': 'application/json' });
    res.end(a.json === undefined ? '' : JSON.stringify(a.json));
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => reply(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The URL of a port that was just free and is closed again: nothing answers there. */
export async function closedAdminUrl(): Promise<string> {
  const gone = await startRecordingAdmin(() => 'destroy');
  await gone.close();
  return gone.url;
}
