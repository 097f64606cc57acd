import { describeFlowsOn } from '../test/flows-suite.js';

// The flows on the PostgreSQL server (a database of its own).
await describeFlowsOn('postgres');
