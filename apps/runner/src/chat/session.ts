import { randomUUID } from 'node:crypto';
import {
  type ContinuationStore,
  createSuspension,
  resolve,
  type Suspension,
} from '@x/continuation';
import {
  answerResult,
  answerWorker,
  DELEGATE_TOOL,
  type Delegation,
  delegateResult,
  getDelegation,
  type HumanAnswer,
  type Model,
  putDelegation,
  type Question,
  questionOf,
  runDelegate,
  runTurn,
  runWorkers,
  type TurnObserver,
  type TurnOutcome,
  unsettledWorkers,
  waitingWorkers,
} from '@x/executive';
import { Checkpointer, SessionManager } from '@x/session';
import type { Message } from '@x/wire';
import { userMessage } from '@x/wire';
import { demoTools, demoWorkers, SYSTEM_PROMPT } from '../demo/tools.js';
import { notFoundError, usageError } from '../errors.js';
import { checkAnswerSize } from '../executive/index.js';
import { modelFromId } from '../model/index.js';
import type { Storage } from '../storage/index.js';
import { shellQuote } from '../terminal/invocation.js';
import { createLineReader, type LineReader } from '../terminal/lines.js';
import { type Output, plural } from '../terminal/output.js';
import { modelRetried, workerLabel } from '../terminal/turn-output.js';
import { choices, describeQuestion, parseReply } from './prompt.js';
import { latestWaitingSession, toolUseOf } from './saved-sessions.js';

/** What a chat session gets from the CLI (a command's context has all of it). */
interface ChatContext {
  out: Output;
  modelId: string;
  /** Opens the storage (embedded default or DATABASE_URL), migrated. */
  open(): Promise<Storage>;
  /** Where the person's lines come from (default standard input; through serve, the caller's). */
  lines?: LineReader | undefined;
}

/** How `runner chat` was asked to start. */
interface ChatOptions {
  /**
   * The session to start or resume (`--session`); default a new one, or with `resume` the
   * one whose question was saved last.
   */
  session?: string | undefined;
  /** `--resume`: go on with a saved session. */
  resume: boolean;
  /** The `--model` given, repeated in the resume command. */
  model?: string | undefined;
}

/**
 * `runner chat`: the interactive mode. Picks the session (a new one, the one named, or with
 * `resume` alone the one whose question was saved last) and runs it at the prompt.
 */
export async function runChat(ctx: ChatContext, options: ChatOptions): Promise<number> {
  const model = modelFromId(ctx.modelId);
  const out = ctx.out;
  const storage = await ctx.open();
  let sessionId: string | undefined;
  try {
    sessionId =
      options.session ??
      (options.resume
        ? await latestWaitingSession(storage)
        : `s-${Math.random().toString(36).slice(2, 10)}`);
  } catch (error) {
    await storage.close();
    throw error;
  }
  if (sessionId === undefined) {
    await storage.close();
    throw notFoundError(
      `no chat session waits on a question; the sessions and how to resume each: ${out.command('chat --list')}`,
    );
  }
  const resumeCommand = out.command(
    `chat --resume --session ${sessionId}${options.model === undefined ? '' : ` --model ${shellQuote(options.model)}`}`,
  );
  const lines = ctx.lines ?? createLineReader();
  return new ChatSession(out, storage, model, sessionId, resumeCommand, lines).run(options.resume);
}

/** What became of a saved question at the prompt. */
type Reply = 'answered' | 'cancelled' | 'left-waiting';

/**
 * One session at the prompt. It owns the transcript, checkpointed with @x/session after
 * every change; a question's continuation is saved WITHOUT messages before it is asked, and
 * `resolve` hands back just the assistant/answer pair to append.
 */
class ChatSession {
  readonly #lines: LineReader;
  readonly #session = new SessionManager();
  readonly #checkpointer = new Checkpointer();
  readonly #continuations: ContinuationStore;
  readonly #observer: TurnObserver;
  #transcript: Message[] = [];
  #revision: number | null = null;

  readonly #out: Output;
  readonly #storage: Storage;
  readonly #model: Model;
  readonly #sessionId: string;
  readonly #resumeCommand: string;

