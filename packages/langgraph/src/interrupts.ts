import { randomUUID } from 'node:crypto';
import { Command, INTERRUPT } from '@langchain/langgraph';
import { type ResumeAnswer, resumeAnswerSchema } from '@x/askuser';
import { ContinuationError, type Suspension } from '@x/continuation';
import type { RunJob } from '@x/continuation-postgres';
import {
  type DueRun,
  type ExecutiveDatabase,
  type ExecutiveStorage,
  type FlowContext,
  finishTurn,
  kindStopOf,
  NO_QUESTION_POLICY,
  type Question,
  type QuestionPolicy,
  type QuestionTimes,
  questionAnswerers,
  questionEvent,
  questionTimes,
  type RunKind,
  type RunResult,
  requesterOf,
  saveKindStop,
} from '@x/executive';
import { assistantMessage, type Message } from '@x/wire';

/** The kind a LangGraph thread's run is recorded as (`meta.kind`); register {@link langGraphKind} under it. */
export const LANGGRAPH_KIND = 'langgraph thread';

/** The tool name the continuation of a stopped thread records its interrupts under. */
const INTERRUPTS_TOOL = 'langgraph_interrupts';

/** A thread's config, as the kind invokes the graph with it (`signal`: the lease's, on resume). */
export interface ThreadConfig {
  configurable: { thread_id: string };
  signal?: AbortSignal;
}

/**
 * What the kind needs of a compiled graph: a `StateGraph` compiled with a checkpointer
 * (e.g. {@link PostgresCheckpointSaver}) has it.
 */
export interface ThreadGraph {
  invoke(input: unknown, config: ThreadConfig): Promise<unknown>;
  getState(config: ThreadConfig): Promise<{
    values: unknown;
    next: readonly string[];
    tasks: ReadonlyArray<{ interrupts: ReadonlyArray<{ id?: string }> }>;
  }>;
}

/** Options of {@link langGraphKind} and {@link startLangGraphRun}. */
export interface LangGraphKindOptions {
  /** The graph whose threads the runs are, compiled with a durable checkpointer. */
  graph: ThreadGraph;
  /** The policy the interrupts' questions are asked under (audience, deadline); default none. */
  questionPolicy?: QuestionPolicy;
  /**
   * The value an interrupt is resumed with, from its question's answer; default the answer
   * itself (`{ action, content }`), so that the graph also sees a decline.
   */
  resumeValue?: (answer: ResumeAnswer) => unknown;
}

/** An interrupt of a stopped thread, with the token of the question that asks it. */
type AskedInterrupt = {
  id: string;
  token: string;
};

/** What a stopped thread's continuation records (JSON): its thread and its interrupts' questions. */
type StoppedThread = {
  thread: string;
  interrupts: AskedInterrupt[];
};

/** A run of a thread, as {@link startLangGraphRun} starts it. */
export interface LangGraphRun {
  runId: string;
  conversationId: string;
  /** The LangGraph thread id; default the run id. */
  threadId?: string;
  /** The person the run acts for, kept in its meta for the questions it asks. */
  requester?: string;
}

/**
 * Runs `input` through the graph on the run's thread and records the run as a run of the
 * kind {@link LANGGRAPH_KIND}: completed with the graph's final state when it ends, or
 * waiting when it stops on `interrupt()`, each pending interrupt one question (its value
 * as the question) of the executive's question policy, all written in one transaction.
 *
 * @example
 * const result = await startLangGraphRun(flow, { graph }, { runId: 'r1', conversationId: 'c1' }, { topic: 'refund' });
 */
export async function startLangGraphRun(
  flow: FlowContext,
  options: LangGraphKindOptions,
  run: LangGraphRun,
  input: unknown,
): Promise<RunResult> {
  const { runId, conversationId, requester } = run;
  const thread = run.threadId ?? runId;
  const meta = {
    kind: LANGGRAPH_KIND,
    thread,
    ...(requester === undefined ? {} : { requester }),
  };
  const output = await options.graph.invoke(input, threadConfig(thread));
  const pending = interruptsOf(output);
  const { storage } = flow;
  if (pending.length === 0) {
    const messages = [finalState(output)];
    await storage.runs().create({ runId, conversationId, status: 'completed', meta, messages });
    return { status: 'completed', runId, conversationId, messages };
  }
  const times = stopTimes(options.questionPolicy);
  return storage.transaction(async (tx) => {
    const token = randomUUID();
    await storage.runs(tx).create({
      runId,
      conversationId,
      status: 'waiting',
      interactionId: token,
      meta,
      ...waitTimes(times),
    });
    const ids = { runId, conversationId, requester };
    return askInterrupts(tx, flow, ids, thread, pending, token, options.questionPolicy, times);
  });
}

