import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createSuspension, resolve, type Suspension } from '@x/continuation';
import { Checkpointer, isSafeThreadId, SessionManager } from '@x/session';
import type { Message, ToolUseBlock } from '@x/wire';
import { userMessage } from '@x/wire';
import type { Delegation } from '../agent/delegate-port.js';
import {
  answerResult,
  DELEGATE_TOOL,
  type HumanAnswer,
  type Question,
  questionOf,
} from '../agent/tools.js';
import { runTurn, type TurnObserver } from '../agent/turn.js';
import { shellQuote } from '../cli/invocation.js';
import { createLineReader, type LineReader } from '../cli/lines.js';
import { type Output, plural } from '../cli/output.js';
import { modelRetried, workerLabel } from '../cli/turn-output.js';
import { getDelegation, putDelegation } from '../delegation/checkpoint.js';
import {
  answerWorker,
  delegateResult,
  runDelegate,
  runWorkers,
  unsettledWorkers,
  waitingWorkers,
} from '../delegation/run.js';
import { notFoundError, usageError } from '../errors.js';
import { modelFromId } from '../model/index.js';
import type { Storage } from '../storage/index.js';

/** What a chat session gets from the CLI (a command's context has all of it). */
export interface ChatContext {
  out: Output;
  modelId: string;
  /** Opens the storage (embedded default or DATABASE_URL), migrated. */
  open(): Promise<Storage>;
}

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
      : `  (type an answer${question.options?.length ? ' or a number' : ''}, /decline [REASON], /cancel, /quit to answer later)`,
  );
  return lines.join('\n');
}

/** What to say when a reply answers nothing: the valid choices. */
function choices(question: Question): string {
  if (question.kind === 'approve') return 'answer yes or no, /decline REASON or /cancel';
  const options = question.options ?? [];
  if (!options.length) return 'type an answer, /decline [REASON] or /cancel';
  const listed = options.map((o, i) => `${i + 1}) ${o}`).join('  ');
  return `choose 1 to ${options.length} (${listed}), type an answer, /decline [REASON] or /cancel`;
}

/** The interactive sessions (not their delegate calls' threads), each with its open question. */
async function chatSessions(
  storage: Storage,
): Promise<Array<{ sessionId: string; waiting: Suspension | undefined }>> {
  const ids = (await storage.checkpoints.list()).map((t) => t.threadId);
  // A delegate call's checkpoint is the thread `SESSION.INTERACTION` of its session.
  const sessions = ids.filter((id) => !ids.some((other) => id.startsWith(`${other}.`)));
  return Promise.all(
    sessions.map(async (sessionId) => {
      const open = await storage.chatContinuations(sessionId).listUnresolved({ sessionId });
      return { sessionId, waiting: open.at(-1) };
    }),
  );
}

/** The chat session whose question was saved last and still waits, if any. */
async function latestWaitingSession(storage: Storage): Promise<string | undefined> {
  let latest: Suspension | undefined;
  for (const { waiting } of await chatSessions(storage)) {
    if (waiting && (!latest || waiting.createdAt > latest.createdAt)) latest = waiting;
  }
  return latest?.sessionId;
}

/** `runner chat --list`: the sessions of this data folder, and the command that resumes each. */
async function listSessions(ctx: ChatContext, storage: Storage): Promise<number> {
  const sessions = await chatSessions(storage);
  for (const { sessionId, waiting } of sessions) {
    const question = waiting && questionOf(toolUseOf(waiting));
    const asked = question && !('error' in question) ? question.question : undefined;
    const state = waiting
      ? `waits on a question${asked ? `: ${asked}` : " (its workers')"}`
      : 'no open question';
    ctx.out.record(
      { type: 'session', sessionId, waiting: waiting !== undefined, question: asked ?? null },
      `${sessionId}  ${state}\n  resume: ${ctx.out.command(`chat --resume --session ${sessionId}`)}`,
    );
  }
  if (sessions.length === 0) ctx.out.record({ type: 'none' }, 'no chat sessions yet');
  return 0;
}

/** The tool call a saved suspension waits on. */
function toolUseOf(suspension: Suspension): ToolUseBlock {
  return {
    type: 'tool_use',
    id: suspension.toolUseId,
    name: suspension.toolName ?? 'ask_user',
    input: suspension.toolInput ?? {},
  };
}

/**
 * `runner chat`: the interactive mode. The transcript lives here, checkpointed with
 * @x/session after every change; a question's continuation is saved WITHOUT messages before
 * it is asked, and `resolve` hands back just the assistant/answer pair to append.
 */
