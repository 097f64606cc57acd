/**
 * @packageDocumentation
 * `@x/executive`: the unattended executive, being extracted from the runner (issue 47). It
 * exports {@link ExecutiveError}, the one error its flows throw, for callers to classify
 * failures by `code`.
 */
export { ExecutiveError, type ExecutiveErrorCode, type ExecutiveErrorOptions } from './errors.js';
