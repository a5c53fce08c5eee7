/** The logger the kit writes to: pino-compatible method names, `(obj, msg)` or `(msg)`. */
export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

const noop = (): void => {};

/** Default: warnings and errors to the console, nothing else. Pass your pino instance instead. */
export const consoleLogger: Logger = {
  debug: noop,
  info: noop,
  // eslint-disable-next-line no-console
  warn: (obj, msg) => console.warn('[a2a-express-kit]', msg ?? '', obj),
  // eslint-disable-next-line no-console
  error: (obj, msg) => console.error('[a2a-express-kit]', msg ?? '', obj),
};

/** Discards everything (tests, benchmarks). */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
