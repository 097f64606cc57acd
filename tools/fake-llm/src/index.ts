/**
 * @packageDocumentation
 * A local model server for the examples' tests: the Anthropic Messages API and OpenAI
 * Chat Completions, answered by a script as JSON or streamed. No network, no key.
 */

export { tripBooker } from './booking.js';
export { PAYMENTS, payingAgent, paymentsAgent } from './payments.js';
export {
  promisedOutput,
  type ReadmeCommand,
  type ReadmeRun,
  type ReadmeRunOptions,
  type ReadmeScript,
  type ReadmeStep,
  readmeFakeScript,
  readmeScript,
  runReadme,
} from './readme.js';
export { PROGRAMS_TEST_TIMEOUT_MS, type ProgramRun, runProgram } from './run.js';
export { isScriptName, type NamedScript, namedScripts, type ScriptName } from './scripts.js';
export { type FakeLlm, type RecordedRequest, startFakeLlm } from './server.js';
export { printedAsShown, readmeTranscripts, type ShownRun } from './transcript.js';
export { tripPlanner } from './trip.js';
export {
  type Action,
  type Protocol,
  readTurn,
  type Script,
  type ToolCallSeen,
  type Turn,
} from './turn.js';
