import path from 'node:path';
import { parseArgs } from 'node:util';
import { invocation, shellQuote } from '../terminal/invocation.js';
import { type Command, globalOptions } from './command.js';

/** `runner demo`: the scripted trip planner, unattended, start to finish. */
export const demo: Command = async (ctx, args) => {
  parseArgs({ args, options: globalOptions });
  const { runDemo } = await import('../demo/walkthrough.js');
  const dir = path.join(ctx.dataDir, 'demo');
  return runDemo(ctx.out, dir, (line) => `${invocation()} ${line} --data ${shellQuote(dir)}`);
};
