/**
 * A tiny webhook receiver, the client's side of push notifications: it logs every notification
 * it gets. Run it alone with `npx tsx examples/push/receiver.ts` (RECEIVER_PORT, default 4000;
 * RECEIVER_TOKEN, default `example-token`), on loopback only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Part, StreamResponse } from 'a2a-express-kit';

export interface ReceivedNotification {
  /** The StreamResponse posted: `task`, `statusUpdate` or `artifactUpdate`. */
  readonly event: StreamResponse;
  /** One line saying what happened. */
  readonly summary: string;
}

export interface ReceiverOptions {
  readonly port?: number;
  /** The token the push config was registered with; a request without it is refused (401). */
  readonly token?: string;
  readonly log?: (line: string) => void;
  readonly onNotification?: (notification: ReceivedNotification) => void;
}

export interface WebhookReceiver {
  /** The URL to give as `taskPushNotificationConfig.url`. */
  readonly url: string;
  close(): Promise<void>;
}

/** What a notification says, in one line. */
export function summarize(event: StreamResponse): string {
  const textOf = (parts: readonly Part[] | undefined) => parts?.map((p) => ('text' in p ? p.text : '')).join(' ') ?? '';
  if ('task' in event) return `task ${event.task.id}: ${event.task.status.state} ${textOf(event.task.status.message?.parts)}`.trim();
  if ('statusUpdate' in event) {
    const { taskId, status } = event.statusUpdate;
    return `task ${taskId}: ${status.state} ${textOf(status.message?.parts)}`.trim();
  }
  if ('artifactUpdate' in event)
    return `task ${event.artifactUpdate.taskId}: artifact ${event.artifactUpdate.artifact.name ?? event.artifactUpdate.artifact.artifactId}`;
  return 'a message';
}

export function startReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const log = options.log ?? (() => {});
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    // Anyone can POST to a webhook: the token proves the notification comes from our agent.
    if (options.token !== undefined && req.headers['x-a2a-notification-token'] !== options.token) {
      log(`refused a notification without the expected token from ${req.socket.remoteAddress}`);
      res.writeHead(401).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let event: StreamResponse;
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as StreamResponse;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const summary = summarize(event);
      log(summary);
      options.onNotification?.({ event, summary });
      // A 2xx acknowledges; anything else makes the agent retry (receivers must tolerate duplicates).
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => {
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

if (require.main === module) {
  const token = process.env.RECEIVER_TOKEN ?? 'example-token';
  startReceiver({
    port: Number(process.env.RECEIVER_PORT ?? 4000),
    token,
    // eslint-disable-next-line no-console
    log: (line) => console.log(`[webhook] ${line}`),
  }).then((receiver) => {
    // eslint-disable-next-line no-console
    console.log(`Webhook receiver listening: ${receiver.url} (token: ${token})`);
  });
}
