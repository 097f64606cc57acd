// Each promise of packages/wire/README.md, stated as a property over generated input. The
// README's tables of single conversions are held by the example tests beside each converter.
import { readFileSync } from 'node:fs';
import type { ModelMessage } from 'ai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { promptSeenByModel } from '../test/ai-model.js';
import { transcript } from '../test/arbitraries.js';
import { equivalent, inlineDataUrls, openAIChatVisible } from '../test/normalise.js';
// Not exported: the README promises its format in the messages, which the test checks.
import { formatPath } from './errors.js';
import {
  type AiSdkModelMessageParam,
  assistantMessage,
  checkTranscript,
  fromModelMessages,
  fromOpenAIChat,
  ImageMediaTypeSchema,
  isJsonValue,
  JsonValueSchema,
  MAX_JSON_DEPTH,
  type Message,
  MessageSchema,
  type OpenAIChatMessageParam,
  parseMessage,
  parseMessages,
  StreamEventSchema,
  textOf,
  toModelMessages,
  toOpenAIChat,
  toolResult,
  toolResults,
  toolUses,
  userMessage,
  WireError,
} from './index.js';

/** What a call threw (`undefined` when it returned), never rethrown. */
function outcome(fn: () => unknown): unknown {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error;
  }
}

/** `depth` arrays and objects, each inside the last (built without recursion). */
function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = i % 2 ? { k: value } : [value];
  return value;
}

const FOUR = ImageMediaTypeSchema.options;
const canonical = transcript({ toolResultImages: true, dataUrls: true });

