import { openServerTarget, serverForTests } from '@internal/pg-test';
import { describe, it } from 'vitest';
import { validateOn } from '../test/validation.js';

// LangGraph's validation suite on the PostgreSQL server, in a database of its own; in CI a
// missing server fails the file (serverForTests throws), elsewhere it is skipped.
const server = await serverForTests();
if (server === undefined) {
  describe.skip('@x/langgraph on PostgreSQL (no server answers)', () => {
    it('runs LangGraph’s validation suite', () => {});
  });
} else {
  await validateOn('@x/langgraph on PostgreSQL', () => openServerTarget(server));
}
