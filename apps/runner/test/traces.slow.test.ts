import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracesWanted } from '../src/config/index.js';
import { fixture, startFakeProvider } from './fixtures/fake-provider.js';
import { dataDirs, runCli } from './run-cli.js';
import { storageTargets } from './storage-targets.js';

const dataDir = dataDirs();
// The trace context is kept with the question and the run on either storage.
const targets = await storageTargets();

/** A span as OTLP/HTTP JSON carries it, with its attributes flattened. */
interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  links?: Array<{ traceId: string; spanId: string }>;
  attributes: Record<string, unknown>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };

/** An OTLP/HTTP receiver: collects the spans POSTed to /v1/traces (JSON). */
function receiver(): { server: Server; spans: ReceivedSpan[]; endpoint: () => string } {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      expect(req.url).toBe('/v1/traces');
      expect(req.headers['content-type']).toBe('application/json');
      const sent = JSON.parse(body) as {
        resourceSpans: Array<{
          scopeSpans: Array<{
            spans: Array<
              Omit<ReceivedSpan, 'attributes'> & {
                attributes?: Array<{ key: string; value: OtlpValue }>;
              }
            >;
          }>;
        }>;
      };
      for (const resource of sent.resourceSpans) {
        for (const scope of resource.scopeSpans) {
          for (const span of scope.spans) {
            const attributes: Record<string, unknown> = {};
            for (const { key, value } of span.attributes ?? []) {
              attributes[key] = value.stringValue ?? value.boolValue ?? Number(value.intValue);
            }
            spans.push({ ...span, attributes });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  return {
    server,
    spans,
    endpoint: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  };
}

describe('traces across the human wait', { timeout: 120_000 }, () => {
  const otlp = receiver();
  beforeAll(() => new Promise<void>((resolve) => otlp.server.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => otlp.server.close(() => resolve())));

  for (const target of targets) {
    it.skipIf(target.skip)(
      `exec, answer and wake as three processes make one trace: the turn, its wait, the resume (${target.name})`,
      async () => {
        const where = await target.setUp();
        otlp.spans.length = 0;
        const env = {
          ...where.env,
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint(),
          OTEL_SERVICE_NAME: 'runner-test',
        };
        const cli = (args: string[]) => runCli([...args, ...where.args, '--json'], { env });
        try {
          const exec = await cli(['exec', 'Plan a trip', '--conversation', 'traced']);
          expect(exec.code, exec.stderr).toBe(0);
          const token = exec.events.find((e) => e.type === 'run-waiting')?.token as string;
          // Nothing of the trace context shows in the output.
          expect(exec.stdout).not.toContain('traceparent');
          expect((await cli(['answer', token, '--option', '1'])).code).toBe(0);
          const wake = await cli(['wake', '--once']);
          expect(wake.code, wake.stderr).toBe(0);

          // Each process flushed its spans before it exited.
          const byName = (name: string) => otlp.spans.filter((s) => s.name === name);
          const [turn, resumed, ...more] = byName('invoke_agent').sort((a, b) =>
            a.startTimeUnixNano.localeCompare(b.startTimeUnixNano),
          );
          expect(more).toEqual([]);
          const [wait] = byName('await_human');
          expect(turn && resumed && wait).toBeTruthy();
          if (!turn || !resumed || !wait) return;
          expect(turn.attributes).toMatchObject({
            'gen_ai.operation.name': 'invoke_agent',
            'gen_ai.conversation.id': 'traced',
            'gen_ai.provider.name': 'scripted',
            'gen_ai.request.model': 'trip',
          });
          // One trace: the wait is a child of the turn that asked (recorded by `answer`, from the
          // question's creation), linked to it, and the resume continues the run's trace.
          expect(new Set(otlp.spans.map((s) => s.traceId))).toEqual(new Set([turn.traceId]));
          expect(wait.parentSpanId).toBe(turn.spanId);
          expect(wait.links).toEqual([expect.objectContaining({ spanId: turn.spanId })]);
          expect(resumed.parentSpanId).toBe(turn.spanId);
          expect(wait.attributes).toMatchObject({
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'ask_user',
            'gen_ai.conversation.id': 'traced',
            'runner.question.kind': 'ask_user',
            'runner.question.priority': 1,
            'runner.question.audience_size': 0,
            'runner.question.outcome': 'accept',
          });
          expect(typeof wait.attributes['gen_ai.tool.call.id']).toBe('string');
          // The question's tool call has its execute_tool span in the turn that asked.
          const asking = byName('execute_tool ask_user').filter(
            (s) => s.parentSpanId === turn.spanId,
          );
          expect(asking).toEqual([
            expect.objectContaining({
              attributes: {
                'gen_ai.operation.name': 'execute_tool',
                'gen_ai.tool.name': 'ask_user',
                'gen_ai.tool.call.id': wait.attributes['gen_ai.tool.call.id'],
              },
            }),
          ]);
          // From the question's creation (as the turn suspended) to the answer, before the resume.
          expect(BigInt(wait.startTimeUnixNano)).toBeGreaterThan(BigInt(turn.startTimeUnixNano));
          expect(BigInt(wait.startTimeUnixNano)).toBeLessThan(BigInt(wait.endTimeUnixNano));
          expect(BigInt(wait.endTimeUnixNano)).toBeLessThan(BigInt(resumed.startTimeUnixNano));
          // A model call per step, each a child of its turn.
          const chats = byName('chat trip');
          expect(chats.map((c) => c.parentSpanId).sort()).toEqual(
            [turn.spanId, resumed.spanId].sort(),
          );
          expect(chats[0]?.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat' });
        } finally {
          await where.drop();
        }
      },
    );
  }

  it('runs each plain tool call in an execute_tool span of its turn', async () => {
    const exec = await runCli(
      [
        'exec',
        'Plan a trip',
        '--model',
        'scripted:tools',
        '--conversation',
        'tooled',
        '--data',
        dataDir(),
        '--log-format',
        'json',
      ],
      { env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint() } },
    );
    expect(exec.code, exec.stderr).toBe(0);
    const turn = otlp.spans.find(
      (s) => s.name === 'invoke_agent' && s.attributes['gen_ai.conversation.id'] === 'tooled',
    );
    expect(turn).toBeTruthy();
    // Every log line about the run names its trace.
    const lines = exec.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { conversationId?: string; traceId?: string });
    const aboutRun = lines.filter((line) => line.conversationId === 'tooled');
    // Its model calls, tool progress, plan and reply, and the run's end.
    expect(aboutRun.length).toBeGreaterThan(5);
    for (const line of aboutRun) expect(line.traceId).toBe(turn?.traceId);
    const tools = otlp.spans.filter(
      (s) => s.traceId === turn?.traceId && s.name.startsWith('execute_tool '),
    );
    // The script's calls: a plan, the weather and a sum in one message, the plan again.
    expect(tools.map((s) => s.name).sort()).toEqual([
      'execute_tool add',
      'execute_tool get_weather',
      'execute_tool update_plan',
      'execute_tool update_plan',
    ]);
    for (const span of tools) {
      expect(span.parentSpanId).toBe(turn?.spanId);
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': span.name.slice('execute_tool '.length),
      });
      expect(String(span.attributes['gen_ai.tool.call.id'])).toMatch(/^toolu_/);
    }
  });

  it("gives each model call's span the tokens its provider reported (Anthropic and OpenAI streams)", async () => {
    const fake = await startFakeProvider();
    try {
      fake.queue.push(
        { sse: fixture('anthropic-final.sse') },
        { sse: fixture('openai-final.sse') },
      );
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint(),
        ANTHROPIC_API_KEY: 'test-anthropic-key',
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_AUTH_TOKEN: undefined,
        OPENAI_API_KEY: 'test-openai-key',
        OPENAI_BASE_URL: `${fake.url}/v1`,
        RUNNER_MODEL: undefined,
        RUNNER_THINKING: undefined,
      };
      const data = dataDir();
      for (const [model, conversation] of [
        ['anthropic:claude-x', 'usage-anthropic'],
        ['openai:gpt-x', 'usage-openai'],
      ] as const) {
        const exec = await runCli(
          ['exec', 'Plan a trip', '--model', model, '--conversation', conversation, '--data', data],
          { env },
        );
        expect(exec.code, exec.stderr).toBe(0);
      }
    } finally {
      await fake.close();
    }
    const chat = (name: string, conversation: string) => {
      const turn = otlp.spans.find(
        (s) => s.name === 'invoke_agent' && s.attributes['gen_ai.conversation.id'] === conversation,
      );
      return otlp.spans.find((s) => s.name === name && s.parentSpanId === turn?.spanId);
    };
    expect(chat('chat claude-x', 'usage-anthropic')?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-x',
      'gen_ai.usage.input_tokens': 1204,
      'gen_ai.usage.output_tokens': 12,
    });
    expect(chat('chat gpt-x', 'usage-openai')?.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': 1310,
      'gen_ai.usage.output_tokens': 9,
    });
  });

  it("a resumed delegation's model calls, the workers' and the parent's, are children of its invoke_agent", async () => {
    const data = dataDir();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint() };
    const cli = (args: string[]) =>
      runCli([...args, '--data', data, '--model', 'scripted:team', '--json'], { env });
    const exec = await cli(['exec', 'Plan a Lisbon trip', '--conversation', 'traced-team']);
    expect(exec.code, exec.stderr).toBe(0);
    const waiting = exec.events.find((e) => e.type === 'run-waiting');
    const questions = waiting?.questions as Array<{ worker: string; token: string }>;
    const token = (worker: string) => questions.find((q) => q.worker === worker)?.token ?? '';
    // One batch answers both: its statement returns the questions their waits are traced from.
    const batch = path.join(tmpdir(), `traced-team-${process.pid}.json`);
    writeFileSync(
      batch,
      JSON.stringify([
        { token: token('w1'), action: 'accept', content: '100 to 200 EUR' },
        { token: token('w2'), action: 'accept', content: 'evening' },
      ]),
    );
    expect((await cli(['answer', '--batch', batch])).code).toBe(0);
    const wake = await cli(['wake', '--once']);
    expect(wake.code, wake.stderr).toBe(0);
    expect(wake.events.some((e) => e.type === 'run-completed')).toBe(true);

    const turns = otlp.spans
      .filter(
        (s) =>
          s.name === 'invoke_agent' && s.attributes['gen_ai.conversation.id'] === 'traced-team',
      )
      .sort((a, b) => a.startTimeUnixNano.localeCompare(b.startTimeUnixNano));
    expect(turns).toHaveLength(2);
    const [asked, resumed] = turns;
    expect(resumed?.parentSpanId).toBe(asked?.spanId);
    const chats = otlp.spans.filter((s) => s.name === 'chat team' && s.traceId === asked?.traceId);
    // exec: the parent's call and w1..w3's first steps (w3 twice); the wake: w1's and w2's
    // last steps, then the parent's.
    const byParent = (turn: ReceivedSpan | undefined) =>
      chats.filter((c) => c.parentSpanId === turn?.spanId).length;
    expect(byParent(resumed)).toBe(3);
    expect(byParent(asked) + byParent(resumed)).toBe(chats.length);
    // The workers' waits are children of the turn that asked, in the run's trace.
    const waits = otlp.spans.filter(
      (s) => s.name === 'await_human' && s.attributes['gen_ai.conversation.id'] === 'traced-team',
    );
    expect(waits.map((w) => [w.traceId, w.parentSpanId])).toEqual([
      [asked?.traceId, asked?.spanId],
      [asked?.traceId, asked?.spanId],
    ]);
  });

  it('with OTEL_* unset loads nothing of OpenTelemetry, and the CLI says the same as with traces on', async () => {
    // A module hook of the spawned CLI reports every @opentelemetry module it loads, on stderr.
    const dir = mkdtempSync(path.join(tmpdir(), 'otel-probe-'));
    const hooks = path.join(dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      `import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes('/@opentelemetry/')) writeSync(2, 'otel-probe: ' + resolved.url + '\\n');
  return resolved;
}
`,
    );
    const probe = path.join(dir, 'probe.mjs');
    writeFileSync(
      probe,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const unset = Object.fromEntries(
      Object.keys(process.env)
        .filter((name) => name.startsWith('OTEL_'))
        .map((name) => [name, undefined]),
    );
    const run = (conversation: string, env: Record<string, string | undefined>) =>
      runCli(
        ['exec', 'Plan a trip', '--conversation', conversation, '--data', dataDir(), '--json'],
        { env: { ...unset, NODE_OPTIONS: `--import ${pathToFileURL(probe).href}`, ...env } },
      );
    const before = otlp.spans.length;
    const off = await run('untraced', { OTEL_SERVICE_NAME: 'runner' });
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).not.toContain('otel-probe:');
    expect(otlp.spans.length).toBe(before);
    // The probe works: with an endpoint the same command loads the SDK.
    const on = await run('traced-too', { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint() });
    expect(on.code, on.stderr).toBe(0);
    expect(on.stderr).toContain('otel-probe:');
    // The same events, with the same fields, either way.
    const shape = (events: Array<Record<string, unknown>>) =>
      events.map((e) => [e.type, Object.keys(e).sort().join(',')]);
    expect(shape(on.events)).toEqual(shape(off.events));
  });

  it('sends nothing with OTEL_SDK_DISABLED=true, and asks for traces only as OTEL_* says', async () => {
    const before = otlp.spans.length;
    const exec = await runCli(
      ['exec', 'Plan a trip', '--conversation', 'quiet', '--data', dataDir()],
      {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint(), OTEL_SDK_DISABLED: 'true' },
      },
    );
    expect(exec.code).toBe(0);
    expect(otlp.spans.length).toBe(before);
    const endpoint = 'http://127.0.0.1:4318';
    expect(tracesWanted({})).toBe(false);
    expect(tracesWanted({ OTEL_SERVICE_NAME: 'runner' })).toBe(false);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toBe(true);
    expect(tracesWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint })).toBe(true);
    expect(
      tracesWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'none' }),
    ).toBe(false);
  });
});
