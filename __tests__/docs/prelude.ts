/**
 * What a documentation snippet may use without declaring it: the card, executor, app and router an
 * example would have built a few lines earlier. snippets.test.ts imports every name below that a
 * snippet uses but does not declare itself, so a snippet shows only what it is about.
 */
import type { Server } from 'node:http';
import express from 'express';
import { createA2ARouter, type AgentCardInput, type AgentExecutor, type TaskStore } from 'a2a-express-kit';

export const agentCard: AgentCardInput = {
  name: 'Travel agent',
  description: 'Books flights.',
  version: '1.0.0',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'book', name: 'Book a flight', description: 'Books a flight.', tags: ['travel'] }],
};

export const executor: AgentExecutor = {
  async execute(_ctx, events) {
    await events.reply('Hello!');
  },
};

export const app = express();
export const agent = createA2ARouter({ agentCard, executor });
export declare const server: Server;

// bearerJwt's settings, as an app would read them from its configuration.
export const jwksUrl = 'https://issuer.example.com/.well-known/jwks.json';
export const issuer = 'https://issuer.example.com/';
export const audience = 'a2a-agent';
export const secret = 'a-secret-of-at-least-thirty-two-bytes!';

/** A job queue of the app's choosing (BullMQ, a database table...), reduced to what the background-work guide calls. */
export interface JobQueue {
  add(name: string, data: unknown): Promise<void>;
  remove(jobId: string): void;
}
export declare const queue: JobQueue;
export declare const worker: { process(name: string, run: (data: any) => Promise<void>): void };
/** A job's own work step, as the background-work guide's worker calls it. */
export declare function work(step: string, input: string, options: { signal: AbortSignal }): Promise<void>;

/** The store the stores guide tests with the contract suite, and its connection pool. */
export declare class PgTaskStore implements TaskStore {
  constructor(pool: unknown);
  get: TaskStore['get'];
  create: TaskStore['create'];
  update: TaskStore['update'];
  list: TaskStore['list'];
}
export declare const pool: unknown;
