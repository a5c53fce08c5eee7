/**
 * The parts every child-process agent server of the crash and replica suites shares: the caller
 * and tenant from `x-user` / `x-tenant`, `READY <port>` once listening on 127.0.0.1, a clean stop
 * on SIGTERM (a SIGKILL is what the tests use to crash one), the agent of the push suites and the
 * resume hook of the resume suites (released by POST /release/<taskId>).
 */
import express, { type Request } from 'express';
import type { A2ARouter, AgentExecutor, CallContextHook } from 'a2a-express-kit';

/** The caller from `x-user` (else 'anonymous'), the tenant from `x-tenant`. */
export const headerCallContext: CallContextHook = (req: Request) => ({
  caller: { id: req.get('x-user') ?? 'anonymous', authenticated: true },
  tenant: req.get('x-tenant'),
});

/** One JSON line on stdout: what the test reads besides READY. */
export const printLine = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);

/**
 * The push suites' agent: `park` asks for input; a follow-up `work:N` publishes N progress events,
 * prints `{"kind":"holding","taskId"}` and holds until aborted (the test kills the process meanwhile).
 */
export const parkThenWorkAgent: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'park') return events.requireInput('more?');
    const steps = Number(/^work:(\d+)$/.exec(ctx.userText)?.[1] ?? 0);
    await events.start('working');
    for (let i = 1; i <= steps; i++) await events.progress(`step ${i}`);
    printLine({ kind: 'holding', taskId: ctx.taskId });
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
  },
};

/** The resumed turns waiting for POST /release/<taskId>. */
const heldResumes = new Map<string, () => void>();

/**
 * The resume suites' hook: prints `{"kind":"resumed","taskId","reason","state"}` (the stored state
 * it was given), publishes a progress update, holds until POST /release/<taskId>, then completes.
 */
export const resumeThenComplete: NonNullable<AgentExecutor['resume']> = async (ctx, events) => {
  printLine({ kind: 'resumed', taskId: ctx.taskId, reason: ctx.reason, state: ctx.task.status.state });
  await events.progress('resumed');
  await new Promise<void>((resolve) => heldResumes.set(ctx.taskId, resolve));
  heldResumes.delete(ctx.taskId);
  await events.complete('finished after the crash');
};

/** The push suites' agent, with resumeThenComplete when env RESUME is set. */
export const pushAgent = (): AgentExecutor => (process.env.RESUME ? { ...parkThenWorkAgent, resume: resumeThenComplete } : parkThenWorkAgent);

/** Serves `router` at /agent on 127.0.0.1, prints `READY <port>`; SIGTERM closes it, then `closeStores`. */
export function serveAgent(router: A2ARouter, closeStores: () => Promise<void>): void {
  const app = express();
  app.post('/release/:taskId', (req, res) => {
    const release = heldResumes.get(req.params.taskId);
    release?.();
    res.json({ released: release !== undefined });
  });
  app.use('/agent', router);
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.once('SIGTERM', () => {
    void (async () => {
      await router.close({ graceMs: 100 });
      await closeStores();
      server.closeAllConnections();
      server.close(() => process.exit(0));
    })();
  });
}

/** Runs the server's main(); a start-up failure is printed and exits 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
