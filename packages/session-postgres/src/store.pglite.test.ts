import { describeStoreOn } from '../test/store-suite.js';

// The conformance suite and the SQL-specific tests on PGlite.
await describeStoreOn('pglite');
