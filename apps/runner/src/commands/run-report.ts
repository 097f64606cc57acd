import type { RunResult } from '../executive/index.js';
import { type Output, plural } from '../terminal/output.js';
import { workerLabel } from '../terminal/turn-output.js';

type Waiting = Extract<RunResult, { status: 'waiting' }>;

/** A question's numbered options, one per line, and the command that answers it. */
function howToAnswer(
  out: Output,
  q: { token: string; options: string[] | null; gated?: string },
  indent: string,
): { options: string; command: string; others: string } {
  const listed = q.options?.length
    ? `\n${q.options.map((o, i) => `${indent}${i + 1}) ${o}`).join('\n')}`
    : '';
  // A gated call is approved as asked (empty content) or with edited arguments.
  const how = q.gated ? "--accept ''" : q.options?.length ? '--option N' : '--accept "..."';
  // The other answers, without the one the command already shows.
  const first = q.gated ? '--arguments JSON, ' : q.options?.length ? '--accept TEXT, ' : '';
  const others = `${first}--decline [TEXT], --cancel`;
  return { options: listed, command: out.command(`answer ${q.token} ${how}`), others };
}

/** The `run-waiting` event of a run that waits on one question or on its workers' questions. */
function waitingEvent(result: Waiting): { type: string } & Record<string, unknown> {
  const { runId, conversationId, token, question, options, questions, gated } = result;
  return {
    type: 'run-waiting',
    status: 'waiting',
    runId,
    conversationId,
    token,
    question,
    options,
    ...(questions ? { questions } : {}),
    ...(gated ? { gated } : {}),
  };
}

function reportDelegated(out: Output, result: Waiting): void {
  const questions = result.questions ?? [];
  const lines = questions.map((q) => {
    const { options, command } = howToAnswer(out, q, '    ');
    return `\n[${workerLabel(q.worker, result.conversationId, q.task)}]\n? ${q.question}${options}\n  answer: ${command}`;
  });
  out.record(
    waitingEvent(result),
    `${lines.join('\n')}\nwaiting on ${plural(questions.length, 'worker question')} (answer in any order, or together with ${out.command('answer --batch FILE')})`,
  );
}

/** Prints where a run stands after a turn: completed, waiting (with how to answer), cancelled. */
export function report(out: Output, result: RunResult): void {
  switch (result.status) {
    case 'completed':
      out.record(
        {
          type: 'run-completed',
          runId: result.runId,
          conversationId: result.conversationId,
          messages: result.messages,
        },
        `\n✓ completed (conversation ${result.conversationId}, run ${result.runId})`,
      );
      break;
    case 'waiting': {
      if (result.questions) {
        reportDelegated(out, result);
        break;
      }
      const { options, command, others } = howToAnswer(out, result, '  ');
      out.record(
        waitingEvent(result),
        `\n? ${result.question}${options}\nwaiting — token ${result.token}\n  answer: ${command}  (or ${others})`,
      );
      break;
    }
    case 'cancelled':
      out.record(
        { type: 'run-cancelled', runId: result.runId, conversationId: result.conversationId },
        `✗ cancelled (conversation ${result.conversationId})`,
      );
      break;
  }
}
