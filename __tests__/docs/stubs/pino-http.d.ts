// The members of pino-http (not a dependency of the kit) that the docs' recipes use.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
declare module 'http' {
  interface IncomingMessage {
    id: string | number | object;
    log: Logger;
  }
}
declare function pinoHttp(options?: { genReqId?: (req: IncomingMessage, res: ServerResponse) => string | number | object }): RequestHandler;
export default pinoHttp;
