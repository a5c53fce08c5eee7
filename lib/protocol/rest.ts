/** The HTTP+JSON wire mapping (§11): the operation a method and path name (optional `/{tenant}`), a GET's query as params. */
import { invalidParams } from '../errors.js';
import { withJsonNames } from './field-names.js';

export type RestOperation =
  | 'SendMessage'
  | 'SendStreamingMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'SubscribeToTask'
  | 'CreateTaskPushNotificationConfig'
  | 'GetTaskPushNotificationConfig'
  | 'ListTaskPushNotificationConfigs'
  | 'DeleteTaskPushNotificationConfig'
  | 'GetExtendedAgentCard';

/** One resource: the operation per HTTP method, and the segments its path binds (still %-encoded). */
export interface Resource {
  readonly methods: Readonly<Record<string, RestOperation>>;
  readonly taskId?: string;
  readonly configId?: string;
}

/** A request the binding serves: the operation and the raw path bindings (decode with `pathSegment`). */
export interface RestMatch {
  readonly operation: RestOperation;
  /** Whether the operation reads a request body (POST); the others read the query string. */
  readonly hasBody: boolean;
  readonly tenant?: string;
  readonly taskId?: string;
  readonly configId?: string;
  /** A v0.3 REST route (`/v1/...`, compatibility) of a request served as 0.3: the v0.3 codec answers it. */
  readonly v03?: true;
}

/** What `matchRestRoute` finds: the match, or the methods the path allows (a 405). */
export type RestLookup = { readonly match: RestMatch } | { readonly allow: string };

const SEND = { methods: { POST: 'SendMessage' } } as const satisfies Resource;
const STREAM = { methods: { POST: 'SendStreamingMessage' } } as const satisfies Resource;
const TASKS = { methods: { GET: 'ListTasks' } } as const satisfies Resource;
const CARD = { methods: { GET: 'GetExtendedAgentCard' } } as const satisfies Resource;
const TASK: Resource['methods'] = { GET: 'GetTask' };
const CANCEL: Resource['methods'] = { POST: 'CancelTask' };
// The proto binds GET, §5.3 and §11.3.2 say POST: both are served (as both SDK servers do).
const SUBSCRIBE: Resource['methods'] = { GET: 'SubscribeToTask', POST: 'SubscribeToTask' };
const CONFIGS: Resource['methods'] = { POST: 'CreateTaskPushNotificationConfig', GET: 'ListTaskPushNotificationConfigs' };
const CONFIG: Resource['methods'] = { GET: 'GetTaskPushNotificationConfig', DELETE: 'DeleteTaskPushNotificationConfig' };

const CANCEL_VERB = ':cancel';
const SUBSCRIBE_VERB = ':subscribe';

/** The resource `segments[start..]` names, without a tenant (the v0.3 routes reuse its `tasks/...` part). */
export function resourceAt(segments: readonly string[], start: number): Resource | undefined {
  const count = segments.length - start;
  const first = segments[start];
  if (count === 1) {
    switch (first) {
      case 'message:send':
        return SEND;
      case 'message:stream':
        return STREAM;
      case 'tasks':
        return TASKS;
      case 'extendedAgentCard':
        return CARD;
      default:
        return undefined;
    }
  }
  if (first !== 'tasks' || count > 4) return undefined;
  const task = segments[start + 1];
  if (count === 2) {
    // The verb is matched before decoding: an id that holds ':cancel' is sent as '%3Acancel'.
    if (task.endsWith(CANCEL_VERB)) return { methods: CANCEL, taskId: task.slice(0, -CANCEL_VERB.length) };
    if (task.endsWith(SUBSCRIBE_VERB)) return { methods: SUBSCRIBE, taskId: task.slice(0, -SUBSCRIBE_VERB.length) };
    return { methods: TASK, taskId: task };
  }
  if (segments[start + 2] !== 'pushNotificationConfigs') return undefined;
  return count === 3 ? { methods: CONFIGS, taskId: task } : { methods: CONFIG, taskId: task, configId: segments[start + 3] };
}

/**
 * The operation `method` and `path` name, also under a `/{tenant}` prefix (the un-prefixed reading wins:
 * `/tasks/tasks` is GetTask); `allow` for a path served with other methods, undefined for an unknown one.
 */
export function matchRestRoute(method: string, path: string): RestLookup | undefined {
  // Express's default (non-strict) routing: one trailing slash is ignored.
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (trimmed.charCodeAt(0) !== 0x2f /* '/' */) return undefined;
  const segments = trimmed.slice(1).split('/');
  const plain = resourceAt(segments, 0);
  const operation = plain?.methods[method];
  if (operation) return { match: matchOf(operation, method, plain!, undefined) };
  const prefixed = segments.length > 1 && segments[0] !== '' ? resourceAt(segments, 1) : undefined;
  const prefixedOperation = prefixed?.methods[method];
  if (prefixedOperation) return { match: matchOf(prefixedOperation, method, prefixed!, segments[0]) };
  if (!plain && !prefixed) return undefined;
  const allowed = new Set([...Object.keys(plain?.methods ?? {}), ...Object.keys(prefixed?.methods ?? {}), 'OPTIONS']);
  return { allow: [...allowed].join(', ') };
}

function matchOf(operation: RestOperation, method: string, resource: Resource, tenant: string | undefined): RestMatch {
  return { operation, hasBody: method === 'POST', tenant, taskId: resource.taskId, configId: resource.configId };
}

/** `raw` %-decoded; a malformed escape is an invalid request naming `field` (never a crash). */
function decoded(raw: string, field: string, what: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidParams([{ field, description: `is not a valid percent-encoded ${what}` }]);
  }
}

export function pathSegment(raw: string, field: string): string {
  return decoded(raw, field, 'path segment');
}

/** How a query parameter's text becomes the JSON value zod checks (§11.5); unlisted: a string. */
const QUERY_TYPES: Readonly<Record<string, 'integer' | 'boolean'>> = {
  historyLength: 'integer',
  pageSize: 'integer',
  includeArtifacts: 'boolean',
};

const INTEGER = /^-?\d+$/;

/**
 * A GET's query string as params: proto names accepted, integers and booleans converted (else left for zod
 * to name). A repeated parameter or a malformed %-escape (URLSearchParams would write U+FFFD) is invalid.
 */
export function queryParams(operation: RestOperation, query: string): Record<string, unknown> {
  const raw: Record<string, string> = {};
  for (const pair of query ? query.split('&') : []) {
    if (!pair) continue;
    const equals = pair.indexOf('=');
    const name = decoded((equals === -1 ? pair : pair.slice(0, equals)).replace(/\+/g, ' '), 'query', 'query parameter name');
    const value = equals === -1 ? '' : decoded(pair.slice(equals + 1).replace(/\+/g, ' '), name, 'query parameter');
    if (name === '__proto__') continue;
    if (Object.hasOwn(raw, name)) throw invalidParams([{ field: name, description: 'must be given once' }]);
    raw[name] = value;
  }
  const params = withJsonNames(operation, raw) as Record<string, unknown>;
  for (const name of Object.keys(params)) {
    const type = Object.hasOwn(QUERY_TYPES, name) ? QUERY_TYPES[name] : undefined;
    const text = params[name] as string;
    if (type === 'integer' && INTEGER.test(text)) params[name] = Number(text);
    else if (type === 'boolean' && (text === 'true' || text === 'false')) params[name] = text === 'true';
  }
  return params;
}
