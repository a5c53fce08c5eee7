/** Push notification configs (§3.1.7–3.1.10), each read through the caller's scope; credentials masked in answers and never logged. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { A2AError, invalidParams, taskNotFound, type FieldViolation } from '../../errors.js';
import type { Logger } from '../../options.js';
import type {
  CreateTaskPushNotificationConfigRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
} from '../../protocol/requests.js';
import type { TaskPushNotificationConfig } from '../../protocol/schemas.js';
import { registeredByV03 } from '../../protocol/v0_3/push.js';
import type { EngineEvents } from '../engine-events.js';
import type { TaskScope, TaskStore, VersionedTask } from '../seams/task-store.js';
import { PushConfigLimitError, type PushConfigStore, type PushProtocol, type StoredPushConfig } from '../seams/push-config-store.js';
import type { PushDispatcher } from './push-dispatcher.js';
import { interceptSeam, type SeamHook } from '../seams/intercept.js';
import { WebhookRefusedError, type SsrfGuard } from './ssrf-guard.js';

/** What Get and List answer instead of a config's credentials (§13.2: they are secrets). */
const MASKED_CREDENTIALS = '********';

interface PushServiceDeps {
  readonly taskStore: TaskStore;
  readonly configs: PushConfigStore;
  readonly guard: SsrfGuard;
  readonly dispatcher: PushDispatcher;
  readonly logger: Logger;
  readonly maxConfigsPerTask: number;
}

interface InlineClaim {
  readonly scope: TaskScope;
  readonly config: StoredPushConfig;
  /** A follow-up's task; undefined for a new task (known at its first event). */
  readonly taskId: string | undefined;
  claimed: boolean;
}

// RFC 9110 token (an auth scheme), and header-safe text (no control characters: no header injection).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TEXT = /^[\x20-\x7e]*$/;
const CONFIG_ID = /^[\x21-\x7e]{1,128}$/;
const MAX_URL = 2048;
const MAX_SECRET = 4096;
// Hosts whose refusal was logged; past this many, further hosts are not logged (a caller cannot grow it).
const MAX_HINTED_HOSTS = 1_000;

export class PushNotificationService {
  #deps: PushServiceDeps;
  readonly #hinted = new Set<string>();
  readonly #inline = new AsyncLocalStorage<InlineClaim>();
  /** Every committed event goes to the dispatcher, in its request's context. */
  readonly events: EngineEvents;

  constructor(deps: PushServiceDeps) {
    this.#deps = deps;
    this.events = {
      taskEvent: (info) => {
        const scope = { tenant: info.tenant, owner: info.owner };
        const claim = this.#inline.getStore();
        const before = this.#claimInline(scope, info.taskId);
        const v03 = before !== undefined && claim!.config.protocol === '0.3';
        deps.dispatcher.eventCommitted(scope, info.taskId, info.event, info.task, info.version, AsyncLocalStorage.snapshot(), before, v03);
      },
    };
  }

