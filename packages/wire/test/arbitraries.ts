// fast-check arbitraries of transcripts in our canonical form, shared by the converter tests.
import fc from 'fast-check';
import type {
  AssistantBlock,
  ImageBlock,
  JsonValue,
  Message,
  TextBlock,
  ToolResultBlock,
  UserBlock,
} from '../src/index.js';

const text: fc.Arbitrary<TextBlock> = fc.record({ type: fc.constant('text'), text: fc.string() });

const webImage: fc.Arbitrary<ImageBlock> = fc.oneof(
  fc.record({
    type: fc.constant('image'),
    source: fc.record({
      type: fc.constant('base64'),
      media_type: fc.constantFrom('image/png', 'image/jpeg', 'image/gif', 'image/webp'),
      data: fc.base64String(),
    }),
  }),
  fc.record({
    type: fc.constant('image'),
    source: fc.record({ type: fc.constant('url'), url: fc.webUrl() }),
  }),
);

// `data:` URLs in url sources: base64 ones of the four types (which converters may spell as
// base64 sources) and others that must stay URLs.
const dataUrlImage: fc.Arbitrary<ImageBlock> = fc
  .tuple(
    fc.constantFrom(
      'data:image/png;base64,',
      'data:image/webp;base64,',
      'data:image/svg+xml;base64,',
      'data:image/png;name=a.png;base64,',
      'data:text/plain,',
    ),
    fc.base64String(),
  )
  .map(([prefix, data]) => ({ type: 'image', source: { type: 'url', url: prefix + data } }));

const images = (options: TranscriptOptions) =>
  options.dataUrls ? fc.oneof(webImage, dataUrlImage) : webImage;

type ToolUseSpec = { type: 'tool_use'; name: string; input: JsonValue };

const assistantPart: fc.Arbitrary<Exclude<AssistantBlock, { type: 'tool_use' }> | ToolUseSpec> =
  fc.oneof(
    text,
    fc.record({
      type: fc.constant('thinking'),
      thinking: fc.string({ unit: 'binary' }),
      signature: fc.base64String(),
    }),
    fc.record({ type: fc.constant('redacted_thinking'), data: fc.base64String() }),
    fc.record({
      type: fc.constant('tool_use'),
      name: fc.string({ minLength: 1 }),
      input: fc.jsonValue() as fc.Arbitrary<JsonValue>,
    }),
  );

export interface TranscriptOptions {
  /** Whether tool results may hold images (OpenAI chat cannot carry them). */
  toolResultImages: boolean;
  /** Whether url images may hold `data:` URLs as well as web URLs. Default: false. */
  dataUrls?: boolean;
}

function resultSpec(options: TranscriptOptions) {
  const item = options.toolResultImages ? fc.oneof(text, images(options)) : text;
  // `content` absent and `is_error: false` are generated too: they must come back as their
  // equivalents ('' and no is_error), see `equivalent` in the tests.
  return fc.record(
    {
      content: fc.oneof(fc.string(), fc.array(item, { maxLength: 3 })),
      is_error: fc.boolean(),
    },
    { requiredKeys: [] },
  );
}

/**
 * Transcripts in canonical form: user and assistant alternate, starting with a user; each
 * user message after an assistant message starts with one tool_result for each of that
 * message's tool_uses (in order), then text and images; tool_use ids are unique. The last
 * message may be an assistant message whose tool calls are still unanswered (a suspension).
 */
export function transcript(options: TranscriptOptions): fc.Arbitrary<Message[]> {
  const image = images(options);
  const turn = fc.record({
    assistant: fc.array(assistantPart, { maxLength: 5 }),
    results: fc.array(resultSpec(options), { maxLength: 5 }),
    extras: fc.array(fc.oneof(text, image), { maxLength: 3 }),
  });
  return fc
    .record({
      first: fc.array(fc.oneof(text, image), { maxLength: 3 }),
      turns: fc.array(turn, { maxLength: 5 }),
      suspended: fc.boolean(),
    })
    .map(({ first, turns, suspended }) => {
      const messages: Message[] = [{ role: 'user', content: first }];
      let next = 0;
      turns.forEach((t, index) => {
        const ids: string[] = [];
        messages.push({
          role: 'assistant',
          content: t.assistant.map((part): AssistantBlock => {
            if (part.type !== 'tool_use') return part;
            const id = `toolu_${next++}`;
            ids.push(id);
            return { type: 'tool_use', id, name: part.name, input: part.input };
          }),
        });
        if (suspended && index === turns.length - 1) return;
        const results = ids.map(
          (id, k): ToolResultBlock => ({
            type: 'tool_result',
            tool_use_id: id,
            ...t.results[k],
          }),
        );
        const user: UserBlock[] = [...results, ...t.extras];
        messages.push({ role: 'user', content: user });
      });
      return messages;
    });
}
