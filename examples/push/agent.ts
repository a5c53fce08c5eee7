/**
 * A report writer that does its slow work in the background: execute() creates the task, hands
 * the turn off to the job queue and returns; the worker (worker.ts) publishes progress, the report
 * artifact and the final state later. Clients follow by push notifications, streams or polling.
 */
import type { AgentCardInput, AgentExecutor, HandOff } from 'a2a-express-kit';
import type { JobQueue } from './jobs';

/** What the worker needs: the task (the HandOff, JSON) and what to write about. */
export interface ReportJob {
  /** The task id: a cancel removes the job while it is still queued. */
  readonly id: string;
  readonly handOff: HandOff;
  readonly topic: string;
}

/** The card; the router states `pushNotifications: true` itself when push is configured. */
export const reportAgentCard: AgentCardInput = {
  name: 'Report Writer',
  description: 'Writes a short report in the background and notifies your webhook as it goes.',
  version: '1.0.0',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'write-report',
      name: 'Write a report',
      description: 'Writes a three-section report on a topic.',
      tags: ['reports'],
      examples: ['the history of the bicycle'],
    },
  ],
};

export function reportAgent(queue: JobQueue<ReportJob>): AgentExecutor {
  return {
    async execute(ctx, events) {
      const topic = ctx.userText.trim();
      if (!topic) return events.reply('Tell me what the report should be about.');
      await events.start(`Queued a report on "${topic}".`);
      // The turn stays open: a blocking SendMessage keeps waiting for the worker's final state.
      const handOff = await events.handOff();
      queue.push({ id: handOff.taskId, handOff, topic });
    },
    cancel(ctx) {
      // Still queued: drop it. Already running: the worker's publisher signal fires.
      queue.remove(ctx.taskId);
    },
  };
}
