/**
 * The error writer's old address, kept for the card route (lib/express/agent-card-route.ts): the
 * writer lives in lib/context/reply.ts, the rendering in lib/protocol/error-body.ts.
 */
export { DEFAULT_REALM, rememberChallenge, writeError } from '../context/reply.js';
export { httpStatusOf, renderError, statusBody, type ErrorBinding, type StatusOverride } from '../protocol/error-body.js';