  constructor(
    out: Output,
    storage: Storage,
    model: Model,
    sessionId: string,
    resumeCommand: string,
    lines: LineReader,
  ) {
    this.#lines = lines;
    this.#out = out;
    this.#storage = storage;
    this.#model = model;
    this.#sessionId = sessionId;
    this.#resumeCommand = resumeCommand;
    this.#continuations = storage.chatContinuations(sessionId);
    this.#observer = {
      event: (event) => {
        if (event.type === 'plan-updated') this.#session.plan().set(event.todos);
        out.event(event);
      },
      modelCall: () => out.record({ type: 'model-call', sessionId }),
      modelRetry: (retry) => modelRetried(out, retry, { sessionId }),
    };
  }

  /** Runs the session until /quit or the end of input, then closes the storage. */
  async run(resume: boolean): Promise<number> {
    // Ctrl-C ends the input like Ctrl-D (a waiting question stays saved and its resume
    // command is printed); a second Ctrl-C ends the process at once.
    const interrupt = () => this.#lines.close();
    process.once('SIGINT', interrupt);
    try {
      if (!(await this.#begin(resume))) return 0;
      return await this.#converse();
    } finally {
      process.off('SIGINT', interrupt);
      this.#lines.close();
      await this.#storage.close();
    }
  }

  /** Starts the session, or resumes it where it stopped; false when the input ended there. */
  async #begin(resume: boolean): Promise<boolean> {
    const out = this.#out;
    const sessionId = this.#sessionId;
    const stored = await this.#storage.checkpoints.get(sessionId);
    if (stored && !resume) {
      throw usageError(`session ${sessionId} exists; to continue it: ${this.#resumeCommand}`);
    }
    if (!resume) {
      await this.#checkpoint();
      out.note(`session ${sessionId} — type a message, /quit to leave`);
      return true;
    }
    if (!stored) {
      throw notFoundError(
        `no session ${sessionId} to resume; the sessions there are: ${out.command('chat --list')}`,
      );
    }
    this.#transcript = this.#checkpointer.apply(stored.checkpoint, this.#session).window;
    this.#revision = stored.revision;
    out.note(`resumed session ${sessionId} (${plural(this.#transcript.length, 'message')})`);
    const [open] = await this.#continuations.listUnresolved({ sessionId });
    if (open) return this.#resumeOpen(open);
    // The crash came after the last tool results were saved but before the model answered:
    // ask the model again; no tool runs twice.
    if (this.#transcript.at(-1)?.role === 'user') return this.#runUntilIdle();
    return true;
  }

  /** Reads the person's messages, a turn each, until /quit or the end of input. */
  async #converse(): Promise<number> {
    for (;;) {
      const line = await this.#lines.next('you> ');
      if (line === null || line.trim() === '/quit') return 0;
      if (!line.trim()) continue;
      await this.#append([userMessage(line)]);
      if (!(await this.#runUntilIdle())) return 0;
    }
  }

  async #checkpoint(): Promise<void> {
    const checkpoint = this.#checkpointer.capture(this.#transcript, this.#session);
    this.#revision = await this.#storage.checkpoints.put(this.#sessionId, checkpoint, {
      expectedRevision: this.#revision,
    });
  }

  async #append(messages: readonly Message[]): Promise<void> {
    this.#transcript = [...this.#transcript, ...messages];
    await this.#checkpoint();
  }

  /** Runs the model until the turn completes, or a question is cancelled; false at EOF. */
  async #runUntilIdle(): Promise<boolean> {
    for (;;) {
      const outcome = await runTurn(this.#model, this.#transcript, this.#observer, {
        system: SYSTEM_PROMPT,
        tools: demoTools,
        delegate: runDelegate(this.#model, this.#observer, demoWorkers()),
      });
      this.#transcript = outcome.messages;
      await this.#checkpoint();
      if (outcome.status === 'completed') {
        this.#out.record({ type: 'turn-completed', sessionId: this.#sessionId }, '');
        return true;
      }
      const reply = await this.#suspend(outcome);
      if (reply !== 'answered') return reply === 'cancelled';
    }
  }

  /** Saves the question a turn stopped on, then asks it. */
  async #suspend(outcome: Exclude<TurnOutcome, { status: 'completed' }>): Promise<Reply> {
    const suspension = createSuspension({
      interactionId: randomUUID(),
      sessionId: this.#sessionId,
      toolUseId: outcome.toolUse.id,
      assistant: outcome.assistant,
    });
    if (outcome.status === 'suspended') {
      await this.#continuations.save(suspension);
      return this.#answer(suspension);
    }
    // The workers' checkpoints first: a saved delegate call always has them.
    const revisions = new Map<string, number>();
    const parent = { window: [...this.#transcript, outcome.assistant], use: outcome.toolUse };
    const thread = this.#delegationThread(suspension);
    await putDelegation(this.#storage.checkpoints, thread, outcome.delegation, parent, revisions);
    await this.#continuations.save(suspension);
    return this.#answerWorkers(suspension, outcome.delegation, revisions);
  }

  /** Goes on with a saved question: a delegate call's workers, or a question of the turn. */
  async #resumeOpen(suspension: Suspension): Promise<boolean> {
    const reply =
      suspension.toolName === DELEGATE_TOOL
        ? await this.#resumeWorkers(suspension)
        : await this.#answer(suspension);
    return reply === 'answered' ? this.#runUntilIdle() : reply === 'cancelled';
  }

  async #resumeWorkers(suspension: Suspension): Promise<Reply> {
    const thread = this.#delegationThread(suspension);
    const saved = await getDelegation(this.#storage.checkpoints, thread);
    if (!saved) throw new Error(`the delegate call of ${thread} has no checkpoint`);
    return this.#answerWorkers(suspension, saved.delegation, saved.revisions);
  }

  /** Asks the saved question; its answer is appended to the transcript. */
  async #answer(suspension: Suspension): Promise<Reply> {
    const question = questionOf(toolUseOf(suspension));
    if ('error' in question) throw new Error(`saved question is invalid: ${question.error}`);
    this.#out.record(
      {
        type: 'question',
        sessionId: this.#sessionId,
        interactionId: suspension.interactionId,
        ...question,
      },
      describeQuestion(question),
    );
    const given = await this.#reply(question);
    if (given === null) return this.#leaveWaiting(suspension);
    if (given.action === 'cancel') return this.#cancel(suspension);
    const result = answerResult(suspension.toolUseId, given);
    await this.#append(await resolve(this.#continuations, suspension, result));
    return 'answered';
  }

  /**
   * The delegate call at the prompt: runs the workers that are neither finished nor
   * waiting, asks each waiting worker's question here, labelled with its worker, and routes
   * the answer back to it, until every worker has its report; then the reports are the
   * call's result, appended to the transcript. Every step is checkpointed (the parent's
   * thread and each worker's), so `--resume` goes on from the last answer.
   */
  async #answerWorkers(
    suspension: Suspension,
    delegation: Delegation,
    revisions: Map<string, number>,
  ): Promise<Reply> {
    const parent = {
      window: [...this.#transcript, suspension.assistant],
      use: toolUseOf(suspension),
    };
    const thread = this.#delegationThread(suspension);
    const save = () =>
      putDelegation(this.#storage.checkpoints, thread, delegation, parent, revisions);
    for (;;) {
      await runWorkers(delegation, unsettledWorkers(delegation), this.#model, this.#observer, {
        ...demoWorkers(),
        settled: save,
      });
      const waiting = waitingWorkers(delegation);
      if (waiting.length === 0) break;
      const reply = await this.#askWorkers(suspension, delegation, waiting, save);
      if (reply !== 'answered') return reply;
    }
    const result = delegateResult(delegation);
    await this.#append(await resolve(this.#continuations, suspension, result));
    return 'answered';
  }

  /** Asks each waiting worker's question in turn and routes its answer to the worker. */
  async #askWorkers(
    suspension: Suspension,
    delegation: Delegation,
    waiting: ReturnType<typeof waitingWorkers>,
    save: () => Promise<void>,
  ): Promise<Reply> {
    for (const { worker, question } of waiting) {
      this.#out.record(
        {
          type: 'question',
          sessionId: this.#sessionId,
          worker: worker.id,
          task: worker.task,
          ...question,
        },
        `[${workerLabel(worker.id, this.#sessionId, worker.task)}]\n${describeQuestion(question)}`,
      );
      const given = await this.#reply(question);
      if (given === null) return this.#leaveWaiting(suspension);
      if (given.action === 'cancel') return this.#cancel(suspension);
      answerWorker(delegation, worker.id, given, this.#observer);
      await save();
    }
    return 'answered';
  }

  /** Reads a reply to `question` at the prompt; null at end of input or on /quit. */
  async #reply(question: Question): Promise<HumanAnswer | null> {
    for (;;) {
      const line = await this.#lines.next('answer> ');
      if (line === null || line.trim() === '/quit') return null;
      const given = parseReply(line, question);
      if (!given) {
        this.#out.note(choices(question));
        continue;
      }
      try {
        // The same limit as `runner answer` and the API: a larger answer could not be saved.
        checkAnswerSize('this question', given);
        return given;
      } catch (error) {
        this.#out.note(`${(error as Error).message}; type a shorter answer`);
      }
    }
  }

  /** Leaves a saved question unanswered, saying how to come back to it. */
  #leaveWaiting(suspension: Suspension): Reply {
    this.#out.record(
      {
        type: 'question-waiting',
        sessionId: this.#sessionId,
        interactionId: suspension.interactionId,
      },
      `\nthe question waits; answer it later with: ${this.#resumeCommand}`,
    );
    return 'left-waiting';
  }

  /** The person cancelled: the question is resolved and the turn ends without an answer. */
  async #cancel(suspension: Suspension): Promise<Reply> {
    await this.#continuations.markResolved(suspension.interactionId);
    this.#out.record(
      { type: 'cancelled', sessionId: this.#sessionId },
      '✗ cancelled: the turn ends without an answer',
    );
    return 'cancelled';
  }

  /** A delegate call's checkpoint is the thread `SESSION.INTERACTION` of its session. */
  #delegationThread(suspension: Suspension): string {
    return `${this.#sessionId}.${suspension.interactionId}`;
  }
}
