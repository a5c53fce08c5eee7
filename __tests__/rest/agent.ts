/** The agent the REST suites talk to: a reply, a task with an artifact, an input-required task, a long task. */
import type { AgentExecutor } from '../../lib';
import { deferred, type Deferred } from '../helpers/async';

export interface Gates {
  /** Released by a test: lets a 'long' task finish. */
  gate: Deferred<void>;
  /** Resolved with the task id once a 'long' task is running. */
  running: Deferred<string>;
}

export function gates(): Gates {
  return { gate: deferred(), running: deferred() };
}

export function restAgent(g: () => Gates): AgentExecutor {
  return {
    async execute(ctx, events) {
      switch (ctx.userText) {
        case 'hello':
          return events.reply(`hello, ${ctx.caller.id}`);
        case 'report':
          await events.start('working');
          await events.artifact({ artifactId: 'r-1', name: 'report.txt', text: 'line 1\n' });
          await events.artifact({ artifactId: 'r-1', text: 'line 2\n', append: true, lastChunk: true });
          return events.complete('report ready');
        case 'book':
          return events.requireInput('which day?');
        case 'long': {
          const { gate, running } = g();
          await events.start('running');
          running.resolve(ctx.taskId);
          await Promise.race([gate.promise, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
          if (ctx.signal.aborted) return; // the engine writes CANCELED
          await events.artifact({ artifactId: 'late', text: 'late result' });
          return events.complete('long done');
        }
        default:
          if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') return events.complete(`booked for ${ctx.userText}`);
          return events.reject('unknown request');
      }
    },
  };
}
