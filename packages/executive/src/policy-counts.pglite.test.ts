import { describeDecisionCountsOn } from '../test/policy-counts-suite.js';

// What each rule decided, counted on PGlite.
await describeDecisionCountsOn('pglite');
