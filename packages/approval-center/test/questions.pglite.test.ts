import { describeQuestionsOn } from './questions-suite.js';

// The question API over PGlite (one instance for this file).
await describeQuestionsOn('pglite');
