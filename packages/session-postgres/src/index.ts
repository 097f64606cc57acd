/**
 * @packageDocumentation
 * Filled in by its own issue; see the README.
 */
export {};
