/** How to fix a bad agent card, field by field: the hint an options error adds after what zod found. */

export interface ProblemKind {
  readonly code: string;
  readonly missing: boolean;
}

/** A fix hint for the problem at `path` below one option, or undefined when there is nothing to add. */
export type OptionFixes = (path: readonly PropertyKey[], problem: ProblemKind) => string | undefined;

const SKILL_EXAMPLE = "e.g. skills: [{ id: 'chat', name: 'Chat', description: 'Answers questions', tags: ['chat'] }]";
const SCHEME_SHAPE =
  "each scheme is an object naming its kind (ProtoJSON), e.g. bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } }; " +
  'the kinds: apiKeySecurityScheme { location, name }, httpAuthSecurityScheme { scheme }, oauth2SecurityScheme { flows }, ' +
  'openIdConnectSecurityScheme { openIdConnectUrl }, mtlsSecurityScheme {}';

/** Hints by top-level card field; `rest` is the path below it. */
const BY_FIELD: Record<string, (rest: readonly PropertyKey[], problem: ProblemKind) => string | undefined> = {
  name: () => "the agent's display name, e.g. name: 'Travel agent'",
  description: () => "what the agent does, in a sentence, e.g. description: 'Books flights'",
  version: () => "the agent's own version (not the protocol's), e.g. version: '1.0.0'",
  capabilities: (rest) => (rest.length === 0 ? 'e.g. capabilities: { streaming: true } ({} states none)' : undefined),
  defaultInputModes: () => "the media types the agent reads, e.g. defaultInputModes: ['text/plain']",
  defaultOutputModes: () => "the media types the agent writes, e.g. defaultOutputModes: ['text/plain']",
  skills: (rest, problem) => {
    if (rest.length === 0) return `the card needs at least one skill, ${SKILL_EXAMPLE} (defineAgentCard() adds one from the name and description)`;
    const field = rest[1];
    if (field === 'tags') return "each skill needs at least one tag (a keyword), e.g. tags: ['travel']";
    if (field === 'id') return "a short stable identifier, e.g. id: 'book-flight'";
    if (rest.length === 1 && problem.code === 'invalid_type') return `a skill is an object, ${SKILL_EXAMPLE}`;
    return undefined;
  },
  securitySchemes: (rest) => (rest.length <= 2 ? SCHEME_SHAPE : undefined),
  supportedInterfaces: () => 'leave it out: the router fills it in from where it is mounted',
  provider: () => "e.g. provider: { organization: 'Example Inc.', url: 'https://example.com' }",
};

/** The fix for a problem at `path` below the `agentCard` option (or defineAgentCard's argument). */
export const agentCardFix: OptionFixes = (path, problem) => {
  const [field, ...rest] = path;
  return typeof field === 'string' && Object.hasOwn(BY_FIELD, field) ? BY_FIELD[field](rest, problem) : undefined;
};
