import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Command, globalOptions } from './context.js';

/** `runner demo`: the scripted trip planner, unattended, start to finish. */
export const demo: Command = async (ctx, args) => {
  parseArgs({ args, options: globalOptions });
  const { runDemo } = await import('../demo.js');
  return runDemo(ctx.out, path.join(ctx.dataDir, 'demo'));
};
