/**
 * The "did you mean" hint for a mistyped nested option finds the known keys through every zod
 * wrapper the factories' schemas use, read with zod's public accessors (no `_zod.def`).
 */
import { z } from 'zod';
import { parseOptions } from '../../lib/options';

const zodVersion = (require('zod/package.json') as { version: string }).version;

const inner = (key: string) => z.strictObject({ [key]: z.string() });

const schema = z.strictObject({
  plain: inner('alpha'),
  optional: inner('bravo').optional(),
  defaulted: inner('charlie').default({ charlie: 'x' }),
  nullable: inner('delta').nullable(),
  prefaulted: inner('echo').prefault({ echo: 'x' }),
  frozen: inner('foxtrot').readonly(),
  either: z.union([z.boolean(), inner('golf')]),
  piped: inner('hotel').transform((value) => value),
});

describe(`option hints through zod ${zodVersion}'s public accessors`, () => {
  it.each([
    ['plain', 'alpha'],
    ['optional', 'bravo'],
    ['defaulted', 'charlie'],
    ['nullable', 'delta'],
    ['prefaulted', 'echo'],
    ['frozen', 'foxtrot'],
    ['either', 'golf'],
    ['piped', 'hotel'],
  ])('a typo under %s is answered with the known key %s', (option, key) => {
    const typo = `${key}x`;
    // The other required options are missing too: the one error lists them all, the hint among them.
    expect(() => parseOptions('factory', schema, { [option]: { [typo]: 'x' } })).toThrow(
      `option "${option}.${typo}" is unknown (did you mean "${option}.${key}"?)`,
    );
  });

  it('names the top-level keys for a typo at the root', () => {
    expect(() => parseOptions('factory', schema, { plian: {} })).toThrow('option "plian" is unknown (did you mean "plain"?)');
  });
});
