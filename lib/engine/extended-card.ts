/**
 * GetExtendedAgentCard: the card an authenticated caller gets when the agent declares one; the
 * interfaces it leaves out are the public card's.
 */
import type { A2ACaller } from '../context/carrier.js';
import { A2AError } from '../errors.js';
import type { AgentCardInput } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';
import type { ExtendedAgentCardProvider } from './request-handler-options.js';

export async function extendedAgentCard(
  card: AgentCard,
  provider: ExtendedAgentCardProvider | undefined,
  caller: A2ACaller,
): Promise<AgentCardInput> {
  if (card.capabilities.extendedAgentCard !== true) {
    throw new A2AError('UnsupportedOperation', 'This agent does not declare an extended agent card');
  }
  if (!caller.authenticated) throw new A2AError('Unauthenticated', 'The extended agent card requires an authenticated caller');
  if (!provider) throw new A2AError('ExtendedAgentCardNotConfigured');
  const extended = typeof provider === 'function' ? await provider(caller) : provider;
  return extended.supportedInterfaces ? extended : { ...extended, supportedInterfaces: card.supportedInterfaces };
}
