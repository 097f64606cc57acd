/**
 * A duration like `500ms`, `30s`, `30m`, `12h`, `7d` or `2w`, in milliseconds; undefined when
 * it is none (a sign, a fraction or an unknown unit included).
 */
export function durationMs(text: string): number | undefined {
  const match = /^(\d+)\s*(ms|s|m|h|d|w)$/.exec(text.trim());
  if (!match) return undefined;
  const unit = { ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 }[match[2] as 's'];
  return Number(match[1]) * unit;
}
