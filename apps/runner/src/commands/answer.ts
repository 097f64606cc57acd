import { parseArgs } from 'node:util';
import { optionLabel, type ResumeAnswer, shownOptions } from '@x/askuser';
import { quorumText } from '@x/executive';
import { usageError } from '../errors.js';
// Not the executive's index: a command pays only for the modules it runs.
import { answerBatch, answer as answerOne, refusal } from '../executive/record-answer.js';
import { osUserName } from '../terminal/os-user.js';
import { plural } from '../terminal/output.js';
import { type Command, type Context, globalOptions, withStorage } from './command.js';

function parseAnswer(
  values: {
    accept?: string | undefined;
    arguments?: string | undefined;
    option?: string | undefined;
    decline?: boolean | undefined;
    cancel?: boolean | undefined;
  },
  rest: string[],
): { answer?: ResumeAnswer; option?: number } {
  const given = [
    values.accept !== undefined,
    values.arguments !== undefined,
    values.option !== undefined,
    values.decline,
    values.cancel,
  ].filter(Boolean);
  if (given.length !== 1) {
    throw usageError(
      'give exactly one of --accept TEXT, --arguments JSON, --option N, --decline [TEXT], --cancel',
    );
  }
  if (values.accept !== undefined) return { answer: { action: 'accept', content: values.accept } };
  // A gated call approved with edited arguments: the accepting answer's content is them.
  if (values.arguments !== undefined) {
    return { answer: { action: 'accept', content: values.arguments } };
  }
  if (values.decline) return { answer: { action: 'decline', content: rest.join(' ') } };
  if (values.cancel) return { answer: { action: 'cancel', content: '' } };
  const option = Number(values.option);
  if (!Number.isInteger(option) || option < 1) throw usageError('--option takes a number from 1');
  return { option };
}

async function readBatch(
  ctx: Context,
  file: string,
): Promise<Array<{ token: string; answer: ResumeAnswer }>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await ctx.readInput(file));
  } catch (error) {
    throw usageError(`cannot read batch file ${file}: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed))
    throw usageError('the batch file must hold a JSON array of {token, action, content}');
  return parsed.map((entry, i) => {
    const e = entry as Record<string, unknown>;
    if (typeof e?.token !== 'string')
      throw usageError(`batch entry ${i}: "token" must be a string`);
    return {
      token: e.token,
      answer: { action: e.action, content: e.content ?? '' } as ResumeAnswer,
    };
  });
}

/**
 * Who the CLI answers as: the OS user, through the channel `cli`, with no audience check.
 * It is an administrator's tool: whoever holds the database URL can bypass any check.
 */
const cliAnswerer = () => ({ answeredBy: osUserName(), signedInWith: 'os-user', channel: 'cli' });

/** `runner answer TOKEN ...` and `runner answer --batch FILE`. */
export const answer: Command = async (ctx, args) => {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...globalOptions,
      accept: { type: 'string' },
      arguments: { type: 'string' },
      option: { type: 'string' },
      decline: { type: 'boolean' },
      cancel: { type: 'boolean' },
      batch: { type: 'string' },
    },
    allowPositionals: true,
  });
  if (values.batch !== undefined) {
    if (positionals.length) throw usageError('--batch takes no TOKEN');
    const batch = await readBatch(ctx, values.batch);
    return withStorage(ctx, async (storage) => {
      await answerBatch(storage, batch, cliAnswerer());
      ctx.out.record(
        { type: 'answered', tokens: batch.map((b) => b.token) },
        `answered ${plural(batch.length, 'question')}`,
      );
      return 0;
    });
  }
  const [token, ...rest] = positionals;
  if (!token)
    throw usageError(`answer needs a TOKEN (see ${ctx.out.command('paused-states list')})`);
  const parsed = parseAnswer(values, rest);
  return withStorage(ctx, async (storage) => {
    let given = parsed.answer;
    if (!given) {
      const pending = await storage
        .pauses()
        .getByToken(token)
        .catch((error: unknown) => refusal(storage, error));
      const options = (shownOptions(pending.options) ?? []).map(optionLabel);
      const chosen = options[(parsed.option ?? 0) - 1];
      if (chosen === undefined) {
        throw usageError(
          options.length
            ? `--option ${parsed.option}: the question has options 1 to ${options.length}: ${options.map((o, i) => `${i + 1}) ${o}`).join(', ')}`
            : '--option: this question has no options; use --accept TEXT',
        );
      }
      given = { action: 'accept', content: chosen };
    }
    const outcome = await answerOne(storage, token, given, cliAnswerer());
    const partial = quorumText(outcome);
    ctx.out.record(
      {
        type: partial ? 'approval-recorded' : 'answered',
        token,
        answer: given,
        ...(outcome.quorum ? { quorum: outcome.quorum } : {}),
      },
      `${partial ? 'recorded' : 'answered'} ${token}: ${given.action}${given.content ? ` "${given.content}"` : ''}${partial ? `; ${partial}` : ''}`,
    );
    return 0;
  });
};
