// The approval center's HTTP API: a zod schema of each request body the server accepts (and
// its type), and the type of each response and live event.
export * from './bodies.js';
export * from './policies.js';
export type * from './responses.js';
