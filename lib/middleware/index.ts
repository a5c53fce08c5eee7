/** The middleware surface: auth, tenant, tracing and security factories, the preset chain, the request-context logger, their options and errors. */
export { a2aAuth, fromRequestUser, fromVerify } from './auth.js';
export type {
  A2AAuthOptions,
  A2AAuthChallengeInput,
  FromRequestUserOptions,
  FromVerifyOptions,
  RequestUserProvider,
  A2AVerifyResult,
} from './auth.js';
export { a2aAuthErrors } from './auth-errors.js';
export type { A2AAuthErrorsOptions } from './auth-errors.js';
export { bearerJwt } from './bearer-jwt.js';
export type { BearerJwtOptions } from './bearer-jwt.js';
export { defineCallerSource, invalidCredentials } from './caller-source.js';
export type { A2ACallerInit, A2ACallerSource } from './caller-source.js';
export { ANONYMOUS_CALLER_PREFIX, createAnonymousCaller, isAnonymousCallerId } from '../context/anonymous.js';
export { a2aTenant, header, pathParam, claim, subdomain, DEFAULT_TENANT_PATTERN } from './tenant.js';
export type { A2ATenantOptions, A2ATenantSource, A2ATenantSourceObject, A2ATenantFunction, SubdomainOptions } from './tenant.js';
export { a2aTracing, parseTraceparent, parseTracestate } from './tracing.js';
export type { A2ATracingOptions, OpenTelemetryApiLike } from './tracing.js';
export { a2aSecurity, A2A_DEFAULT_BODY_LIMIT, A2A_HELMET_PRESET, bodyTooLargeError, parseByteSize, readA2ABodyLimit } from './security.js';
export type { A2ASecurityOptions } from './security.js';
export {
  A2A_MIDDLEWARE_ERRORS,
  A2A_KIT_ERROR_DOMAIN,
  A2AMiddlewareError,
  A2AWiringError,
  buildMiddlewareErrorBody,
  isA2AMiddlewareError,
  sendMiddlewareError,
} from './errors.js';
export type { A2AErrorMode, A2AMiddlewareReason, A2AWiringErrorCode, A2AMiddlewareErrorInit } from './errors.js';
export { a2aMiddlewareKind } from './types.js';
export type { A2AErrorMiddleware, A2AMiddleware, A2AMiddlewareKind, A2AMiddlewareLogger } from './types.js';
export { a2aMiddlewareChain } from './preset.js';
export type { A2AMiddlewareChainOptions } from './preset.js';
export { withRequestContext } from './logger.js';
