/**
 * Official SDK: @a2a-js/sdk 1.3.0 `DefaultRequestHandler` + its Express JSON-RPC handler at `/` and
 * its Express HTTP+JSON (REST) handler at `/rest` (`POST /rest/message:send`, ...) + `InMemoryTaskStore`,
 * with the same agent behaviour as the other benchmark servers.
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import type { AgentCard, Message, Task, TaskStatus } from '@a2a-js/sdk';
import { AgentEvent, DefaultExecutionEventBusManager, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { listen, mountBenchControl } from './common.js';
import { STREAM_PROGRESS_UPDATES } from '../workloads.js';

function agentMessage(text: string, contextId: string, taskId: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function status(state: TaskState, text: string | undefined, contextId: string, taskId: string): TaskStatus {
  return {
    state,
    message: text === undefined ? undefined : agentMessage(text, contextId, taskId),
    timestamp: new Date().toISOString(),
  };
}

function publishStatus(bus: ExecutionEventBus, taskId: string, contextId: string, state: TaskState, text?: string): void {
  bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state, text, contextId, taskId), metadata: undefined }));
}

function firstText(message: Message): string {
  for (const part of message.parts) {
    if (part.content?.$case === 'text') return part.content.value;
  }
  return '';
}

class BenchExecutor implements AgentExecutor {
  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = ctx;
    const text = firstText(ctx.userMessage);
    if (ctx.task) {
      // Follow-up on a parked task (turn 2 of the two-turn workload): the first event must be the task.
      bus.publish(AgentEvent.task(ctx.task));
      publishStatus(bus, taskId, contextId, TaskState.TASK_STATE_COMPLETED, 'done');
      return;
    }
    if (text === 'message') {
      bus.publish(AgentEvent.message({ ...agentMessage('pong', contextId, ''), taskId: '' }));
      return;
    }
    const task: Task = {
      id: taskId,
      contextId,
      status: status(TaskState.TASK_STATE_WORKING, undefined, contextId, taskId),
      artifacts: [],
      history: [ctx.userMessage],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    if (text === 'stream') {
      for (let i = 0; i < STREAM_PROGRESS_UPDATES; i += 1) {
        publishStatus(bus, taskId, contextId, TaskState.TASK_STATE_WORKING, `step ${i + 1}`);
      }
      publishStatus(bus, taskId, contextId, TaskState.TASK_STATE_COMPLETED, 'done');
    } else if (text === 'input') {
      publishStatus(bus, taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, 'need more input');
    } else {
      publishStatus(bus, taskId, contextId, TaskState.TASK_STATE_COMPLETED, 'done');
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    // Parked tasks have no running work: publish the terminal state. No status message: the executor does not
    // know the contextId here (the SDK keeps the task's own contextId from the store).
    publishStatus(bus, taskId, '', TaskState.TASK_STATE_CANCELED);
    bus.finished();
  };
}

const app = express();
// The interface URLs are informational; each handler only checks that the card states its binding
// (JSONRPC, HTTP+JSON) at the requested protocolVersion.
const card: AgentCard = {
  name: 'bench agent (official SDK)',
  description: 'Benchmark agent',
  supportedInterfaces: [
    { url: 'http://127.0.0.1/', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: 'http://127.0.0.1/rest', protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
  ],
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'bench',
      name: 'bench',
      description: 'benchmark skill',
      tags: ['bench'],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ],
  signatures: [],
} as AgentCard;

const store = new InMemoryTaskStore();
const busManager = new DefaultExecutionEventBusManager();
const handler = new DefaultRequestHandler(card, store, new BenchExecutor(), busManager);

// Private fields of the SDK's in-memory structures (ScopedStore: tenant -> owner -> Map), read only to
// count/drop entries for the memory phase.
type Scoped = { _store: Map<string, Map<string, Map<string, unknown>>> };
const scopedTasks = (store as unknown as { _scopedStore: Scoped })._scopedStore;
const scopedBuses = (busManager as unknown as { _scopedBuses: Scoped })._scopedBuses;
const countScoped = (scoped: Scoped): number => {
  let n = 0;
  for (const tenant of scoped._store.values()) for (const owner of tenant.values()) n += owner.size;
  return n;
};

/** Event listeners on all the buses: a SubscribeToTask stream (an ExecutionEventQueue) adds one. */
const countBusListeners = (): number => {
  let n = 0;
  for (const tenant of scopedBuses._store.values()) {
    for (const owner of tenant.values()) {
      for (const bus of owner.values()) n += (bus as { eventListeners?: Map<unknown, unknown[]> }).eventListeners?.size ?? 0;
    }
  }
  return n;
};

mountBenchControl(app, {
  storeSize: () => countScoped(scopedTasks),
  clearStore: () => scopedTasks._store.clear(),
  stats: () => ({ eventBuses: countScoped(scopedBuses), busListeners: countBusListeners() }),
});
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
// REST at its own prefix and in front of JSON-RPC: the JSON-RPC router's body parser and content-type
// guard (application/json only) apply to every path below its mount, so REST requests must not reach
// it; and JSON-RPC requests (POST /) pass /rest without entering the REST router.
app.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

listen(app, 'official-sdk');
