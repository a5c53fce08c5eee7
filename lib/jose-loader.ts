/**
 * jose, loaded the first time a token is verified or a card signed: an app that does neither never
 * loads its ~80 modules (about 20-50 ms of start-up, more under a test runner).
 */
import type * as Jose from 'jose';

let jose: Promise<typeof Jose> | undefined;

export function loadJose(): Promise<typeof Jose> {
  jose ??= import('jose');
  return jose;
}
