/** The push config store and outbox under the engine's seam deadline (see bounded-seams.ts). */
import { withDeadlines, type Deadlines } from '../deadlines.js';
import type { PushConfigStore } from '../seams/push-config-store.js';
import type { PushOutbox } from '../seams/push-outbox.js';

export const boundPushConfigs = (configs: PushConfigStore, deadlines: Deadlines): PushConfigStore =>
  withDeadlines(configs, 'pushConfigStore', ['put', 'get', 'list', 'delete', 'deleteAll', 'setFailing'], deadlines);

export const boundPushOutbox = (outbox: PushOutbox, deadlines: Deadlines): PushOutbox =>
  withDeadlines(outbox, 'pushOutbox', ['add', 'recordAttempts', 'remove', 'pending'], deadlines);
