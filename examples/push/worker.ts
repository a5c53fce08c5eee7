/**
 * The background worker: takes report jobs and publishes each task's events through a publisher
 * opened from the job's HandOff. It runs in its own async context (started with the app), not in
 * the context of the request that queued the job.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { A2ARouter, TaskPublisher } from 'a2a-express-kit';
import type { JobQueue } from './jobs';
import type { ReportJob } from './agent';

export interface WorkerOptions {
  /** Simulated time per report section. Default 1000 ms. */
  readonly stepMs?: number;
  /** Where the worker reports problems (a job whose task is gone, a refused write). */
  readonly log?: (message: string) => void;
}

const SECTIONS = ['Background', 'Findings', 'Conclusion'];

export interface Worker {
  /** Stops taking jobs; resolves once the job in hand is done. */
  stop(): Promise<void>;
}

export function startReportWorker(queue: JobQueue<ReportJob>, agent: Pick<A2ARouter, 'openTaskPublisher'>, options: WorkerOptions = {}): Worker {
  const stepMs = options.stepMs ?? 1000;
  const log = options.log ?? (() => {});

  async function write(job: ReportJob, publisher: TaskPublisher): Promise<void> {
    const sections: string[] = [];
    for (const [index, title] of SECTIONS.entries()) {
      // Canceled (CancelTask) or ended elsewhere: stop; the engine has written the final state.
      if (publisher.signal.aborted) return;
      await delay(stepMs, undefined, { signal: publisher.signal }).catch(() => {});
      if (publisher.signal.aborted) return;
      sections.push(`## ${title}\n${title} of the report on ${job.topic}.`);
      await publisher.progress(`Section ${index + 1} of ${SECTIONS.length} written: ${title}`);
    }
    await publisher.artifact({ name: 'report.md', text: `# ${job.topic}\n\n${sections.join('\n\n')}\n` });
    await publisher.complete('Your report is ready.');
  }

  const running = (async () => {
    for (let job = await queue.take(); job; job = await queue.take()) {
      let publisher: TaskPublisher | undefined;
      try {
        publisher = await agent.openTaskPublisher(job.handOff.scope, job.handOff.taskId);
        await write(job, publisher);
      } catch (error) {
        log(`report job ${job.id}: ${(error as Error).message}`);
        // A failure of the work itself fails the task (a no-op when it already ended).
        await publisher?.fail('The report could not be written.').catch(() => {});
      } finally {
        publisher?.close();
      }
    }
  })();

  return {
    async stop() {
      queue.close();
      await running;
    },
  };
}
