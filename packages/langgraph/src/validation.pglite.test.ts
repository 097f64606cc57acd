import { openPgliteTarget } from '@internal/pg-test';
import { validateOn } from '../test/validation.js';

// LangGraph's validation suite on PGlite, one instance for the file.
await validateOn('@x/langgraph on PGlite', openPgliteTarget);
