import type { z } from 'zod';

/** The path of a zod error's first issue, as plain keys (internal). */
export function pathOf(error: z.ZodError): Array<string | number> {
  return (error.issues[0]?.path ?? []).map((key) => (typeof key === 'number' ? key : String(key)));
}
