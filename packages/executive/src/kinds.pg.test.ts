import { describeKindsOn } from '../test/kinds-suite.js';

// The run kinds and the worker on the PostgreSQL server (a database of its own).
await describeKindsOn('postgres');