describe('README: the message model', () => {
  const blockOfEveryType = fc.constantFrom(
    { type: 'text', text: 't' },
    { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
    { type: 'tool_result', tool_use_id: 'a', content: 'r' },
    { type: 'tool_use', id: 'a', name: 'f', input: {} },
    { type: 'thinking', thinking: 't', signature: 's' },
    { type: 'redacted_thinking', data: 'd' },
  );
  const allowed = {
    user: ['text', 'image', 'tool_result'],
    assistant: ['text', 'tool_use', 'thinking', 'redacted_thinking'],
  };

  it('a user message holds text, image and tool_result blocks; an assistant message text, tool_use, thinking and redacted_thinking', () => {
    fc.assert(
      fc.property(fc.constantFrom('user', 'assistant'), blockOfEveryType, (role, block) => {
        const accepted = outcome(() => parseMessage({ role, content: [block] })) === undefined;
        expect(accepted).toBe(allowed[role].includes(block.type));
        expect(MessageSchema.safeParse({ role, content: [block] }).success).toBe(accepted);
      }),
      { numRuns: 50 },
    );
  });

  it('tool_use id and name, and tool_result tool_use_id, must be non-empty', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2 }), fc.string({ maxLength: 2 }), (id, name) => {
        const use = outcome(() =>
          parseMessage({ role: 'assistant', content: [{ type: 'tool_use', id, name, input: 1 }] }),
        );
        expect(use === undefined).toBe(id !== '' && name !== '');
        const result = outcome(() =>
          parseMessage({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id }] }),
        );
        expect(result === undefined).toBe(id !== '');
      }),
      { numRuns: 100 },
    );
  });

  it("`content: 'hi'` is accepted and held as [{ type: 'text', text: 'hi' }]", () => {
    fc.assert(
      fc.property(fc.constantFrom('user', 'assistant'), fc.string(), (role, text) => {
        expect(parseMessage({ role, content: text })).toEqual({
          role,
          content: [{ type: 'text', text }],
        });
      }),
      { numRuns: 100 },
    );
  });

  it('thinking and redacted_thinking survive parse → JSON.stringify → parse byte for byte', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.string({ unit: 'binary' }),
        fc.string({ unit: 'binary' }),
        (thinking, signature, data) => {
          const message = {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking, signature },
              { type: 'redacted_thinking', data },
            ],
          };
          const again = parseMessage(JSON.parse(JSON.stringify(parseMessage(message))));
          expect(again).toEqual(message);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a JsonValue survives JSON.stringify → JSON.parse unchanged (a -0 comes back as 0)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue({ noUnicodeString: false }), (a, b) => {
        for (const value of [a, b]) {
          expect(isJsonValue(value)).toBe(true);
          const back = JSON.parse(JSON.stringify(value));
          // toEqual treats -0 and 0 as different; compare through a replacer that maps -0 to 0.
          expect(back).toEqual(
            JSON.parse(JSON.stringify(value, (_, v) => (Object.is(v, -0) ? 0 : v))),
          );
        }
      }),
      { numRuns: 200 },
    );
  });

  it('JsonValueSchema names the first offending sub-path, and agrees with isJsonValue', () => {
    const poison = fc.constantFrom<unknown>(
      undefined,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      new Date(0),
      new Map(),
      () => 1,
      1n,
    );
    const key = fc.string({ minLength: 1, maxLength: 3 }).filter((k) => k !== '__proto__');
    const step = fc.oneof(fc.nat({ max: 2 }), key);
    fc.assert(
      fc.property(fc.array(step, { maxLength: 6 }), poison, (path, bad) => {
        // Build the value from the leaf up, so `path` leads to the one bad leaf.
        let value: unknown = bad;
        for (const s of [...path].reverse()) {
          if (typeof s === 'number') value = [...Array.from({ length: s }, () => 0), value];
          else value = { [s]: value };
        }
        expect(isJsonValue(value)).toBe(false);
        const issue = JsonValueSchema.safeParse(value).error?.issues[0];
        expect(issue?.path).toEqual(path);
        expect(issue?.message).toMatch(/^expected a JSON value: /);
      }),
      { numRuns: 200 },
    );
  });

  it(`every entry point accepts a value nested at most MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) deep and refuses a deeper one with the same message`, () => {
    const reason = `expected a JSON value: it is nested deeper than ${MAX_JSON_DEPTH} arrays and objects`;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: MAX_JSON_DEPTH - 3, max: MAX_JSON_DEPTH + 3 }),
          fc.integer({ min: 0, max: 5_000 }),
        ),
        (depth) => {
          const input = nested(depth);
          const ok = depth <= MAX_JSON_DEPTH;
          const use = [
            { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input }] },
          ];
          const checks: Array<() => unknown> = [
            () => parseMessages(use),
            () => toOpenAIChat(use as Message[]),
            () => toModelMessages(use as Message[]),
            () =>
              fromModelMessages([
                {
                  role: 'assistant',
                  content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'f', input }],
                },
              ]),
            () =>
              fromOpenAIChat([
                {
                  role: 'assistant',
                  tool_calls: [
                    {
                      id: 'a',
                      type: 'function',
                      // Written by hand: JSON.stringify itself recurses.
                      function: {
                        name: 'f',
                        arguments:
                          depth > 1000
                            ? '['.repeat(depth) + ']'.repeat(depth)
                            : JSON.stringify(input),
                      },
                    },
                  ],
                },
              ]),
          ];
          expect(isJsonValue(input)).toBe(ok);
          expect(JsonValueSchema.safeParse(input).success).toBe(ok);
          expect(
            StreamEventSchema.safeParse({
              type: 'interrupt-raised',
              toolCallId: 'a',
              kind: 'k',
              payload: input,
            }).success,
          ).toBe(ok);
          for (const check of checks) {
            const error = outcome(check);
            if (ok) expect(error).toBeUndefined();
            else {
              expect(WireError.is(error) && error.code).toBe('invalid');
              expect((error as Error).message).toContain(reason);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a base64 image is accepted exactly when its media type is one of the four, also inside a tool result, and every accepted one round-trips through both converters', () => {
    const mediaType = fc.oneof(
      fc.constantFrom(...FOUR),
      fc.constantFrom('IMAGE/PNG', 'image/png;name=a.png', 'image/svg+xml', 'application/pdf', ''),
      fc.string(),
    );
    fc.assert(
      fc.property(mediaType, fc.base64String(), fc.boolean(), (media_type, data, inResult) => {
        const image = { type: 'image', source: { type: 'base64', media_type, data } };
        const messages = inResult
          ? [
              { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] },
              {
                role: 'user',
                content: [{ type: 'tool_result', tool_use_id: 'a', content: [image] }],
              },
            ]
          : [{ role: 'user', content: [image] }];
        const parsed = outcome(() => parseMessages(messages));
        const accepted = (FOUR as readonly string[]).includes(media_type);
        expect(parsed === undefined).toBe(accepted);
        if (!accepted) {
          expect(WireError.is(parsed) && parsed.code).toBe('invalid');
          expect((parsed as WireError).path.at(-1)).toBe('media_type');
          return;
        }
        const transcript = parseMessages(messages);
        expect(fromModelMessages(toModelMessages(transcript)).messages).toEqual(transcript);
        // OpenAI chat carries no image inside a tool result (its own table row).
        if (!inResult)
          expect(fromOpenAIChat(toOpenAIChat(transcript)).messages).toEqual(transcript);
      }),
      { numRuns: 200 },
    );
  });

  it('unknown fields of a block are not kept', () => {
    const extra = fc.dictionary(
      fc.constantFrom('cache_control', 'citations', 'extra', 'x'),
      fc.jsonValue({ maxDepth: 1 }),
      { maxKeys: 2 },
    );
    fc.assert(
      fc.property(canonical, extra, (messages, fields) => {
        const decorated = messages.map((m) => ({
          ...m,
          content: m.content.map((block) => ({ ...fields, ...block })),
        }));
        expect(parseMessages(decorated)).toEqual(messages);
      }),
      { numRuns: 100 },
    );
  });
});

