/** Each jest project really runs the app and the library on the Express major it names. */
import express from 'express';

declare const EXPRESS_MAJOR: 4 | 5;

it(`runs on Express ${EXPRESS_MAJOR}`, () => {
  // Express 5 removed the bundled query middleware; Express 4 still exports it.
  expect(typeof (express as unknown as { query?: unknown }).query).toBe(EXPRESS_MAJOR === 4 ? 'function' : 'undefined');
});
