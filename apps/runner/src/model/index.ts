import type { ThinkingConfigParam } from '@anthropic-ai/sdk/resources/messages';
import type { Model } from '../agent/model-port.js';
import { usageError } from '../errors.js';
import { AnthropicModel } from './anthropic.js';
import { retryPolicyFromEnv } from './call-retry.js';
import { OpenAIModel } from './openai.js';
import { ScriptedModel } from './scripted.js';

export type { Model, ModelRequest, ModelRetry, ToolSpec } from '../agent/model-port.js';
export { ModelError, type ModelErrorCode } from '../errors.js';

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw usageError(`${name} must be a whole number ≥ 1, not "${raw}"`);
  return value;
}

function thinkingFromEnv(
  env: NodeJS.ProcessEnv,
  maxTokens: number,
): ThinkingConfigParam | undefined {
  const raw = env.RUNNER_THINKING;
  if (raw === undefined || raw === '' || raw === 'off') return undefined;
  if (raw === 'adaptive') return { type: 'adaptive' };
  const budget = Number(raw);
  if (!Number.isInteger(budget) || budget < 1024 || budget >= maxTokens) {
    throw usageError(
      `RUNNER_THINKING must be "adaptive", "off" or a token budget from 1024 to below RUNNER_MAX_TOKENS (${maxTokens}), not "${raw}"`,
    );
  }
  return { type: 'enabled', budget_tokens: budget };
}

const KNOWN =
  'use scripted:trip, scripted:tools, scripted:siblings, scripted:team, anthropic:<model-id> or openai:<model-id>';

/**
 * The model for an id like `scripted:trip`, `anthropic:claude-sonnet-4-5` or `openai:gpt-5`.
 * Keys and settings come from the environment and are checked here, before any work is
 * done: a missing key is a usage error naming the variable.
 */
export function modelFromId(id: string, env: NodeJS.ProcessEnv = process.env): Model {
  const [provider, name = ''] = id.split(/:(.*)/s);
  if (provider === 'scripted') return new ScriptedModel(name || 'trip');
  if (provider !== 'anthropic' && provider !== 'openai')
    throw usageError(`unknown model "${id}": ${KNOWN}`);
  if (!name.trim()) throw usageError(`model "${id}" names no model: ${KNOWN}`);
  if (provider === 'anthropic') {
    const apiKey = env.ANTHROPIC_API_KEY;
    if (!apiKey)
      throw usageError(`ANTHROPIC_API_KEY is not set: export your Anthropic API key to use ${id}`);
    const maxTokens = wholeNumber(env, 'RUNNER_MAX_TOKENS', 8192);
    return new AnthropicModel(name, {
      apiKey,
      baseURL: env.ANTHROPIC_BASE_URL || undefined,
      maxTokens,
      thinking: thinkingFromEnv(env, maxTokens),
      retry: retryPolicyFromEnv(env),
    });
  }
  const baseURL = env.OPENAI_BASE_URL || undefined;
  const apiKey = env.OPENAI_API_KEY || undefined;
  // A local OpenAI-compatible server (OPENAI_BASE_URL) usually takes no key.
  if (!apiKey && !baseURL) {
    throw usageError(
      `OPENAI_API_KEY is not set: export your OpenAI API key to use ${id} (or set OPENAI_BASE_URL for a local server)`,
    );
  }
  return new OpenAIModel(name, { apiKey, baseURL, retry: retryPolicyFromEnv(env) });
}
