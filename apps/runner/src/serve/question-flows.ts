import { ApprovalCenterError, type QuestionFlows } from '@x/approval-center';
import { assertSafeId } from '@x/continuation';
import { ExecutiveError } from '@x/executive';
import {
  AlreadyAnsweredError,
  answer,
  answerBatch,
  refusal,
  stopKnownConversation,
} from '../executive/index.js';
import type { Storage } from '../storage/index.js';

/**
 * The approval center's question flows as the runner's: its answer limit, telemetry and
 * words (a refusal names the command that lists the pending questions).
 */
export function runnerQuestionFlows(storage: Storage): QuestionFlows {
  return {
    answer: (token, given, by) => answer(storage, token, given, by).catch(alreadyAnswered),
    answerBatch: (given, by) => answerBatch(storage, given, by).catch(alreadyAnswered),
    async stop(conversationId) {
      // The id a person or script typed: refused like at the command line, never looked up.
      try {
        assertSafeId('conversation id', conversationId);
      } catch (error) {
        throw new ApprovalCenterError('invalid_request', (error as Error).message, {
          cause: error,
        });
      }
      return stopKnownConversation(storage, conversationId);
    },
    refusal: (error) => refusal(storage, error).catch(alreadyAnswered),
  };
}

/**
 * The runner's refusal of a question answered already (its words) as the executive's, which
 * the center answers 409 with who answered, how and when.
 */
function alreadyAnswered(error: unknown): never {
  if (!(error instanceof AlreadyAnsweredError)) throw error;
  const tokens = error.answered.map((p) => p.token);
  throw new ExecutiveError('already_answered', error.message, {
    tokens,
    answered: error.answered,
    cause: error,
  });
}