export async function runChat(ctx: ChatContext, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      data: { type: 'string' },
      model: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      session: { type: 'string' },
      resume: { type: 'boolean' },
      list: { type: 'boolean' },
    },
  });
  if (values.list) {
    if (values.session !== undefined || values.resume)
      throw usageError('chat --list takes no --session or --resume');
    const storage = await ctx.open();
    try {
      return await listSessions(ctx, storage);
    } finally {
      await storage.close();
    }
  }
  if (values.session !== undefined && !isSafeThreadId(values.session)) {
    throw usageError(
      `--session "${values.session}" cannot name a session: use 1 to 200 letters, digits, '.', '_' and '-', not starting with '.'`,
    );
  }
  const model = modelFromId(ctx.modelId);
  const out = ctx.out;
  const storage = await ctx.open();
  // `--resume` alone continues the session whose question was saved last.
  const sessionId =
    values.session ??
    (values.resume
      ? await latestWaitingSession(storage).catch(async (error: unknown) => {
          await storage.close();
          throw error;
        })
      : `s-${Math.random().toString(36).slice(2, 10)}`);
  if (sessionId === undefined) {
    await storage.close();
    throw notFoundError(
      `no chat session waits on a question; the sessions and how to resume each: ${out.command('chat --list')}`,
    );
  }
  const resumeCommand = out.command(
    `chat --resume --session ${sessionId}${values.model === undefined ? '' : ` --model ${shellQuote(values.model)}`}`,
  );
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
    modelRetry: (retry) => modelRetried(out, retry, { sessionId }),
  };

  /** Reads a reply to `question` at the prompt; null at end of input or on /quit. */
  const reply = async (question: Question): Promise<HumanAnswer | null> => {
    for (;;) {
      const line = await lines.next('answer> ');
      if (line === null || line.trim() === '/quit') return null;
      const given = parseReply(line, question);
      if (given) return given;
      out.note(choices(question));
    }
  };

  /** Leaves a saved question unanswered, saying how to come back to it; false. */
  const leaveWaiting = (suspension: Suspension): false => {
    out.record(
      { type: 'question-waiting', sessionId, interactionId: suspension.interactionId },
      `\nthe question waits; answer it later with: ${resumeCommand}`,
    );
    return false;
  };

  /**
   * The delegate call at the prompt: runs the workers that are neither finished nor
   * waiting, asks each waiting worker's question here, labelled with its worker, and routes
   * the answer back to it, until every worker has its report; then the reports are the
   * call's result and the turn goes on. Every step is checkpointed (the parent's thread and
   * each worker's), so `--resume` goes on from the last answer. False at end of input.
   */
  const answerWorkers = async (
    suspension: Suspension,
    delegation: Delegation,
    revisions: Map<string, number>,
  ): Promise<boolean> => {
    const use = toolUseOf(suspension);
    const thread = `${sessionId}.${suspension.interactionId}`;
    const window = [...transcript, suspension.assistant];
    const save = () =>
      putDelegation(storage.checkpoints, thread, delegation, { window, use }, revisions);
    for (;;) {
      await runWorkers(delegation, unsettledWorkers(delegation), model, observer, {
        settled: save,
      });
      const waiting = waitingWorkers(delegation);
      if (waiting.length === 0) break;
      for (const { worker, question } of waiting) {
        out.record(
          { type: 'question', sessionId, worker: worker.id, task: worker.task, ...question },
          `[${workerLabel(worker.id, sessionId, worker.task)}]\n${describeQuestion(question)}`,
        );
        const given = await reply(question);
        if (given === null) return leaveWaiting(suspension);
        if (given.action === 'cancel') {
          await continuations.markResolved(suspension.interactionId);
          out.record(
            { type: 'cancelled', sessionId },
            '✗ cancelled: the turn ends without an answer',
          );
          return true;
        }
        answerWorker(delegation, worker.id, given, observer);
        await save();
      }
    }
    const pair = await resolve(continuations, suspension, delegateResult(delegation));
    transcript = [...transcript, ...pair];
    await checkpoint();
    return runUntilIdle();
  };

  /** Asks the saved question; false at end of input (the question stays saved). */
  const answer = async (suspension: Suspension): Promise<boolean> => {
    const question = questionOf(toolUseOf(suspension));
    if ('error' in question) throw new Error(`saved question is invalid: ${question.error}`);
    out.record(
      { type: 'question', sessionId, interactionId: suspension.interactionId, ...question },
      describeQuestion(question),
    );
    const given = await reply(question);
    if (given === null) return leaveWaiting(suspension);
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
    const outcome = await runTurn(model, transcript, observer, {
      delegate: runDelegate(model, observer),
    });
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
    if (outcome.status === 'delegated') {
      // The workers' checkpoints first: a saved delegate call always has them.
      const revisions = new Map<string, number>();
      const thread = `${sessionId}.${suspension.interactionId}`;
      const window = [...transcript, outcome.assistant];
      const parent = { window, use: outcome.toolUse };
      await putDelegation(storage.checkpoints, thread, outcome.delegation, parent, revisions);
      await continuations.save(suspension);
      return answerWorkers(suspension, outcome.delegation, revisions);
    }
    await continuations.save(suspension);
    return answer(suspension);
  };

  // Ctrl-C ends the input like Ctrl-D (a waiting question stays saved and its resume command
  // is printed); a second Ctrl-C ends the process at once.
  const interrupt = () => lines.close();
  process.once('SIGINT', interrupt);

  /** Goes on with a saved question: a delegate call's workers, or a question of the turn. */
  const resumeOpen = async (suspension: Suspension): Promise<boolean> => {
    if (suspension.toolName !== DELEGATE_TOOL) return answer(suspension);
    const thread = `${sessionId}.${suspension.interactionId}`;
    const saved = await getDelegation(storage.checkpoints, thread);
    if (!saved) throw new Error(`the delegate call of ${thread} has no checkpoint`);
    return answerWorkers(suspension, saved.delegation, saved.revisions);
  };

  try {
    const stored = await storage.checkpoints.get(sessionId);
    if (stored && !values.resume) {
      throw usageError(`session ${sessionId} exists; to continue it: ${resumeCommand}`);
    }
    if (values.resume) {
      if (!stored) {
        throw notFoundError(
          `no session ${sessionId} to resume; the sessions there are: ${out.command('chat --list')}`,
        );
      }
      transcript = checkpointer.apply(stored.checkpoint, session).window;
      revision = stored.revision;
      out.note(`resumed session ${sessionId} (${plural(transcript.length, 'message')})`);
      const [open] = await continuations.listUnresolved({ sessionId });
      if (open) {
        if (!(await resumeOpen(open))) return 0;
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
    process.off('SIGINT', interrupt);
    lines.close();
    await storage.close();
  }
}
