import { describeQuestionsOn } from './questions-suite.js';

// The question API over the PostgreSQL server (a database of its own).
await describeQuestionsOn('postgres');
