// The API contract, and identity (OpenID Connect, roles); the handler moves here from `runner serve` next.
export * from './contract/index.js';
export * from './errors.js';
export * from './identity/index.js';