describe('README: parsing and errors', () => {
  it('parseMessages accepts exactly the transcripts whose tool ids pair up (each tool_use id once; each tool_result answers an earlier tool_use, at most once; a waiting tool_use is fine)', () => {
    const id = fc.constantFrom('a', 'b', 'c');
    const block = fc.oneof(
      id.map((i) => ({ type: 'tool_use' as const, id: i, name: 'f', input: null })),
      id.map((i) => ({ type: 'tool_result' as const, tool_use_id: i })),
    );
    fc.assert(
      fc.property(fc.array(fc.array(block, { maxLength: 3 }), { maxLength: 5 }), (turns) => {
        // A model of the rules, message by message.
        const used = new Set<string>();
        const open = new Set<string>();
        let expected = true;
        const messages = turns.map((blocks) => {
          const role = blocks.some((b) => b.type === 'tool_use') ? 'assistant' : 'user';
          return { role, blocks };
        });
        for (const { blocks } of messages) {
          for (const b of blocks) {
            if (b.type === 'tool_use') {
              if (used.has(b.id)) expected = false;
              used.add(b.id);
              open.add(b.id);
            } else if (!open.delete(b.tool_use_id)) expected = false;
          }
        }
        // Mixed blocks cannot form one message; split them by role, keeping order.
        const input = messages.flatMap(({ blocks }) =>
          blocks.map((b) => ({ role: b.type === 'tool_use' ? 'assistant' : 'user', content: [b] })),
        );
        const error = outcome(() => parseMessages(input));
        expect(error === undefined).toBe(expected);
        if (!expected) expect(WireError.is(error) && error.code).toBe('invalid_transcript');
      }),
      { numRuns: 300 },
    );
  });

  /** A thunk that prints as `label` in a counterexample. */
  const thunk = (label: string, make: () => unknown) =>
    Object.assign(make, { [fc.toStringMethod]: () => label });
  const hostile = fc.constantFrom(
    thunk('a revoked proxy', () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }),
    thunk('a message whose content getter throws', () =>
      Object.defineProperty({ role: 'user' }, 'content', {
        enumerable: true,
        get() {
          throw new Error('boom');
        },
      }),
    ),
    thunk('a cyclic message', () => {
      const cyclic: Record<string, unknown> = { role: 'user' };
      cyclic.content = [cyclic];
      return cyclic;
    }),
    thunk('a message with a non-plain prototype', () =>
      Object.assign(Object.create({ polluted: true }) as object, { role: 'user', content: [] }),
    ),
    thunk(
      'an array proxy whose every read throws',
      () =>
        new Proxy([], {
          get: () => {
            throw new TypeError('trap');
          },
        }),
    ),
    thunk('a symbol', () => Symbol('s')),
    thunk('a function', () => () => 1),
  );
  // Thunks, not values: fast-check itself must not touch a revoked proxy or a throwing getter.
  const junk: fc.Arbitrary<() => unknown> = fc.oneof(
    fc.anything().map((value) => thunk(fc.stringify(value), () => value)),
    hostile,
    fc
      .array(
        fc.oneof(
          fc.anything().map((value) => thunk(fc.stringify(value), () => value)),
          hostile,
        ),
        { maxLength: 3 },
      )
      .map((parts) =>
        thunk(`[${parts.map(String).join(', ')}]`, () => parts.map((make) => make())),
      ),
    fc
      .record({
        role: fc.constantFrom('user', 'assistant', 'tool', 'system', 'robot'),
        content: fc.oneof(fc.string(), fc.array(fc.anything(), { maxLength: 3 }), fc.anything()),
      })
      .map((message) => thunk(`[${fc.stringify(message)}]`, () => [message])),
    hostile.map((make) =>
      thunk(`[{ role: 'user', content: [${String(make)}] }]`, () => [
        { role: 'user', content: [make()] },
      ]),
    ),
  );
  const entryPoints: Record<string, (input: unknown) => unknown> = {
    parseMessage,
    parseMessages,
    checkTranscript: (input) => checkTranscript(input as Message[]),
    toOpenAIChat: (input) => toOpenAIChat(input as Message[]),
    toModelMessages: (input) => toModelMessages(input as Message[]),
    fromOpenAIChat: (input) => fromOpenAIChat(input as OpenAIChatMessageParam[]),
    fromModelMessages: (input) => fromModelMessages(input as AiSdkModelMessageParam[]),
    'toOpenAIChat (options)': (input) => toOpenAIChat([], input as never),
    'toModelMessages (options)': (input) => toModelMessages([], input as never),
  };

  it('every function that checks or converts input throws only WireErrors, for any input; isJsonValue never throws', () => {
    fc.assert(
      fc.property(junk, (make) => {
        for (const [name, entry] of Object.entries(entryPoints)) {
          const error = outcome(() => entry(make()));
          if (error !== undefined && !WireError.is(error)) {
            throw new Error(`${name} threw ${String(error)}`);
          }
        }
        expect(typeof isJsonValue(make())).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  });

  it('a WireError has a code of the closed union, a path, the original error as cause, and a message naming the path', () => {
    fc.assert(
      fc.property(junk, (make) => {
        for (const [name, entry] of Object.entries(entryPoints)) {
          const error = outcome(() => entry(make()));
          if (error === undefined) continue;
          if (!WireError.is(error)) throw error;
          expect(['invalid', 'invalid_transcript', 'unsupported']).toContain(error.code);
          // A schema failure keeps the zod error, a failed read the exception it raised.
          if (name.startsWith('parseMessage') && error.code === 'invalid') {
            expect(error.cause).toBeDefined();
          }
          expect(error.name).toBe('WireError');
          expect(error.path.every((k) => typeof k === 'string' || typeof k === 'number')).toBe(
            true,
          );
          const named = ['message', 'messages', 'options'].map(
            (root) => `[@x/wire] ${formatPath(root, error.path)}: `,
          );
          expect(named.some((prefix) => error.message.startsWith(prefix))).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('README: helpers', () => {
  it('toolUses / toolResults give those blocks in order; textOf joins the text blocks only', () => {
    fc.assert(
      fc.property(canonical, (messages) => {
        for (const message of messages) {
          expect(toolUses(message)).toEqual(message.content.filter((b) => b.type === 'tool_use'));
          expect(toolResults(message)).toEqual(
            message.content.filter((b) => b.type === 'tool_result'),
          );
          expect(textOf(message)).toBe(
            message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
          );
        }
      }),
      { numRuns: 100 },
    );
  });

  it('toolResult sets is_error only when true; userMessage / assistantMessage turn strings into text blocks and keep blocks', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.oneof(
          fc.string(),
          fc.string().map((t) => [{ type: 'text' as const, text: t }]),
        ),
        fc.option(fc.boolean(), { nil: undefined }),
        fc.array(fc.string(), { maxLength: 3 }),
        (id, content, isError, parts) => {
          const block = toolResult(id, content, isError === undefined ? {} : { isError });
          expect(block).toEqual({
            type: 'tool_result',
            tool_use_id: id,
            content,
            ...(isError ? { is_error: true } : {}),
          });
          const text = parts.map((t) => ({ type: 'text', text: t }));
          expect(userMessage(...parts, block)).toEqual({ role: 'user', content: [...text, block] });
          expect(assistantMessage(...parts)).toEqual({ role: 'assistant', content: text });
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('README: stream events', () => {
  it('every event of the table parses as itself; anything else is refused', () => {
    const json = fc.jsonValue({ maxDepth: 2 });
    const event = fc.oneof(
      fc.record({ type: fc.constant('text-delta'), text: fc.string() }),
      fc.record({
        type: fc.constant('tool-progress'),
        toolCallId: fc.string(),
        message: fc.string(),
      }),
      fc.record({
        type: fc.constant('plan-updated'),
        todos: fc.array(
          fc.record({
            id: fc.string({ minLength: 1 }),
            content: fc.string(),
            status: fc.constantFrom('pending', 'in_progress', 'completed'),
          }),
        ),
      }),
      fc.record({
        type: fc.constant('interrupt-raised'),
        toolCallId: fc.string(),
        kind: fc.string(),
        payload: json,
      }),
      fc.record({ type: fc.constant('interrupt-resolved'), toolCallId: fc.string(), result: json }),
      fc.record(
        {
          type: fc.constant('turn-ended'),
          reason: fc.constantFrom('completed', 'suspended', 'cancelled', 'failed'),
          error: fc.string(),
        },
        { requiredKeys: ['type', 'reason'] },
      ),
    );
    fc.assert(
      fc.property(event, fc.string(), (e, other) => {
        expect(StreamEventSchema.parse(e)).toEqual(e);
        const known = [
          'text-delta',
          'tool-progress',
          'plan-updated',
          'interrupt-raised',
          'interrupt-resolved',
          'turn-ended',
        ];
        if (!known.includes(other))
          expect(StreamEventSchema.safeParse({ ...e, type: other }).success).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

describe('README: converters', () => {
  it('@x/wire depends on zod only (no runtime dependency on openai or ai)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(Object.keys(pkg.dependencies)).toEqual(['zod']);
  });

  it('from… returns a parsed transcript: what it gives back passes parseMessages unchanged', () => {
    fc.assert(
      fc.property(canonical, (messages) => {
        for (const back of [
          fromOpenAIChat(toOpenAIChat(equivalent(messages).map(dropResultImages))).messages,
          fromModelMessages(toModelMessages(messages)).messages,
        ]) {
          expect(parseMessages(back)).toEqual(back);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('to… writes the system prompt first; from… collects every system (and developer) message into system, joined by a blank line, wherever it stood', () => {
    fc.assert(
      fc.property(
        canonical,
        fc.array(fc.tuple(fc.nat(), fc.string(), fc.boolean()), { maxLength: 3 }),
        (messages, systems) => {
          const chat = toOpenAIChat(messages.map(dropResultImages));
          const model = toModelMessages(messages);
          const insert = <T>(list: T[], make: (text: string, developer: boolean) => T) => {
            const out = [...list];
            for (const [at, text, developer] of systems)
              out.splice(at % (out.length + 1), 0, make(text, developer));
            return out;
          };
          // Insertions go in at their positions in turn; the order of the texts is the order they end up in.
          const withChat = insert<OpenAIChatMessageParam>(chat, (content, developer) => ({
            role: developer ? 'developer' : 'system',
            content,
          }));
          const expectedChat = withChat.flatMap((m) =>
            m.role === 'system' || m.role === 'developer' ? [m.content as string] : [],
          );
          const backChat = fromOpenAIChat(withChat);
          expect(backChat.system).toBe(expectedChat.length ? expectedChat.join('\n\n') : undefined);
          const withModel = insert<ModelMessage>(model as ModelMessage[], (content) => ({
            role: 'system',
            content,
          }));
          const expectedModel = withModel.flatMap((m) => (m.role === 'system' ? [m.content] : []));
          expect(fromModelMessages(withModel).system).toBe(
            expectedModel.length ? expectedModel.join('\n\n') : undefined,
          );
          const written = toOpenAIChat(messages.map(dropResultImages), { system: 'S' });
          expect(written[0]).toEqual({ role: 'system', content: 'S' });
          expect(toModelMessages(messages, { system: 'S' })[0]).toEqual({
            role: 'system',
            content: 'S',
          });
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a user message whose text came before its tool results comes back with the results first', () => {
    fc.assert(
      fc.property(canonical, (messages) => {
        // Move each user message's tool results after its other blocks.
        const shuffled = messages.map(
          (m): Message =>
            m.role === 'user'
              ? {
                  role: 'user',
                  content: [
                    ...m.content.filter((b) => b.type !== 'tool_result'),
                    ...m.content.filter((b) => b.type === 'tool_result'),
                  ],
                }
              : m,
        );
        expect(fromModelMessages(toModelMessages(shuffled)).messages).toEqual(
          inlineDataUrls(equivalent(messages)),
        );
      }),
      { numRuns: 100 },
    );
  });

  it('OpenAI chat: from(to(x)) gives back x less exactly the rows of its table (thinking and is_error dropped, text moved before calls, -0 → 0, base64 data: URLs spelled as base64)', () => {
    fc.assert(
      fc.property(transcript({ toolResultImages: false, dataUrls: true }), (messages) => {
        expect(fromOpenAIChat(toOpenAIChat(messages)).messages).toEqual(
          openAIChatVisible(inlineDataUrls(messages)),
        );
      }),
      { numRuns: 150 },
    );
  });

  it('AI SDK: from(to(x)) gives back x, also through JSON, except base64 data: URLs spelled as base64', () => {
    fc.assert(
      fc.property(canonical, (messages) => {
        const written = toModelMessages(messages);
        const expected = inlineDataUrls(equivalent(messages));
        expect(fromModelMessages(written).messages).toEqual(expected);
        expect(
          fromModelMessages(JSON.parse(JSON.stringify(written)) as AiSdkModelMessageParam[])
            .messages,
        ).toEqual(JSON.parse(JSON.stringify(expected)));
      }),
      { numRuns: 150 },
    );
  });

  it('AI SDK: a relative image URL is refused as unsupported, in a user message and inside a tool result', () => {
    const relative = fc.constantFrom('a.png', '/a.png', './x/y.gif', '//host', '');
    fc.assert(
      fc.property(relative, fc.boolean(), (url, inResult) => {
        const image = { type: 'image' as const, source: { type: 'url' as const, url } };
        const messages: Message[] = inResult
          ? [
              { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] },
              {
                role: 'user',
                content: [{ type: 'tool_result', tool_use_id: 'a', content: [image] }],
              },
            ]
          : [{ role: 'user', content: [image] }];
        const error = outcome(() => toModelMessages(messages));
        expect(WireError.is(error) && error.code).toBe('unsupported');
        expect((error as WireError).path.at(-1)).toBe('url');
      }),
      { numRuns: 20 },
    );
  });

  it('AI SDK: generateText takes whatever toModelMessages writes, and thinking reaches the model byte for byte', async () => {
    // The AI SDK refuses a tool call without its result, so the transcripts are complete.
    const complete = canonical.filter((messages) => messages.at(-1)?.role === 'user');
    await fc.assert(
      fc.asyncProperty(complete, async (messages) => {
        const prompt = await promptSeenByModel(toModelMessages(messages) as ModelMessage[]);
        const sent = prompt.flatMap((m) => (m.role === 'assistant' ? m.content : []));
        const thinking = messages.flatMap((m) =>
          m.role === 'assistant' ? m.content.filter((b) => b.type === 'thinking') : [],
        );
        expect(
          sent.flatMap((p) =>
            p.type === 'reasoning' && p.providerOptions?.anthropic?.signature !== undefined
              ? [
                  {
                    type: 'thinking',
                    thinking: p.text,
                    signature: p.providerOptions.anthropic.signature,
                  },
                ]
              : [],
          ),
        ).toEqual(thinking);
      }),
      { numRuns: 60 },
    );
  });
});

/** OpenAI chat refuses images inside tool results (a row of its table): keep them out. */
function dropResultImages(message: Message): Message {
  if (message.role === 'assistant') return message;
  return {
    role: 'user',
    content: message.content.map((b) =>
      b.type === 'tool_result' && Array.isArray(b.content)
        ? { ...b, content: b.content.filter((part) => part.type === 'text') }
        : b,
    ),
  };
}
