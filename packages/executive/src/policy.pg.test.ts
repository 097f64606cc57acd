import { describePolicyOn } from '../test/policy-suite.js';

// Policy decisions recorded on the PostgreSQL server (a database of its own).
await describePolicyOn('postgres');
