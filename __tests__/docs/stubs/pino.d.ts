// The members of pino (not a dependency of the kit) that the docs' recipes use.
export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}
declare function pino(): Logger;
export default pino;