/**
 * The run kind of LangGraph threads ({@link LANGGRAPH_KIND}): a run waits until every
 * question of its thread's stop is answered, then resumes the thread once, under the lease,
 * with `Command({ resume })` keyed by interrupt id, so that each value reaches its own
 * interrupt and no other. When the graph stops again its new interrupts are asked; when it
 * ends the run completes with its final state. A cancelled question cancels the run.
 *
 * @example
 * const executive = createExecutive({ storage, kinds: { [LANGGRAPH_KIND]: langGraphKind({ graph }) } });
 */
export function langGraphKind<S extends ExecutiveStorage = ExecutiveStorage>(
  options: LangGraphKindOptions,
): RunKind<S> {
  return {
    refuse: ({ suspension }) =>
      suspension && !stoppedThreadOf(suspension)
        ? 'its saved state is not a stopped LangGraph thread; it is not resumed'
        : undefined,
    resume: (run) => resumeThread(run, options),
    due: (run) => dueThread(run, options),
  };
}

/**
 * A thread's run claimed at its due time: what is due of each question still open (its
 * reminder, escalation, and its deadline's default) is applied once, with its events, and
 * committed only while the lease holds; then the run resumes if every question is resolved,
 * else waits again until the next due time.
 */
async function dueThread<S extends ExecutiveStorage>(
  run: DueRun<S>,
  options: LangGraphKindOptions,
): Promise<RunResult> {
  const { flow, job, suspension } = run;
  const { storage, events } = flow;
  const stopped = stoppedThreadOf(suspension) as StoppedThread;
  await storage.transaction(async (tx) => {
    const pauses = storage.pauses(tx);
    // The pause rows first (as an answer takes them before the run's), then the lease.
    for (const { token } of stopped.interrupts) {
      if (await pauses.getAnswer(token)) continue;
      const due = await pauses.applyDue(token);
      const notify = [
        ...(due.reminded ? (['question.reminded'] as const) : []),
        ...(due.escalated ? (['question.escalated'] as const) : []),
      ].filter((kind) => events.wants(kind));
      for (const kind of notify) {
        const pause = await pauses.getByToken(token);
        await events.record(tx, questionEvent(kind, pause, due.escalated ?? {}));
      }
      const expired = await pauses.expire(token);
      if (expired?.expiredAt) {
        const extra = { answer: expired.answer, expiredAt: expired.expiredAt.toISOString() };
        await events.record(tx, questionEvent('question.expired', expired, extra));
      }
    }
    if (!(await storage.runs(tx).renew(job.run.runId, job.owner, job.leaseMs))) {
      throw new ContinuationError('lease_lost', `run "${job.run.runId}" was taken over`);
    }
  });
  return resumeThread(run, options);
}

async function resumeThread<S extends ExecutiveStorage>(
  { flow, job, suspension }: DueRun<S>,
  options: LangGraphKindOptions,
): Promise<RunResult> {
  const { storage } = flow;
  const { runId, conversationId } = job.run;
  const stopped = stoppedThreadOf(suspension) as StoppedThread;
  const answers = await answersOf(storage, stopped);
  if ([...answers.values()].some((a) => a.action === 'cancel')) {
    await storage.transaction(async (tx) => {
      const reason = 'the person cancelled a question of the thread';
      await storage.runs(tx).finish(runId, job.owner, { status: 'cancelled', reason });
      await storage.continuations(tx).markResolved(suspension.interactionId);
      // The stop's other questions close with it.
      await storage.pauses(tx).autoResolveForConversation(conversationId);
    });
    return { status: 'cancelled', runId, conversationId };
  }
  if (answers.size < stopped.interrupts.length) return waitForAll(storage, job, stopped);
  const config = { ...threadConfig(stopped.thread), signal: job.signal };
  const output = await options.graph.invoke(await resumeInput(options, stopped, answers), config);
  const pending = interruptsOf(output);
  if (pending.length === 0) {
    const turn = { status: 'completed' as const, messages: [finalState(output)] };
    return finishTurn(flow, job, suspension, { id: LANGGRAPH_KIND }, turn);
  }
  const policy = options.questionPolicy;
  const times = stopTimes(policy);
  return storage.transaction(async (tx) => {
    const token = randomUUID();
    // The run first: a worker that lost its lease stops here and writes nothing.
    await storage.runs(tx).finish(runId, job.owner, {
      status: 'waiting',
      interactionId: token,
      ...waitTimes(times),
    });
    const requester = requesterOf(job.run.meta);
    const ids = { runId, conversationId, requester };
    const { thread } = stopped;
    const waiting = await askInterrupts(tx, flow, ids, thread, pending, token, policy, times);
    await storage.continuations(tx).markResolved(suspension.interactionId);
    return waiting;
  });
}

