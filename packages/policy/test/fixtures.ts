import type { ToolDefinition } from '../src/index.js';

/** The payment example's tools: a payment, and the question tool. */
export const tools: ToolDefinition[] = [
  {
    name: 'pay',
    inputSchema: {
      type: 'object',
      properties: {
        amount: { type: 'integer', minimum: 0 },
        payee: { type: 'string' },
        memo: { type: ['string', 'null'] },
        fee: { type: 'number' },
      },
      required: ['amount', 'payee'],
      additionalProperties: false,
    },
  },
  {
    name: 'ask_user',
    inputSchema: {
      type: 'object',
      properties: { question: { type: 'string' } },
      required: ['question'],
    },
  },
];

export const run = { id: 'run-1', conversation: 'conv-1', kind: 'turn' };
export const ada = { name: 'ada', roles: ['staff'] };
export const payments = `@id("pay-small")
@reason("payments under 50 need nobody")
permit (principal, action == Action::"pay", resource)
when { context.input.amount < 50 };

@id("pay-medium")
@reason("payments of 50 to 1,000 need one of finance")
@ask
@audience("finance")
@deadline("1h")
@default("decline")
permit (principal, action == Action::"pay", resource)
when { context.input.amount >= 50 && context.input.amount <= 1000 };

@id("pay-over-1000")
@reason("payments over 1,000 need two of finance")
@ask
@audience("finance")
@quorum("2")
@requesterMayNotAnswer
@severity("high")
permit (principal, action == Action::"pay", resource)
when { context.input.amount > 1000 };

@id("payee-list")
@reason("the payee is not on the list")
forbid (principal, action == Action::"pay", resource)
unless { ["acme", "globex"].contains(context.input.payee) };
`;
