/**
 * The router's side of the `inspector` option: refuses production, makes the token, and loads
 * lib/inspector with a dynamic import, so a router without the option never loads any of it.
 */
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../options.js';
import { optionsError } from '../options.js';
import type { InspectorDeps, InspectorServer } from '../inspector/server.js';
import type { AssemblyTap } from './assemble.js';
import type { RouterSettings } from './options.js';

type Settings = NonNullable<RouterSettings['inspector']>;
type Handler = (req: Request, res: Response, next: NextFunction) => void;

interface InspectorHook {
  readonly tap: AssemblyTap;
  readonly handler: Handler;
  /** Ends the inspector's open event streams. */
  close(): void;
  /** Called once the engine exists: the inspector is loaded with what it reads. */
  start(deps: Omit<InspectorDeps, 'token' | 'hosts' | 'receiverPath' | 'logger'>, baseUrl: () => string): void;
}

export function inspectorHook(settings: Settings, logger: Logger): InspectorHook {
  if (process.env.NODE_ENV === 'production' && !settings.allowProduction) {
    throw optionsError(
      'createA2ARouter',
      'inspector',
      'is on while NODE_ENV is production: it shows every task; set { allowProduction: true } to mean it',
    );
  }
  const token = randomBytes(24).toString('base64url');
  // A path nobody can guess: the only webhook URL the SSRF guard lets through to loopback.
  const receiverPath = `/_inspector/receiver/${randomBytes(16).toString('hex')}`;
  const ports = new Set<number>();
  let server: InspectorServer | undefined;
  let loading: Promise<InspectorServer> | undefined;
  // Events committed before the module finished loading (a few microtasks after start-up).
  const early: Array<(s: InspectorServer) => void> = [];
  const forward = (call: (s: InspectorServer) => void) => (server ? call(server) : early.length < 1000 && early.push(call));
  return {
    tap: {
      events: {
        taskEvent: (info) => forward((s) => s.feed.taskEvent(info)),
        cancelAnswered: (info) => forward((s) => s.feed.note('cancel', info)),
        turnStarted: (info) => forward((s) => s.feed.note('turn-started', info)),
        turnEnded: (info) => forward((s) => s.feed.note('turn-ended', info)),
      },
      push: {
        attempt: (info) => forward((s) => s.feed.note('push-attempt', info)),
        gaveUp: (info) => forward((s) => s.feed.note('push-gave-up', info)),
      },
      exemptWebhook: (url) =>
        /^(127\.\d+\.\d+\.\d+|\[::1\])$/.test(url.hostname) && ports.has(Number(url.port)) && url.pathname.endsWith(receiverPath),
    },
    close: () => server?.close(),
    handler(req, res, next) {
      if (req.socket.localPort !== undefined) ports.add(req.socket.localPort);
      if (!loading) return next(new Error('the inspector has not started'));
      loading.then((s) => s.handle(req, res, next), next);
    },
    start(deps, baseUrl) {
      loading = import('../inspector/server.js').then((m) => {
        server = m.createInspector({ ...deps, token, hosts: settings.hosts, receiverPath, logger });
        for (const call of early.splice(0)) call(server);
        return server;
      });
      loading.catch((error: unknown) => logger.error({ err: error }, 'the inspector could not be loaded'));
      // After app.use() has run, so that the mount path is known; once per process and router.
      setImmediate(() =>
        logger.warn({ code: 'A2A_INSPECTOR_ON' }, `A2A inspector on (development only): open ${baseUrl()}/_inspector/#token=${token}`),
      );
    },
  };
}
