import { describeFlowsOn } from '../test/flows-suite.js';

// The flows on PGlite (one instance for this file).
await describeFlowsOn('pglite');