/**
 * What the thread is resumed with: every answer keyed by its interrupt id while those
 * interrupts are still pending; null (go on from the last checkpoint) when an earlier
 * attempt already delivered them and was cut off before its terminal write.
 */
async function resumeInput(
  options: LangGraphKindOptions,
  stopped: StoppedThread,
  answers: Map<string, ResumeAnswer>,
): Promise<Command | null> {
  const state = await options.graph.getState(threadConfig(stopped.thread));
  const open = new Set(state.tasks.flatMap((t) => t.interrupts.map((i) => i.id)));
  if (!stopped.interrupts.every((i) => open.has(i.id))) return null;
  const value = options.resumeValue ?? ((answer: ResumeAnswer) => answer);
  const resume: Record<string, unknown> = {};
  for (const { id } of stopped.interrupts) resume[id] = value(answers.get(id) as ResumeAnswer);
  return new Command({ resume });
}

/**
 * The run waits on its stop again until its last question is answered; an answer that came
 * meanwhile readies it at once, so that no wake-up is lost.
 */
async function waitForAll(
  storage: ExecutiveStorage,
  job: RunJob,
  stopped: StoppedThread,
): Promise<RunResult> {
  const { runId, conversationId } = job.run;
  const token = job.run.interactionId ?? '';
  await storage.transaction(async (tx) => {
    // An answer takes this lock before it readies the run: it committed before the check
    // below sees it, or it readies the run after this commits.
    await storage.lockFor(tx, token);
    const due = await nextDue(storage, stopped, tx);
    await storage.runs(tx).finish(runId, job.owner, {
      status: 'waiting',
      interactionId: token,
      ...due,
    });
    const answers = await answersOf(storage, stopped, tx);
    const [answered] = answers.values();
    if (answered && answers.size === stopped.interrupts.length) {
      await storage.runs(tx).markReady(token, answered);
    }
  });
  return { status: 'waiting', runId, conversationId, token, question: '', options: null };
}

/**
 * When the run of a stop waits until: the earliest deadline of its open questions, and the
 * first time anything of them is due (reminder, escalation, deadline); none when none is.
 */
async function nextDue(
  storage: ExecutiveStorage,
  stopped: StoppedThread,
  tx: ExecutiveDatabase,
): Promise<{ deadlineAt?: Date; dueAt?: Date }> {
  const deadlines: number[] = [];
  const times: number[] = [];
  for (const { token } of stopped.interrupts) {
    if (await storage.pauses(tx).getAnswer(token)) continue;
    const { deadline, reminder, escalation } = await storage.pauses(tx).getByToken(token);
    if (deadline) deadlines.push(deadline.at.getTime());
    if (reminder && !reminder.remindedAt) times.push(reminder.at.getTime());
    if (escalation && !escalation.escalatedAt) times.push(escalation.at.getTime());
  }
  const earliest = (at: number[]) => (at.length === 0 ? undefined : new Date(Math.min(...at)));
  const deadlineAt = earliest(deadlines);
  const dueAt = earliest([...deadlines, ...times]);
  return { ...(deadlineAt ? { deadlineAt } : {}), ...(dueAt ? { dueAt } : {}) };
}

/** A new stop's run waits until its questions' deadline and first due time. */
function waitTimes(times: QuestionTimes): { deadlineAt?: Date; dueAt?: Date } {
  return {
    ...(times.deadline ? { deadlineAt: times.deadline.at } : {}),
    ...(times.dueAt ? { dueAt: times.dueAt } : {}),
  };
}

/** The times of a stop's questions under `policy` (all are asked at once, of one kind). */
function stopTimes(policy: QuestionPolicy = NO_QUESTION_POLICY): QuestionTimes {
  return questionTimes({ kind: 'ask_user' }, policy);
}

