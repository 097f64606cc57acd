import { describePolicyShadowOn } from '../test/policy-shadow-suite.js';

// The candidate (shadow) set and the loaded versions on the PostgreSQL server.
await describePolicyShadowOn('postgres');
