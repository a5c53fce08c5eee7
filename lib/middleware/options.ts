/** Options helpers of the middleware factories, on top of the shared parser in lib/options. */
import { z } from 'zod';

export { optionsError, parseArgument, parseOptions } from '../options.js';

/** A zod check for a function option, with a message saying what was expected. */
export function fn<T extends (...args: never[]) => unknown>(what: string) {
  return z.custom<T>((value) => typeof value === 'function', { error: `must be ${what}` });
}
