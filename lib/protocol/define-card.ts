/** defineAgentCard(): a valid agent card from a name and a description, every problem reported at once. */
import { z } from 'zod';
import { parseOptions } from '../options.js';
import type { AgentCardInput } from './card.js';
import { AgentCardSchema, AgentInterfaceSchema, type AgentSkill } from './schemas.js';

/** A skill as defineAgentCard() takes it: `id` and `tags` may be left out. */
export interface AgentSkillDefinition {
  /** A short stable identifier. Default: the name, lowercased, with dashes (`'Book a flight'` → `'book-a-flight'`). */
  readonly id?: string;
  readonly name: string;
  readonly description: string;
  /** Keywords; at least one. Default: `[id]`. */
  readonly tags?: readonly [string, ...string[]];
  /** Example prompts. */
  readonly examples?: readonly string[];
  /** Media types this skill reads, when they differ from the card's defaultInputModes. */
  readonly inputModes?: readonly string[];
  /** Media types this skill writes, when they differ from the card's defaultOutputModes. */
  readonly outputModes?: readonly string[];
  readonly securityRequirements?: AgentSkill['securityRequirements'];
}

/** An agent card with only `name` and `description` required; other fields are kept as written (ProtoJSON shape). */
export interface AgentCardDefinition extends Partial<Omit<AgentCardInput, 'name' | 'description' | 'skills'>> {
  readonly name: string;
  readonly description: string;
  /** At least one. Default: one skill named and described as the agent. */
  readonly skills?: readonly [AgentSkillDefinition, ...AgentSkillDefinition[]];
}

const AGENT_CARD_DEFAULTS = Object.freeze({
  version: '1.0.0',
  capabilities: Object.freeze({ streaming: true }),
  defaultInputModes: Object.freeze(['text/plain']),
  defaultOutputModes: Object.freeze(['text/plain']),
});

// Strict, unlike the router's: a misspelt field is named here instead of replaced by a default.
const schema = z.strictObject({ agentCard: AgentCardSchema.extend({ supportedInterfaces: z.array(AgentInterfaceSchema).optional() }).strict() });

const slug = (text: unknown): string =>
  (typeof text === 'string' ? text : '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'default';

function skillOf(skill: AgentSkillDefinition): AgentSkill {
  if (typeof skill !== 'object' || skill === null) return skill;
  const id = skill.id ?? slug(skill.name);
  const { examples, inputModes, outputModes, ...rest } = skill;
  return {
    ...rest,
    id,
    tags: skill.tags ? [...skill.tags] : [id],
    ...(examples ? { examples: [...examples] } : {}),
    ...(inputModes ? { inputModes: [...inputModes] } : {}),
    ...(outputModes ? { outputModes: [...outputModes] } : {}),
  };
}

/**
 * A card for createA2ARouter(): `defineAgentCard({ name: 'Travel agent', description: 'Books flights.' })`.
 * Defaults: `version: '1.0.0'`, `capabilities: { streaming: true }`, text/plain modes, one skill from the
 * name and description. Throws an A2AOptionsError listing every problem at once.
 */
export function defineAgentCard(definition: AgentCardDefinition): AgentCardInput {
  const given = (typeof definition === 'object' && definition !== null ? definition : {}) as AgentCardDefinition;
  const skills = given.skills ?? [{ id: slug(given.name), name: given.name, description: given.description }];
  const card = {
    ...given,
    version: given.version ?? AGENT_CARD_DEFAULTS.version,
    capabilities: given.capabilities ?? { ...AGENT_CARD_DEFAULTS.capabilities },
    defaultInputModes: given.defaultInputModes ?? [...AGENT_CARD_DEFAULTS.defaultInputModes],
    defaultOutputModes: given.defaultOutputModes ?? [...AGENT_CARD_DEFAULTS.defaultOutputModes],
    skills: Array.isArray(skills) ? skills.map(skillOf) : skills,
  };
  // Checked here, where the mistake is written, as well as by createA2ARouter.
  parseOptions('defineAgentCard', schema, { agentCard: card });
  return card as AgentCardInput;
}
