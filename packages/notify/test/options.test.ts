import { describe, expect, it } from 'vitest';
import { emailOf, slackMessage } from '../src/index.js';
import { questionCreated, record } from './support.js';

// An app's own question may give its options as `{ label, description }` objects (the
// askuser README's example): a person picks the label, never the object's JSON.
describe("a question's options as objects", () => {
  const created = record(
    questionCreated('o1', 'slack', {
      options: [{ label: 'yes' }, { label: 'no', description: 'Keep it' }],
    }),
  );

  it("Slack's buttons carry the labels", () => {
    const { blocks } = slackMessage(created);
    const buttons = (blocks[2] as { elements: Array<{ text: { text: string }; value: string }> })
      .elements;
    expect(buttons.map((b) => [b.text.text, JSON.parse(b.value).content])).toEqual([
      ['yes', 'yes'],
      ['no', 'no'],
      ['Decline', ''],
    ]);
  });

  it("the email's answer commands get the labels", () => {
    const seen: string[][] = [];
    emailOf(created, {
      answerCommands: (_token, options) => {
        seen.push([...options]);
        return [];
      },
    });
    expect(seen).toEqual([['yes', 'no']]);
  });
});
