import { userInfo } from 'node:os';
import { setting, VARIABLES } from '../config/index.js';

/**
 * Who is answering at this machine, for the audit trail of answers: the OS user name, or
 * `USER` / `USERNAME` where the system has no user entry (a container's uid), else null.
 */
export function osUserName(): string | null {
  try {
    const { username } = userInfo();
    if (username) return username;
  } catch {
    // No passwd entry for this uid.
  }
  return setting(VARIABLES.USER) ?? setting(VARIABLES.USERNAME) ?? null;
}
