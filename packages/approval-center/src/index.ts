// For now the package is its API contract; the handler moves here from `runner serve` next.
export * from './contract/index.js';
