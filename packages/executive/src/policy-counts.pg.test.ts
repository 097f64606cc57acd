import { describeDecisionCountsOn } from '../test/policy-counts-suite.js';

// What each rule decided, counted on the PostgreSQL server (a database of its own).
await describeDecisionCountsOn('postgres');
