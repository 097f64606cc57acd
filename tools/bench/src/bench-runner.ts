import type { Context, Server } from './context.js';

/** The runner's end-to-end rows (filled in next). */
export async function benchRunner(_ctx: Context, _server: Server): Promise<void> {}
