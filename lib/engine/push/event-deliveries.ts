/** One committed event as push deliveries: one per config, the body built once per protocol. */
import { randomUUID } from 'node:crypto';
import type { PushProtocol, StoredPushConfig } from '../seams/push-config-store.js';
import type { PushDelivery } from '../seams/push-outbox.js';
import type { TaskScope } from '../seams/task-store.js';
import type { StreamResponse, Task } from '../../protocol/schemas.js';
import { toV03Task } from '../../protocol/v0_3/translate.js';

/** The task as of its commit: the arrays the writer appends to in place (artifacts, their parts, history) copied. */
export function asCommitted(task: Task): Task {
  const copy = { ...task };
  if (task.artifacts) copy.artifacts = task.artifacts.map((artifact) => ({ ...artifact, parts: artifact.parts.slice() }));
  if (task.history) copy.history = task.history.slice();
  return copy;
}

/** One delivery of `event` (committed as `version`) per config; `final`: the task's terminal event. */
export function eventDeliveries(
  configs: readonly StoredPushConfig[],
  scope: TaskScope,
  taskId: string,
  event: StreamResponse,
  task: Task,
  version: number,
  final: boolean,
): PushDelivery[] {
  const bodies = new Map<PushProtocol, string>();
  const bodyFor = (protocol: PushProtocol): string => {
    let body = bodies.get(protocol);
    if (body === undefined) bodies.set(protocol, (body = pushBody(protocol, event, task)));
    return body;
  };
  return configs.map((config) => ({
    id: randomUUID(),
    scope,
    taskId,
    configId: config.id,
    version,
    body: bodyFor(config.protocol),
    contentType: pushContentType(config.protocol),
    final,
    attempts: 0,
  }));
}

const V1_CONTENT_TYPE = 'application/a2a+json';
const V03_CONTENT_TYPE = 'application/json';

/** The webhook body of a committed event for a config's protocol: v1.0 webhooks get the StreamResponse; v0.3 ones the Task itself, as both v0.3 SDK servers sent it. */
export function pushBody(protocol: PushProtocol, event: StreamResponse, task: Task): string {
  return JSON.stringify(protocol === '0.3' ? toV03Task(task) : event);
}

export const pushContentType = (protocol: PushProtocol): string => (protocol === '0.3' ? V03_CONTENT_TYPE : V1_CONTENT_TYPE);
