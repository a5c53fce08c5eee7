/** jose, loaded at the first token verified or card signed: an app doing neither skips its ~80 modules (20-50 ms). */
import type * as Jose from 'jose';

let jose: Promise<typeof Jose> | undefined;

export function loadJose(): Promise<typeof Jose> {
  jose ??= import('jose');
  return jose;
}
