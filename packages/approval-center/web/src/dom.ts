/** Attributes and event handlers of {@link h}. */
export type Props = Record<
  string,
  string | number | boolean | undefined | ((event: Event) => void)
>;

/** A child of {@link h}: a node, or text (always a text node, never parsed as HTML). */
export type Child = Node | string | number | null | undefined | false;

/**
 * Creates an element. Text children become text nodes, so a question containing markup
 * shows as the characters it is made of; nothing in this page ever assigns HTML.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') {
      element.addEventListener(name.replace(/^on/, ''), value);
    } else if (value === true) {
      element.setAttribute(name, '');
    } else {
      element.setAttribute(name, String(value));
    }
  }
  append(element, children);
  return element;
}

/** Appends children, text as text nodes. */
export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces all children of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

/** The element with this id; the page is static, so a missing one is a bug. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`missing #${id}`);
  return element as T;
}

/** "asked just now" / "asked 5 min ago". */
export function askedWhen(ms: number): string {
  const text = age(ms);
  return text === 'just now' ? 'asked just now' : `asked ${text} ago`;
}

/** "just now", "3 min", "2 h", "4 d". */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/** "in 3 h", "2 h ago", "now": a time `ms` ahead of now (behind it when negative). */
export function relative(ms: number): string {
  const text = age(Math.abs(ms));
  if (text === 'just now') return 'now';
  return ms > 0 ? `in ${text}` : `${text} ago`;
}
