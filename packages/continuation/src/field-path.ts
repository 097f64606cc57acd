import type { z } from 'zod';

/** Renders a zod issue path as `messages[2].content[0].id` (empty path: `(record)`). */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(record)' : out;
}

/** The first issue of a zod error as `[field, message]`. */
export function firstIssue(error: z.ZodError): [field: string, message: string] {
  const issue = error.issues[0];
  return [fieldPath(issue?.path ?? []), issue?.message ?? 'invalid'];
}
