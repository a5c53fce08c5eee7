export { getA2ARequestContext, tryGetA2ARequestContext } from './carrier.js';
export type { A2ACaller, A2ARequestContext, A2ATraceContext } from './carrier.js';
export { contributeA2AState, readA2AState } from './request-state.js';
export type { A2ARequestState } from './request-state.js';
