/** Matches a part's media type against the modes an agent card declares (with type/* and * /* wildcards). */
export class MediaTypeFilter {
  readonly #exact = new Set<string>();
  readonly #prefixes = new Set<string>();
  #any = false;

  constructor(modes: readonly string[]) {
    for (const mode of modes) {
      const normalized = mode.split(';')[0].trim().toLowerCase();
      if (normalized === '*/*' || normalized === '*') this.#any = true;
      else if (normalized.endsWith('/*')) this.#prefixes.add(normalized.slice(0, -1));
      else this.#exact.add(normalized);
    }
    // A card that declares no input modes restricts nothing.
    if (modes.length === 0) this.#any = true;
  }

  accepts(mediaType: string): boolean {
    if (this.#any) return true;
    const normalized = mediaType.split(';')[0].trim().toLowerCase();
    if (this.#exact.has(normalized)) return true;
    const slash = normalized.indexOf('/');
    return slash > 0 && this.#prefixes.has(normalized.slice(0, slash + 1));
  }
}