  useSeamHooks(hooks: readonly SeamHook[]): void {
    const deps = this.#deps;
    this.#deps = {
      ...deps,
      taskStore: interceptSeam(deps.taskStore, 'taskStore', hooks),
      configs: interceptSeam(deps.configs, 'pushConfigStore', hooks),
    };
    deps.dispatcher.useSeamHooks(hooks);
  }

  /** Accepted in any task state, as both SDKs do; on an ended task it receives nothing (§4.3.3). */
  async create(
    scope: TaskScope,
    request: CreateTaskPushNotificationConfigRequest,
    protocol: PushProtocol = '1.0',
  ): Promise<TaskPushNotificationConfig> {
    const { task } = await this.#visibleTask(scope, request.taskId);
    const config = await this.#validated(request, request.taskId, protocol, '');
    if (protocol === '0.3') this.#deps.dispatcher.expectV03(scope, task.id);
    try {
      await this.#deps.configs.put(scope, config, this.#deps.maxConfigsPerTask);
    } catch (error) {
      if (error instanceof PushConfigLimitError) {
        throw new A2AError(
          'UnsupportedOperation',
          `Task ${task.id} already has ${error.maxPerTask} push notification configs, the most this agent keeps per task; delete one first`,
        );
      }
      throw this.#storeFailure(error);
    }
    return present(config, scope.tenant);
  }

  async get(scope: TaskScope, request: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
    await this.#visibleTask(scope, request.taskId);
    const config = await this.#store(() => this.#deps.configs.get(scope, request.taskId, request.id));
    if (!config) throw configNotFound(request.taskId, request.id);
    return present(config, scope.tenant);
  }

  /** A page at a time when pageSize asks for it. */
  async list(scope: TaskScope, request: ListTaskPushNotificationConfigsRequest): Promise<ListTaskPushNotificationConfigsResponse> {
    await this.#visibleTask(scope, request.taskId);
    const configs = await this.#store(() => this.#deps.configs.list(scope, request.taskId));
    const start = request.pageToken ? offsetOf(request.pageToken) : 0;
    const size = request.pageSize || configs.length;
    const page = configs.slice(start, start + size);
    const next = start + size < configs.length ? Buffer.from(String(start + size)).toString('base64url') : '';
    return { configs: page.map((config) => present(config, scope.tenant)), nextPageToken: next };
  }

  /** Idempotent: a missing config of a visible task is deleted already. */
  async delete(scope: TaskScope, request: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    await this.#visibleTask(scope, request.taskId);
    await this.#store(() => this.#deps.configs.delete(scope, request.taskId, request.id));
  }

  /** Stored before its task's first event fans out. */
  async withInline<T>(scope: TaskScope, inline: TaskPushNotificationConfig, taskId: string | undefined, begin: () => T | Promise<T>): Promise<T> {
    const protocol: PushProtocol = registeredByV03(inline) ? '0.3' : '1.0';
    const config = await this.#validated(inline, taskId ?? '', protocol, 'configuration.taskPushNotificationConfig.');
    return this.#inline.run({ scope, config, taskId, claimed: false }, begin);
  }

  close(graceMs: number): Promise<void> {
    return this.#deps.dispatcher.close(graceMs);
  }

  /** Claimed by the first event of its task: the store write to make first. */
  #claimInline(scope: TaskScope, taskId: string): (() => Promise<void>) | undefined {
    const claim = this.#inline.getStore();
    if (!claim || claim.claimed || claim.scope.tenant !== scope.tenant || claim.scope.owner !== scope.owner) return undefined;
    if (claim.taskId !== undefined && claim.taskId !== taskId) return undefined;
    claim.claimed = true;
    const config: StoredPushConfig = { ...claim.config, taskId };
    return async () => {
      try {
        await this.#deps.configs.put(scope, config, this.#deps.maxConfigsPerTask);
      } catch (error) {
        const reason = error instanceof PushConfigLimitError ? 'the task has as many configs as allowed' : 'the config store failed';
        this.#deps.logger.error(
          { err: error instanceof PushConfigLimitError ? undefined : error, taskId },
          `push notifications: the inline config was not stored: ${reason}`,
        );
      }
    };
  }

  /** With its server-assigned id (a client-given one is kept). */
  async #validated(input: TaskPushNotificationConfig, taskId: string, protocol: PushProtocol, prefix: string): Promise<StoredPushConfig> {
    const violations: FieldViolation[] = [];
    const id = input.id || randomUUID();
    if (!CONFIG_ID.test(id)) violations.push({ field: `${prefix}id`, description: 'must be 1 to 128 printable ASCII characters without spaces' });
    if (input.url.length > MAX_URL) violations.push({ field: `${prefix}url`, description: `must be at most ${MAX_URL} characters` });
    if (input.token !== undefined && (input.token.length > MAX_SECRET || !HEADER_TEXT.test(input.token))) {
      violations.push({ field: `${prefix}token`, description: `must be at most ${MAX_SECRET} printable ASCII characters` });
    }
    const auth = input.authentication;
    if (auth && !TOKEN.test(auth.scheme))
      violations.push({ field: `${prefix}authentication.scheme`, description: 'must be an HTTP authentication scheme such as Bearer' });
    if (auth?.credentials !== undefined && (auth.credentials.length > MAX_SECRET || !HEADER_TEXT.test(auth.credentials))) {
      violations.push({ field: `${prefix}authentication.credentials`, description: `must be at most ${MAX_SECRET} printable ASCII characters` });
    }
    if (violations.length === 0) {
      try {
        await this.#deps.guard.resolve(input.url);
      } catch (error) {
        if (!(error instanceof WebhookRefusedError)) throw error;
        violations.push({ field: `${prefix}url`, description: error.message });
        if (error.allowEntry !== undefined) this.#hintOnce(error, input.url, taskId);
      }
    }
    if (violations.length > 0) throw invalidParams(violations);
    return {
      id,
      taskId,
      url: input.url,
      ...(input.token ? { token: input.token } : {}),
      ...(auth ? { authentication: auth.credentials ? { scheme: auth.scheme, credentials: auth.credentials } : { scheme: auth.scheme } } : {}),
      protocol,
    };
  }

  /** The operator's side of a refusal, once per webhook host: the client may not be theirs to ask. */
  #hintOnce(error: WebhookRefusedError, url: string, taskId: string): void {
    const webhookHost = new URL(url).host;
    if (this.#hinted.has(webhookHost) || this.#hinted.size >= MAX_HINTED_HOSTS) return;
    this.#hinted.add(webhookHost);
    this.#deps.logger.warn(
      { taskId, webhookHost, addressClass: error.addressClass },
      `push notifications: a webhook URL was refused (${error.addressClass} address); if you trust this host, add it to the router option pushNotifications: { allow: ['${error.allowEntry}'] } (a host name, an address or a CIDR range)`,
    );
  }

  async #visibleTask(scope: TaskScope, taskId: string): Promise<VersionedTask> {
    const stored = await this.#store(() => this.#deps.taskStore.get(scope, taskId));
    if (!stored) throw taskNotFound(taskId);
    return stored;
  }

  async #store<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.#storeFailure(error);
    }
  }

  #storeFailure(error: unknown): A2AError {
    if (error instanceof A2AError) return error;
    this.#deps.logger.debug({ err: error }, 'push notifications: a store failed');
    return new A2AError('Unavailable');
  }
}

/** A config as answered: credentials masked, the tenant echoed when there is one. */
function present(config: StoredPushConfig, tenant: string): TaskPushNotificationConfig {
  const auth = config.authentication;
  return {
    ...(tenant ? { tenant } : {}),
    id: config.id,
    taskId: config.taskId,
    url: config.url,
    ...(config.token ? { token: config.token } : {}),
    ...(auth ? { authentication: auth.credentials ? { scheme: auth.scheme, credentials: MASKED_CREDENTIALS } : { scheme: auth.scheme } } : {}),
  };
}

/** A visible task without that config: the caller owns the task, so saying which is missing leaks nothing. */
const configNotFound = (taskId: string, id: string): A2AError =>
  new A2AError('TaskNotFound', `Push notification config ${id} of task ${taskId} not found`, { metadata: { taskId, configId: id } });

function offsetOf(token: string): number {
  const text = Buffer.from(token, 'base64url').toString();
  const offset = Number(text);
  if (!/^\d{1,6}$/.test(text) || !Number.isSafeInteger(offset)) {
    throw invalidParams([{ field: 'pageToken', description: 'is not a token this server issued' }]);
  }
  return offset;
}
