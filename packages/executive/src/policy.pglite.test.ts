import { describePolicyOn } from '../test/policy-suite.js';

// Policy decisions recorded on PGlite.
await describePolicyOn('pglite');
