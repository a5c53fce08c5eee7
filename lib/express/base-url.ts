/** Where the router is reached from a request: its base URL. */
import type { IncomingMessage } from 'node:http';
import { mountPathOf, originOf } from '../context/node-request.js';

/** Origin plus mount path, as this request reached the router (Express, Connect or plain Node). */
export const baseUrlOf = (req: IncomingMessage): string => originOf(req) + mountPathOf(req);
