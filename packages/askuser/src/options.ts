/**
 * One choice of a question as a person is shown it: the app's string, or its object's `label`
 * with its `description` (`null` when it gave none).
 */
export type ShownOption = string | { label: string; description: string | null };

/**
 * A pause's `options` as the app gave them, for showing: each string kept, each object with a
 * string `label` as `{ label, description }`, any other value as its JSON; `null` when
 * `options` is not a list (a free answer).
 *
 * @example
 * shownOptions(['yes', { label: 'no', description: 'Keep it as it is' }]);
 * // ['yes', { label: 'no', description: 'Keep it as it is' }]
 */
export function shownOptions(options: unknown): ShownOption[] | null {
  if (!Array.isArray(options)) return null;
  return options.map((option): ShownOption => {
    if (typeof option === 'string') return option;
    const { label, description } = (option ?? {}) as { label?: unknown; description?: unknown };
    if (typeof label !== 'string') return JSON.stringify(option);
    return { label, description: typeof description === 'string' ? description : null };
  });
}

/** The words of one option of {@link shownOptions}: the answer's content when a person picks it. */
export function optionLabel(option: ShownOption): string {
  return typeof option === 'string' ? option : option.label;
}
