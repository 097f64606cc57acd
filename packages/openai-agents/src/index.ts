/**
 * @packageDocumentation
 * `@x/openai-agents`: the OpenAI Agents SDK on the approval plane. A run's tool approvals
 * ({@link startAgentRun}) become durable questions, its `RunState` is kept server-side as the
 * run's continuation, and the worker resumes it exactly once ({@link openaiAgentsKind}).
 */

export {
  type AgentRunOptions,
  type AnyAgent,
  type OpenAIAgentsKindOptions,
  openaiAgentsKind,
  startAgentRun,
} from './kind.js';
export {
  type AgentRunIds,
  OPENAI_AGENTS_KIND,
  STOP_VERSION,
  type Stop,
  type StopQuestion,
} from './stop.js';
