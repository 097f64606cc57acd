import { describeKindsOn } from '../test/kinds-suite.js';

// The run kinds and the worker on PGlite (one instance for this file).
await describeKindsOn('pglite');
