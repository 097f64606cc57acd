import type { ThinkingConfigParam } from '@anthropic-ai/sdk/resources/messages';
import type { Model } from '@x/executive';
import { type Env, invalidSetting, setting, VARIABLES } from '../config/index.js';
import { usageError } from '../errors.js';
import { AnthropicModel } from './anthropic.js';
import { retryPolicyFromEnv } from './call-retry.js';
import { OpenAIModel } from './openai.js';
import { ScriptedModel } from './scripted.js';

export type { Model, ModelRequest, ModelRetry, ToolSpec } from '@x/executive';
export { ModelError, type ModelErrorCode } from '../errors.js';

function thinkingFrom(env: Env | undefined, maxTokens: number): ThinkingConfigParam | undefined {
  const thinking = setting(VARIABLES.RUNNER_THINKING, env);
  if (thinking === 'off') return undefined;
  if (thinking === 'adaptive') return { type: 'adaptive' };
  if (thinking >= maxTokens) {
    throw invalidSetting(
      VARIABLES.RUNNER_THINKING,
      String(thinking),
      `"adaptive", "off" or a token budget from 1024 to below RUNNER_MAX_TOKENS (${maxTokens})`,
    );
  }
  return { type: 'enabled', budget_tokens: thinking };
}

const KNOWN =
  'use scripted:trip, scripted:tools, scripted:siblings, scripted:team, anthropic:<model-id> or openai:<model-id>';

/**
 * The model for an id like `scripted:trip`, `anthropic:claude-sonnet-4-5` or `openai:gpt-5`.
 * Keys and settings come from the environment and are checked here, before any work is
 * done: a missing key is a usage error naming the variable.
 */
export function modelFromId(id: string, env?: Env): Model {
  const [provider, name = ''] = id.split(/:(.*)/s);
  if (provider === 'scripted') return new ScriptedModel(name || 'trip');
  if (provider !== 'anthropic' && provider !== 'openai')
    throw usageError(`unknown model "${id}": ${KNOWN}`);
  if (!name.trim()) throw usageError(`model "${id}" names no model: ${KNOWN}`);
  if (provider === 'anthropic') {
    const apiKey = setting(VARIABLES.ANTHROPIC_API_KEY, env);
    if (!apiKey)
      throw usageError(`ANTHROPIC_API_KEY is not set: export your Anthropic API key to use ${id}`);
    const maxTokens = setting(VARIABLES.RUNNER_MAX_TOKENS, env);
    return new AnthropicModel(name, {
      apiKey,
      baseURL: setting(VARIABLES.ANTHROPIC_BASE_URL, env),
      maxTokens,
      thinking: thinkingFrom(env, maxTokens),
      retry: retryPolicyFromEnv(env),
    });
  }
  const baseURL = setting(VARIABLES.OPENAI_BASE_URL, env);
  const apiKey = setting(VARIABLES.OPENAI_API_KEY, env);
  // A local OpenAI-compatible server (OPENAI_BASE_URL) usually takes no key.
  if (!apiKey && !baseURL) {
    throw usageError(
      `OPENAI_API_KEY is not set: export your OpenAI API key to use ${id} (or set OPENAI_BASE_URL for a local server)`,
    );
  }
  return new OpenAIModel(name, { apiKey, baseURL, retry: retryPolicyFromEnv(env) });
}
