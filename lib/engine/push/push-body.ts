/** The webhook body of a committed event for a config's protocol, shared by the dispatcher and the durable outboxes. */
import type { StreamResponse, Task } from '../../protocol/schemas.js';
import { toV03Task } from '../../protocol/v0_3/translate.js';
import type { PushProtocol } from '../seams/push-config-store.js';

const V1_CONTENT_TYPE = 'application/a2a+json';
const V03_CONTENT_TYPE = 'application/json';

/** v1.0 webhooks get the StreamResponse; v0.3 ones the Task itself, as both v0.3 SDK servers sent it. */
export function pushBody(protocol: PushProtocol, event: StreamResponse, task: Task): string {
  return JSON.stringify(protocol === '0.3' ? toV03Task(task) : event);
}

export const pushContentType = (protocol: PushProtocol): string => (protocol === '0.3' ? V03_CONTENT_TYPE : V1_CONTENT_TYPE);
