import { describePolicyShadowOn } from '../test/policy-shadow-suite.js';

// The candidate (shadow) set and the loaded versions on PGlite.
await describePolicyShadowOn('pglite');
