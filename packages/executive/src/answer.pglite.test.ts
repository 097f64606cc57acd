import { describeAnswersOn } from '../test/answer-suite.js';

// The answer flow on PGlite (one instance for this file).
await describeAnswersOn('pglite');