/** The answers given so far to a stop's questions, by interrupt id (read in `tx` if given). */
async function answersOf(
  storage: ExecutiveStorage,
  stopped: StoppedThread,
  tx?: ExecutiveDatabase,
): Promise<Map<string, ResumeAnswer>> {
  const answers = new Map<string, ResumeAnswer>();
  for (const { id, token } of stopped.interrupts) {
    const answered = await storage.pauses(tx).getAnswer(token);
    if (answered) answers.set(id, resumeAnswerSchema.parse(answered.answer));
  }
  return answers;
}

/**
 * Writes a thread's stop inside `tx`: its continuation `token` (the run waits on it), with
 * the thread and its interrupts, and one question per interrupt whose answer readies the run.
 */
async function askInterrupts(
  tx: ExecutiveDatabase,
  { storage, events }: FlowContext,
  run: { runId: string; conversationId: string; requester: string | undefined },
  thread: string,
  pending: ReadonlyArray<{ id: string; value: unknown }>,
  token: string,
  policy: QuestionPolicy = NO_QUESTION_POLICY,
  times: QuestionTimes = stopTimes(policy),
): Promise<Extract<RunResult, { status: 'waiting' }>> {
  const asked = pending.map((i) => ({
    ...i,
    token: randomUUID(),
    question: questionText(i.value),
  }));
  const stopped: StoppedThread = {
    thread,
    interrupts: asked.map(({ id, token: t }) => ({ id, token: t })),
  };
  await saveKindStop(storage, tx, run, token, INTERRUPTS_TOOL, stopped);
  for (const interrupt of asked) {
    const question: Question = {
      kind: 'ask_user',
      question: interrupt.question,
      options: null,
      priority: 0,
    };
    const { deadline, remind, escalate, quorum } = times;
    const pause = {
      token: interrupt.token,
      conversationId: run.conversationId,
      kind: question.kind,
      question: question.question,
      options: null,
      priority: 0,
      toolCallId: interrupt.id,
      resumeContext: {
        model: LANGGRAPH_KIND,
        run: run.runId,
        parent: token,
        langgraph: { thread, interruptId: interrupt.id, value: interrupt.value ?? null },
      },
      ...questionAnswerers(question, run.requester, policy),
      deadline: deadline ?? null,
      remind: remind ?? null,
      escalate: escalate ?? null,
      quorum: quorum ?? null,
    };
    await storage.pauses(tx).insert(pause, { runId: run.runId });
    const extra = deadline
      ? { deadline: { at: deadline.at.toISOString(), answer: deadline.answer } }
      : {};
    await events.record(tx, questionEvent('question.created', pause, extra));
  }
  const [first] = asked;
  return {
    status: 'waiting',
    runId: run.runId,
    conversationId: run.conversationId,
    token,
    question: first?.question ?? '',
    options: null,
  };
}

/** The stopped thread a continuation records, or undefined when it records none. */
function stoppedThreadOf(suspension: Suspension): StoppedThread | undefined {
  const input = kindStopOf(suspension, INTERRUPTS_TOOL) as Partial<StoppedThread> | undefined;
  return typeof input?.thread === 'string' && Array.isArray(input.interrupts)
    ? (input as StoppedThread)
    : undefined;
}

function threadConfig(thread: string): ThreadConfig {
  return { configurable: { thread_id: thread } };
}

/** The pending interrupts of a graph's output (resumable ones carry an id). */
function interruptsOf(output: unknown): Array<{ id: string; value: unknown }> {
  const list = (output as Record<string, unknown> | null)?.[INTERRUPT];
  if (!Array.isArray(list)) return [];
  return list.flatMap((i: { id?: unknown; value?: unknown }) =>
    typeof i.id === 'string' ? [{ id: i.id, value: i.value }] : [],
  );
}

/** An interrupt's value as its question's text: a string as it is, else its `question` or JSON. */
function questionText(value: unknown): string {
  if (typeof value === 'string') return value;
  const question = (value as { question?: unknown } | null)?.question;
  return typeof question === 'string' ? question : JSON.stringify(value ?? null);
}

/** The graph's final state, recorded as the run's transcript: one message with its JSON. */
function finalState(output: unknown): Message {
  return assistantMessage(JSON.stringify(output ?? null));
}
