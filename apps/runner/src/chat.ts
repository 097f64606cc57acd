import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createSuspension, resolve, type Suspension } from '@x/continuation';
import { Checkpointer, SessionManager } from '@x/session';
import type { Message } from '@x/wire';
import { userMessage } from '@x/wire';
import { type DelegateHandler, runTurn, type TurnObserver } from './agent.js';
import { type Context, workerLabel } from './commands/context.js';
import {
  answerWorker,
  delegateResult,
  runDelegate,
  runWorkers,
  waitingWorkers,
} from './delegate.js';
import { notFoundError, usageError } from './errors.js';
import { createLineReader, type LineReader } from './lines.js';
import { modelFromId } from './model/index.js';
import { answerResult, type HumanAnswer, type Question, questionOf } from './tools.js';

/** A person's reply to a question at the prompt, or undefined to ask again. */
export function parseReply(reply: string, question: Question): HumanAnswer | undefined {
  const text = reply.trim();
  if (!text) return undefined;
  if (text === '/cancel') return { action: 'cancel', content: '' };
  if (text === '/decline' || text.startsWith('/decline ')) {
    return { action: 'decline', content: text.slice('/decline'.length).trim() };
  }
  if (question.kind === 'approve') {
    if (/^(y|yes|approve)$/i.test(text)) return { action: 'accept', content: 'Approved.' };
    if (/^(n|no|reject)$/i.test(text)) return { action: 'decline', content: '' };
    return undefined;
  }
  const options = question.options ?? [];
  if (/^\d+$/.test(text) && options.length) {
    const chosen = options[Number(text) - 1];
    return chosen === undefined ? undefined : { action: 'accept', content: chosen };
  }
  return { action: 'accept', content: text };
}

function describeQuestion(question: Question): string {
  const lines = [`? ${question.question}`];
  if (question.options?.length) {
    lines.push(`  ${question.options.map((o, i) => `${i + 1}) ${o}`).join('   ')}`);
  }
  lines.push(
    question.kind === 'approve'
      ? '  (yes / no, /decline REASON, /cancel)'
      : `  (type an answer${question.options?.length ? ' or a number' : ''}, /decline [REASON], /cancel)`,
  );
  return lines.join('\n');
}

/** A worker question got no answer at the prompt: the input ended, or the person cancelled. */
class ChatEnded extends Error {
  constructor(readonly why: 'end of input' | 'cancel') {
    super(why);
  }
}

/**
 * `runner chat`: the interactive mode. The transcript lives here, checkpointed with
 * @x/session after every change; a question's continuation is saved WITHOUT messages before
 * it is asked, and `resolve` hands back just the assistant/answer pair to append.
 */
