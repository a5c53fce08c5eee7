import type { NextFunction, Request, Response } from 'express';

/**
 * Values a source may answer synchronously or as a promise. Middlewares whose sources answer synchronously (req.user, a header, a plain verify
 * function) then make no promise at all.
 */
export type MaybePromise<T> = T | PromiseLike<T>;

export function isPromiseLike<T>(value: MaybePromise<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/**
 * The tail of a middleware that resolves something per request (auth's caller, the tenant): `resolve`, then `accept` and next(), synchronously when
 * `resolve` answers synchronously. A throw or rejection goes to `reject`. `accept` and `reject` are made once per middleware, so the synchronous path
 * allocates nothing. A throw from next() (the rest of the request) is not caught here: it is not the source's failure.
 */
export function resolveAndContinue<T>(
  resolve: (req: Request) => MaybePromise<T>,
  accept: (req: Request, value: T) => void,
  reject: (error: unknown, req: Request, res: Response, next: NextFunction) => void,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  let value: MaybePromise<T>;
  try {
    value = resolve(req);
  } catch (error) {
    reject(error, req, res, next);
    return;
  }
  if (!isPromiseLike(value)) {
    accept(req, value);
    next();
    return;
  }
  value.then(
    (resolved) => {
      accept(req, resolved);
      next();
    },
    (error: unknown) => reject(error, req, res, next),
  );
}
