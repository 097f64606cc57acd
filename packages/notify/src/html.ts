/**
 * `text` safe inside HTML, as an element's text or a quoted attribute: every character that
 * could open markup or end an attribute is written as a character reference.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
