// The one way the repository checks run another program and keep what it printed.
import { spawn } from 'node:child_process';

/**
 * Runs a command; resolves to whether it exited 0 and its output (killed after `timeout` ms).
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd: string, env?: Record<string, string>, timeout?: number }} options
 * @returns {Promise<{ ok: boolean, output: string }>}
 */
export function run(command, args, { cwd, env = {}, timeout = 120_000 }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', (error) => {
      output += `${command}: ${error.message}`;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ ok: code === 0, output: signal ? `${output}\n(killed: ${signal})` : output });
    });
  });
}
