// What a model behind the real `ai` package receives for a ModelMessage[], without a network.
import { generateText, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

type Prompt = MockLanguageModelV3['doGenerateCalls'][number]['prompt'];

/**
 * Runs `generateText` over `messages` with a mock model and returns the prompt the model
 * was given (after the AI SDK's own conversion). Every URL counts as supported by the
 * model, so nothing is downloaded.
 */
export async function promptSeenByModel(messages: ModelMessage[]): Promise<Prompt> {
  const model = new MockLanguageModelV3({
    supportedUrls: { '*/*': [/^/] },
    doGenerate: {
      content: [{ type: 'text', text: 'ok' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    },
  });
  await generateText({ model, messages, maxRetries: 0 });
  const call = model.doGenerateCalls[0];
  if (!call) throw new Error('the mock model was not called');
  return call.prompt;
}
