// Kept byte-identical in @x/continuation and @x/session (check:imports compares them): what
// a child process of either conformance suite does before it takes orders.

/** @param {unknown} message sent to the parent */
export function send(message) {
  process.send?.(message);
}

/**
 * The `code` of an error of the package whose marker is `Symbol.for(marker)`, or a line
 * saying what else was thrown (the parent reports it as a broken promise).
 * @param {unknown} error
 * @param {string} marker
 */
export function codeOf(error, marker) {
  if (typeof error === 'object' && error !== null && Symbol.for(marker) in error) {
    return String(/** @type {{ code: unknown }} */ (error).code);
  }
  const e = /** @type {{ name?: string, message?: string } | null} */ (error);
  return `untyped ${e?.name ?? typeof error}: ${e?.message ?? String(error)}`;
}

/**
 * The store the author's module builds (argv: its URL, then the JSON arguments). When it
 * cannot be built, the parent is told why and the process exits.
 * @returns {Promise<any>}
 */
export async function storeFromArgs() {
  const [moduleHref, argsJson] = process.argv.slice(2);
  try {
    const module = await import(String(moduleHref));
    const build = typeof module.default === 'function' ? module.default : module.createStore;
    if (typeof build !== 'function') {
      throw new Error(
        `${moduleHref} exports no function (default or createStore) that builds a store`,
      );
    }
    const store = await build(JSON.parse(argsJson ?? 'null'));
    process.on('disconnect', () => process.exit(0));
    return store;
  } catch (error) {
    send({ type: 'fatal', message: String(/** @type {Error} */ (error)?.stack ?? error) });
    process.exit(1);
  }
}
