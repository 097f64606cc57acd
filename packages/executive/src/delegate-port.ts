import type { SessionManager } from '@x/session';
import type { Message, ToolResultBlock, ToolUseBlock } from '@x/wire';
import type { Question } from './tools.js';

// The `delegate` call as the turn sees it: delegation/ runs the workers behind this port.

/** A worker's open question, as its interrupt payload keeps it. */
export interface WorkerQuestion extends Question {
  /** The pause token the operator answers (also the interaction id of that wait). */
  token: string;
  /** The worker's own tool call that asked. */
  toolCallId: string;
}

/** One worker sub-agent of a `delegate` call: its own session and message window. */
export interface Worker {
  /** `w1`..`wN`, in the order of the tasks. */
  id: string;
  task: string;
  session: SessionManager;
  /** The worker's transcript: its task, and what it did so far. */
  window: Message[];
  /** Its report, once it finished. */
  report?: string;
}

/**
 * One `delegate` call of a parent turn: the parent's session (whose interrupts are the
 * workers' adopted questions), the interrupt → requester routing, and the workers.
 */
export interface Delegation {
  toolCallId: string;
  parent: SessionManager;
  /** Parent interrupt id → the worker id whose question it relays. */
  interruptToRequester: Record<string, string>;
  workers: Worker[];
}

/**
 * Runs a `delegate` call: its tool result when every worker finished, or the delegation
 * with the workers that wait on a person.
 */
export type DelegateHandler = (
  use: ToolUseBlock,
  signal: AbortSignal | undefined,
) => Promise<{ result: ToolResultBlock } | { waiting: Delegation }>;
