#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { isScriptName, namedScripts } from './scripts.js';
import { startFakeLlm } from './server.js';

const usage = `usage: fake-llm [--script NAME]

Serves a scripted model on 127.0.0.1 (Anthropic Messages and OpenAI Chat Completions) until
interrupted, to try the examples without a key. Scripts (default trip):
${Object.entries(namedScripts)
  .map(([name, { summary }]) => `  ${name.padEnd(8)} ${summary}`)
  .join('\n')}
`;

let options: { script: string; help: boolean };
try {
  ({ values: options } = parseArgs({
    options: {
      script: { type: 'string', default: 'trip' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }) as { values: { script: string; help: boolean } });
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n\n${usage}`);
  process.exit(2);
}
if (options.help) {
  process.stdout.write(usage);
  process.exit(0);
}
if (!isScriptName(options.script)) {
  process.stderr.write(`no script named "${options.script}"\n\n${usage}`);
  process.exit(2);
}

const fake = await startFakeLlm(namedScripts[options.script].script);
console.log(`fake model at ${fake.url} (script ${options.script})
  ANTHROPIC_BASE_URL=${fake.url} ANTHROPIC_API_KEY=fake
  OPENAI_BASE_URL=${fake.url}/v1 OPENAI_API_KEY=fake`);
process.on('SIGINT', () => void fake.close().then(() => process.exit(0)));
