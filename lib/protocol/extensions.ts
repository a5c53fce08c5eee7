/** A2A-Extensions (§3.2.6, §4.6): activate what the card declares, ignore the rest, refuse a missing required one. */
import { A2AError } from '../errors.js';
import type { AgentCard } from './schemas.js';

export class ExtensionNegotiator {
  readonly #declared: ReadonlySet<string>;
  readonly #required: readonly string[];

  constructor(card: AgentCard) {
    const extensions = card.capabilities.extensions ?? [];
    this.#declared = new Set(extensions.flatMap((e) => (e.uri ? [e.uri] : [])));
    this.#required = extensions.filter((e) => e.required && e.uri).map((e) => e.uri!);
  }

  /** The activated extension URIs for a request's `A2A-Extensions` header value. */
  activate(header: string | undefined): string[] {
    if (this.#declared.size === 0) return [];
    const requested = header
      ? header
          .split(',')
          .map((uri) => uri.trim())
          .filter(Boolean)
      : [];
    const missing = this.#required.filter((uri) => !requested.includes(uri));
    if (missing.length > 0) {
      throw new A2AError(
        'ExtensionSupportRequired',
        `This agent requires the extension(s) ${missing.join(', ')}; list them in the A2A-Extensions header`,
        {
          metadata: { extensions: missing.join(',') },
        },
      );
    }
    return [...new Set(requested.filter((uri) => this.#declared.has(uri)))];
  }
}
