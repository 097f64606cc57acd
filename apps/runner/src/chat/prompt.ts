import type { HumanAnswer, Question } from '@x/executive';

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

/** A question as the prompt shows it, with the replies it takes. */
export function describeQuestion(question: Question): string {
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
export function choices(question: Question): string {
  if (question.kind === 'approve') return 'answer yes or no, /decline REASON or /cancel';
  const options = question.options ?? [];
  if (!options.length) return 'type an answer, /decline [REASON] or /cancel';
  const listed = options.map((o, i) => `${i + 1}) ${o}`).join('  ');
  return `choose 1 to ${options.length} (${listed}), type an answer, /decline [REASON] or /cancel`;
}
