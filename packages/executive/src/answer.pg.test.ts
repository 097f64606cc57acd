import { describeAnswersOn } from '../test/answer-suite.js';

// The answer flow on the PostgreSQL server (a database of its own).
await describeAnswersOn('postgres');
