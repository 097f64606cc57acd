import type { Script } from './turn.js';

/** The payments the `payments` script makes, in order: under 50, 50 to 1,000, over 1,000, a payee off the list. */
export const PAYMENTS = [
  { payee: 'acme', amount: 20, currency: 'EUR' },
  { payee: 'acme', amount: 500, currency: 'EUR' },
  { payee: 'globex', amount: 5000, currency: 'EUR' },
  { payee: 'mallory', amount: 20, currency: 'EUR' },
] as const;

/**
 * A model that calls `tool` with each of `payments` in turn, calls a payment once more when a
 * person declined it (a model that retries, as the denial window expects), then lists what
 * each call returned.
 */
export function payingAgent(tool: string, payments: readonly unknown[]): Script {
  return ({ calls }) => {
    const paid = calls.filter((call) => call.name === tool);
    const last = paid.at(-1);
    if (last && last.result === undefined) throw new Error(`${tool} has no result yet`);
    const retried = paid.length >= 2 && sameInput(paid.at(-2)?.input, last?.input);
    if (last && !retried && last.result?.startsWith('The user declined')) {
      return { toolCall: { name: tool, input: last.input } };
    }
    const next = payments.find((payment) => !paid.some((call) => sameInput(call.input, payment)));
    if (next) return { toolCall: { name: tool, input: next } };
    return { text: paid.map((call) => `- ${call.result ?? ''}`).join('\n') };
  };
}

/** The payments example's model: `pay` with each of {@link PAYMENTS}. */
export const paymentsAgent: Script = payingAgent('pay', PAYMENTS);

function sameInput(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
