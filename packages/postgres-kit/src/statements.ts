/**
 * The statements of a store, each built on its first use and then kept: a store made for one
 * transaction builds only what it runs there, since building a drizzle query costs more than
 * executing it.
 *
 * @example
 * const statements = lazyStatements({
 *   load: () => db.select().from(t).where(eq(t.id, sql.placeholder('id'))).prepare('load'),
 * });
 * await statements.load.execute({ id });
 */
export function lazyStatements<T extends Record<string, () => unknown>>(
  builders: T,
): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const statements = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const name of Object.keys(builders) as Array<keyof T>) {
    let built: ReturnType<T[typeof name]> | undefined;
    Object.defineProperty(statements, name, {
      enumerable: true,
      get: () => {
        built ??= builders[name]?.() as ReturnType<T[typeof name]>;
        return built;
      },
    });
  }
  return statements;
}