export async function runChat(ctx: Context, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      data: { type: 'string' },
      model: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      session: { type: 'string' },
      resume: { type: 'boolean' },
    },
  });
  const sessionId = values.session ?? `s-${Math.random().toString(36).slice(2, 10)}`;
  const model = modelFromId(ctx.modelId);
  const out = ctx.out;
  const storage = await ctx.open();
  const lines: LineReader = createLineReader();
  const continuations = storage.chatContinuations(sessionId);
  const session = new SessionManager();
  const checkpointer = new Checkpointer();
  let transcript: Message[] = [];
  let revision: number | null = null;

  const checkpoint = async () => {
    revision = await storage.checkpoints.put(sessionId, checkpointer.capture(transcript, session), {
      expectedRevision: revision,
    });
  };
  const observer: TurnObserver = {
    event: (event) => {
      if (event.type === 'plan-updated') session.plan().set(event.todos);
      out.event(event);
    },
    modelCall: () => out.record({ type: 'model-call', sessionId }),
  };

  /** Reads a reply to `question` at the prompt; null at end of input. */
  const reply = async (question: Question): Promise<HumanAnswer | null> => {
    for (;;) {
      const line = await lines.next('answer> ');
      if (line === null) return null;
      const given = parseReply(line, question);
      if (given) return given;
      out.note('please answer, or /decline, or /cancel');
    }
  };

  /**
   * The delegate tool at the prompt: each worker question is asked here, labelled with its
   * worker, and routed back to that worker, until every worker has its report.
   */
  const delegateAtPrompt: DelegateHandler = async (use, signal) => {
    const started = await runDelegate(model, observer)(use, signal);
    if ('result' in started) return started;
    const delegation = started.waiting;
    for (;;) {
      const waiting = waitingWorkers(delegation);
      if (waiting.length === 0) return { result: delegateResult(delegation) };
      for (const { worker, question } of waiting) {
        out.record(
          { type: 'question', sessionId, worker: worker.id, task: worker.task, ...question },
          `[${workerLabel(worker.id, sessionId, worker.task)}]\n${describeQuestion(question)}`,
        );
        const given = await reply(question);
        if (given === null) throw new ChatEnded('end of input');
        if (given.action === 'cancel') throw new ChatEnded('cancel');
        answerWorker(delegation, worker.id, given, observer);
      }
      const ids = waiting.map((w) => w.worker.id);
      await runWorkers(delegation, ids, model, observer, signal ? { signal } : {});
    }
  };

  /** Asks the saved question; false at end of input (the question stays saved). */
  const answer = async (suspension: Suspension): Promise<boolean> => {
    const question = questionOf({
      type: 'tool_use',
      id: suspension.toolUseId,
      name: suspension.toolName ?? 'ask_user',
      input: suspension.toolInput ?? {},
    });
    if ('error' in question) throw new Error(`saved question is invalid: ${question.error}`);
    out.record(
      { type: 'question', sessionId, interactionId: suspension.interactionId, ...question },
      describeQuestion(question),
    );
    const given = await reply(question);
    if (given === null) return false;
    if (given.action === 'cancel') {
      await continuations.markResolved(suspension.interactionId);
      out.record({ type: 'cancelled', sessionId }, '✗ cancelled: the turn ends without an answer');
      return true;
    }
    const pair = await resolve(
      continuations,
      suspension,
      answerResult(suspension.toolUseId, given),
    );
    transcript = [...transcript, ...pair];
    await checkpoint();
    return runUntilIdle();
  };

  /** Runs the model until the turn completes or a question is answered; false at EOF. */
  const runUntilIdle = async (): Promise<boolean> => {
    let outcome: Awaited<ReturnType<typeof runTurn>>;
    try {
      outcome = await runTurn(model, transcript, observer, { delegate: delegateAtPrompt });
    } catch (error) {
      if (!(error instanceof ChatEnded)) throw error;
      // The turn is dropped whole: the transcript still ends before the delegate call.
      if (error.why === 'end of input') return false;
      out.record({ type: 'cancelled', sessionId }, '✗ cancelled: the turn ends without an answer');
      return true;
    }
    if (outcome.status === 'delegated') throw new Error('a chat answers its workers at the prompt');
    transcript = outcome.messages;
    await checkpoint();
    if (outcome.status === 'completed') {
      out.record({ type: 'turn-completed', sessionId }, '');
      return true;
    }
    const suspension = createSuspension({
      interactionId: randomUUID(),
      sessionId,
      toolUseId: outcome.toolUse.id,
      assistant: outcome.assistant,
    });
    await continuations.save(suspension);
    return answer(suspension);
  };

  try {
    const stored = await storage.checkpoints.get(sessionId);
    if (stored && !values.resume) {
      throw usageError(`session ${sessionId} exists: add --resume to continue it`);
    }
    if (values.resume) {
      if (!stored) {
        throw notFoundError(`no session ${sessionId} to resume`);
      }
      transcript = checkpointer.apply(stored.checkpoint, session).window;
      revision = stored.revision;
      out.note(`resumed session ${sessionId} (${transcript.length} messages)`);
      const [open] = await continuations.listUnresolved({ sessionId });
      if (open) {
        if (!(await answer(open))) return 0;
      } else if (transcript.at(-1)?.role === 'user') {
        // The crash came after the last tool results were saved but before the model
        // answered: ask the model again; no tool runs twice.
        if (!(await runUntilIdle())) return 0;
      }
    } else {
      await checkpoint();
      out.note(`session ${sessionId} — type a message, /quit to leave`);
    }
    for (;;) {
      const line = await lines.next('you> ');
      if (line === null || line.trim() === '/quit') return 0;
      if (!line.trim()) continue;
      transcript = [...transcript, userMessage(line)];
      await checkpoint();
      if (!(await runUntilIdle())) return 0;
    }
  } finally {
    lines.close();
    await storage.close();
  }
}
