import { rmSync } from 'node:fs';
import type { ResumeAnswer } from '@x/askuser';
import { checkTranscript, textOf, toolUses } from '@x/wire';
import { leasePolicyFromEnv, questionPolicyFromEnv } from '../config/executive-policy.js';
import { setting, VARIABLES } from '../config/index.js';
import { answer, type RunResult, resumeNext, startRun } from '../executive/index.js';
import { modelFromId } from '../model/index.js';
import { openStorage } from '../storage/index.js';
import { shellQuote } from '../terminal/invocation.js';
import type { Output } from '../terminal/output.js';

/** The answers the demo's operator gives, in order. */
const OPERATOR: Array<{ say: string; answer: (options: unknown) => ResumeAnswer }> = [
  {
    say: 'picks option 2',
    answer: (o) => ({ action: 'accept', content: (o as string[])[1] ?? 'Kyoto' }),
  },
  { say: 'types', answer: () => ({ action: 'accept', content: '5' }) },
  { say: 'approves', answer: () => ({ action: 'accept', content: 'Approved.' }) },
];

/** The `answer` options that give `given`: `--option N` for one of the offered options. */
function answerFlags(given: ResumeAnswer, options: unknown): string {
  const at = Array.isArray(options) ? options.indexOf(given.content) : -1;
  return at >= 0 ? `--option ${at + 1}` : `--accept ${shellQuote(given.content)}`;
}

/**
 * `runner demo`: the scripted trip planner, unattended, start to finish: exec suspends on a
 * question, an operator answers, wake resumes — three times — on the embedded default (or
 * DATABASE_URL), in a fresh data folder. `command` prints a step as a whole command line
 * that runs against that folder.
 */
export async function runDemo(
  out: Output,
  dataDir: string,
  command: (line: string) => string,
): Promise<number> {
  rmSync(dataDir, { recursive: true, force: true });
  const storage = await openStorage({
    dataDir,
    databaseUrl: setting(VARIABLES.DATABASE_URL),
    command: 'demo',
    log: (line) => out.note(line),
  });
  try {
    const model = modelFromId('scripted:trip');
    const observer = { event: out.event.bind(out) };
    const conversationId = `demo-${Date.now().toString(36)}`;
    const questionPolicy = questionPolicyFromEnv();
    out.note(`storage: ${storage.kind} (${storage.where})`);
    out.note(`$ ${command(`exec "Plan me a short trip" --conversation ${conversationId}`)}`);
    let result: RunResult = await startRun(
      storage,
      model,
      'Plan me a short trip',
      conversationId,
      observer,
      { questionPolicy },
    );
    for (const step of OPERATOR) {
      if (result.status !== 'waiting') break;
      const pending = await storage.pauses().getByToken(result.token);
      out.record(
        {
          type: 'run-waiting',
          token: result.token,
          question: pending.question,
          options: pending.options,
        },
        `\n? ${pending.question}${Array.isArray(pending.options) ? `  [${(pending.options as string[]).join(' / ')}]` : ''}\n  waiting — token ${result.token}`,
      );
      const given = step.answer(pending.options);
      await answer(storage, result.token, given);
      out.note(
        `$ ${command(`answer ${result.token} ${answerFlags(given, pending.options)}`)}   # the operator ${step.say}`,
      );
      out.note(`$ ${command('wake --once')}`);
      const resumed = await resumeNext(storage, {
        modelFor: () => model,
        observerFor: () => observer,
        policy: leasePolicyFromEnv(),
        questionPolicy,
      });
      if (!resumed) throw new Error('the answered run was not resumed');
      const { outcome } = resumed;
      if (outcome.status !== 'completed' && outcome.status !== 'waiting') {
        throw new Error(`the resumed run ended ${outcome.status}`);
      }
      result = outcome;
    }
    if (result.status !== 'completed') throw new Error(`the demo ended ${result.status}`);
    checkTranscript(result.messages);
    const calls = result.messages.flatMap((m) => toolUses(m)).length;
    out.record(
      { type: 'run-completed', conversationId, messages: result.messages },
      `\n✓ completed: ${result.messages.length} messages, ${calls} tool calls, each answered exactly once.\n  last word: "${textOf(result.messages.at(-1) ?? { role: 'assistant', content: [] })}"\n\nNext: ${out.command('chat')} (interactive), ${out.command('--help')}`,
    );
    return 0;
  } finally {
    await storage.close();
  }
}
