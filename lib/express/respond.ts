/** The JSON writer's old address, kept for the card route: it lives in lib/context/reply.ts. */
export { writeJson } from '../context/reply.js';
